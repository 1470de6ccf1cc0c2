// The model's API key, kept in VS Code's secret storage (the OS keychain),
// never in settings.json, which is plain text and may be synced. It reaches
// `warden serve` in OPENAI_API_KEY, the variable Warden reads for it
// (docs/configuration.md): not in initializationOptions, which the LSP trace
// logs. Warden drops the variable from the commands it runs (a *KEY* name).

/** The key's name in secret storage. */
export const secretName = 'warden.model.apiKey';
/** The environment variable `warden serve` reads the key from. */
export const keyVariable = 'OPENAI_API_KEY';

/** VS Code's SecretStorage, as much of it as the key needs. */
export interface Secrets {
  get(key: string): PromiseLike<string | undefined>;
  store(key: string, value: string): PromiseLike<void>;
  delete(key: string): PromiseLike<void>;
}

/**
 * The legacy warden.model.apiKey setting: its value can be read and removed,
 * never written, so no path here can put a key into settings.json.
 */
export interface KeySetting {
  value(): string | undefined;
  remove(): PromiseLike<void>;
}

/**
 * The environment to start `warden serve` in: the extension host's own, with
 * the key when one is stored. Whole, since the language client hands an
 * executable's env to spawn as it is: the key alone would drop HOME and PATH.
 */
export function serverEnv(base: NodeJS.ProcessEnv, key: string | undefined): NodeJS.ProcessEnv {
  return key ? { ...base, [keyVariable]: key } : base;
}

export class ApiKey {
  constructor(private readonly secrets: Secrets, private readonly setting: KeySetting) {}

  /** The stored key, or undefined when none is stored. */
  async get(): Promise<string | undefined> {
    return (await this.secrets.get(secretName)) || undefined;
  }

  /**
   * Stores the key. A key still in settings.json is removed, since the
   * editor's settings outrank the environment: it would otherwise win.
   */
  async set(key: string): Promise<void> {
    const trimmed = key.trim();
    if (!trimmed) throw new Error('the API key is empty');
    await this.secrets.store(secretName, trimmed);
    if (this.inSettings()) await this.setting.remove();
  }

  async clear(): Promise<void> {
    await this.secrets.delete(secretName);
  }

  /** Whether settings.json still holds a key. */
  inSettings(): boolean {
    return Boolean(this.setting.value()?.trim());
  }

  /**
   * Moves the key from settings.json into secret storage: stored first, so
   * a failure leaves it where it was rather than nowhere. False when
   * settings.json holds none.
   */
  async migrate(): Promise<boolean> {
    const key = this.setting.value()?.trim();
    if (!key) return false;
    await this.set(key);
    return true;
  }
}
