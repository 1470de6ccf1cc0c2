// Which warden binary to start.

import { accessSync, chmodSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return isFile(path);
  } catch {
    return false;
  }
}

/** The binary's file name on this platform. */
export function binaryName(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'warden.exe' : 'warden';
}

/** Where a platform .vsix carries its binary (scripts/vsix.sh puts it there). */
export function bundledPath(extensionDir: string, platform: NodeJS.Platform): string {
  return join(extensionDir, 'dist', 'bin', binaryName(platform));
}

export interface ServerPathInputs {
  /** The user's own warden.server.path, if set. */
  setting: string | undefined;
  /** The binary inside the installed extension (see bundledPath). */
  bundled: string;
  env: NodeJS.ProcessEnv;
  home: string;
  platform: NodeJS.Platform;
}

/**
 * The binary to run: the warden.server.path setting when set (it must be an
 * executable file; "~/" is the home directory), else the binary the platform
 * .vsix carries, else warden on PATH. Throws an error that names every place
 * it looked when none holds one.
 */
export function resolveServerPath(inputs: ServerPathInputs): string {
  const configured = inputs.setting?.trim();
  if (configured) return fromSetting(configured, inputs.home);
  if (bundledExecutable(inputs.bundled)) return inputs.bundled;
  const name = binaryName(inputs.platform);
  const dirs = (inputs.env.PATH ?? inputs.env.Path ?? '').split(delimiter).filter(Boolean);
  for (const dir of dirs) {
    if (executable(join(dir, name))) return join(dir, name);
  }
  throw new Error(
    `No warden binary: looked for ${inputs.bundled} (a .vsix built for this platform carries it), ` +
    `the warden.server.path setting (not set) and ${name} on PATH (${dirs.length} directories). ` +
    'Install the .vsix for your platform (make vsix), or set warden.server.path to a warden binary (make build: bin/warden).',
  );
}

function fromSetting(configured: string, home: string): string {
  const path = configured.startsWith('~/') ? join(home, configured.slice(2)) : configured;
  if (!isAbsolute(path)) {
    throw new Error(`warden.server.path is "${configured}": give an absolute path to the warden binary.`);
  }
  if (!executable(path)) {
    throw new Error(`warden.server.path is "${configured}", which is not an executable file. Build it with \`make build\` (bin/warden) or fix the setting.`);
  }
  return path;
}

/**
 * Whether the bundled binary is there and runnable. An unzip that dropped
 * the executable bit (the .vsix records it) gets it back: the file is the
 * extension's own.
 */
function bundledExecutable(path: string): boolean {
  if (!isFile(path)) return false;
  if (executable(path)) return true;
  try {
    chmodSync(path, 0o755);
  } catch {
    return false;
  }
  return executable(path);
}
