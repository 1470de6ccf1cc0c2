// The extension's settings and how they become Warden's own configuration.
//
// Warden reads config.toml first; the editor's settings are laid over it
// (initializationOptions, then workspace/didChangeConfiguration). Only the
// settings the user actually set are sent, so an untouched VS Code does not
// override config.toml with VS Code's displayed defaults. The names on the
// right are config.Config's JSON names; the server rejects unknown ones.

/** One VS Code setting under "warden." and where it goes in Warden's config. */
export interface SettingSpec {
  /** Key below the "warden" section, as in package.json ("model.name"). */
  key: string;
  /** Path in Warden's config JSON (["model", "name"]). */
  path: string[];
  type: 'string' | 'boolean' | 'string[]' | 'network';
  /** Allowed values, for enumerated strings. */
  values?: readonly string[];
}

export const approvalPolicies = ['untrusted', 'on-failure', 'on-request', 'never'] as const;
export const sandboxModes = ['read-only', 'workspace-write', 'danger-full-access'] as const;
export const networkModes = ['off', 'ask', 'on'] as const;

export const settingSpecs: readonly SettingSpec[] = [
  { key: 'approvalPolicy', path: ['approvalPolicy'], type: 'string', values: [...approvalPolicies, 'granular'] },
  { key: 'granularReject', path: ['granularReject'], type: 'string[]' },
  { key: 'sandboxMode', path: ['sandboxMode'], type: 'string', values: sandboxModes },
  { key: 'networkAccess', path: ['networkAccess'], type: 'network', values: networkModes },
  { key: 'writableRoots', path: ['writableRoots'], type: 'string[]' },
  { key: 'approvalTimeout', path: ['approvalTimeout'], type: 'string' },
  { key: 'model.name', path: ['model', 'name'], type: 'string' },
  { key: 'model.baseURL', path: ['model', 'baseURL'], type: 'string' },
  { key: 'model.apiKey', path: ['model', 'apiKey'], type: 'string' },
  { key: 'model.riskSummary', path: ['model', 'riskSummary'], type: 'boolean' },
];

/** The settings object sent to the server, shaped like config.Config's JSON. */
export type ServerSettings = { [key: string]: unknown };

export interface Translation {
  settings: ServerSettings;
  /** The keys that were set (and sent), to notice when one is removed. */
  sent: string[];
  /** Settings that were set but unusable, each saying what to fix. */
  problems: string[];
}

/**
 * Builds the server settings from the values the user set. `valueOf` returns
 * the user's own value for a key, or undefined when the user did not set it.
 * An empty string counts as not set.
 */
export function toServerSettings(valueOf: (key: string) => unknown): Translation {
  const out: Translation = { settings: {}, sent: [], problems: [] };
  for (const spec of settingSpecs) {
    const value = valueOf(spec.key);
    if (value === undefined || value === null || value === '') continue;
    const problem = check(spec, value);
    if (problem) {
      out.problems.push(`warden.${spec.key}: ${problem}`);
      continue;
    }
    let node = out.settings;
    for (const part of spec.path.slice(0, -1)) {
      node = (node[part] ??= {}) as ServerSettings;
    }
    node[spec.path[spec.path.length - 1]] = value;
    out.sent.push(spec.key);
  }
  return out;
}

function check(spec: SettingSpec, value: unknown): string | undefined {
  switch (spec.type) {
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `want true or false, got ${JSON.stringify(value)}`;
    case 'string[]':
      return Array.isArray(value) && value.every((v) => typeof v === 'string')
        ? undefined
        : `want a list of strings, got ${JSON.stringify(value)}`;
    case 'network':
      // off, ask (through Warden's proxy, asked per host) or on; true and
      // false are still read as on and off.
      if (typeof value === 'boolean' || (typeof value === 'string' && networkModes.includes(value as typeof networkModes[number]))) {
        return undefined;
      }
      return `want "off", "ask" or "on", got ${JSON.stringify(value)}`;
    case 'string':
      if (typeof value !== 'string') return `want a string, got ${JSON.stringify(value)}`;
      if (spec.values && !spec.values.includes(value)) {
        return `${JSON.stringify(value)} is not one of ${spec.values.join(', ')}`;
      }
      return undefined;
  }
}

/**
 * Whether a settings change needs a fresh server rather than a
 * didChangeConfiguration: the server merges what it is sent over what it has,
 * so a setting the user removed can only fall back to config.toml on restart.
 */
export function needsRestart(before: readonly string[], after: readonly string[]): boolean {
  return before.some((key) => !after.includes(key));
}
