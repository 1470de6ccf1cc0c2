// Which warden binary to start.

import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The binary to run: the warden.server.path setting when set (it must be an
 * executable file; "~/" is the home directory), else `warden` on PATH. Throws
 * an error that says what to set when neither exists.
 */
export function resolveServerPath(setting: string | undefined, env: NodeJS.ProcessEnv, home: string): string {
  const configured = setting?.trim();
  if (configured) {
    const path = configured.startsWith('~/') ? join(home, configured.slice(2)) : configured;
    if (!isAbsolute(path)) {
      throw new Error(`warden.server.path is "${configured}": give an absolute path to the warden binary.`);
    }
    if (!executable(path)) {
      throw new Error(`warden.server.path is "${configured}", which is not an executable file. Build it with \`make build\` (bin/warden) or fix the setting.`);
    }
    return path;
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, 'warden'))) return join(dir, 'warden');
  }
  throw new Error('No warden binary: set warden.server.path to it, or put `warden` on PATH (`make install` puts it in ~/.local/bin).');
}
