import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiKey, KeySetting, Secrets, keyVariable, secretName, serverEnv } from '../apikey';
import { toServerSettings } from '../settings';

/** Secret storage in memory. */
class FakeSecrets implements Secrets {
  readonly values = new Map<string, string>();
  failStore = false;
  async get(key: string) { return this.values.get(key); }
  async store(key: string, value: string) {
    if (this.failStore) throw new Error('keychain locked');
    this.values.set(key, value);
  }
  async delete(key: string) { this.values.delete(key); }
}

/** The warden.model.apiKey setting: it records every removal. */
class FakeSetting implements KeySetting {
  removals = 0;
  constructor(public stored: string | undefined) {}
  value() { return this.stored; }
  async remove() { this.stored = undefined; this.removals++; }
}

test('Set API Key stores the key in secret storage and nothing in settings', async () => {
  const secrets = new FakeSecrets();
  const setting = new FakeSetting(undefined);
  const key = new ApiKey(secrets, setting);
  await key.set('  sk-typed \n');
  assert.equal(secrets.values.get(secretName), 'sk-typed');
  assert.equal(await key.get(), 'sk-typed');
  assert.equal(setting.stored, undefined);
  assert.equal(setting.removals, 0);
  await assert.rejects(key.set('   '), /empty/);
});

const hostEnv = { HOME: '/home/u', PATH: '/usr/bin', XDG_STATE_HOME: '/s', OPENAI_API_KEY: 'sk-from-shell' };

test('the stored key reaches warden serve in its environment, never in its settings', async () => {
  const key = new ApiKey(new FakeSecrets(), new FakeSetting(undefined));
  await key.set('sk-secret');
  // The rest of the environment stays: the server needs HOME, PATH and XDG_*.
  assert.deepEqual(serverEnv(hostEnv, await key.get()), { ...hostEnv, [keyVariable]: 'sk-secret' });
  assert.equal(hostEnv.OPENAI_API_KEY, 'sk-from-shell', 'the extension host\'s own environment is left alone');
  assert.equal(keyVariable, 'OPENAI_API_KEY');
  // What is sent as initializationOptions comes from settings.json alone.
  const sent = JSON.stringify(toServerSettings(() => undefined));
  assert.ok(!sent.includes('sk-secret'), sent);
});

test('no key stored: the server gets the environment as it is, and Clear removes a stored one', async () => {
  const secrets = new FakeSecrets();
  const key = new ApiKey(secrets, new FakeSetting(undefined));
  assert.deepEqual(serverEnv(hostEnv, await key.get()), hostEnv);
  await key.set('sk-old');
  await key.clear();
  assert.equal(await key.get(), undefined);
  assert.deepEqual(serverEnv(hostEnv, await key.get()), hostEnv);
  secrets.values.set(secretName, '');
  assert.equal(await key.get(), undefined, 'an empty stored key is no key');
});

test('a key in settings.json moves to secret storage and leaves settings', async () => {
  const secrets = new FakeSecrets();
  const setting = new FakeSetting('sk-in-settings');
  const key = new ApiKey(secrets, setting);
  assert.equal(key.inSettings(), true);
  assert.equal(await key.migrate(), true);
  assert.equal(secrets.values.get(secretName), 'sk-in-settings');
  assert.equal(setting.stored, undefined);
  assert.equal(key.inSettings(), false);
  assert.equal(await key.migrate(), false, 'nothing left to move');
});

test('a failed move leaves the key in settings rather than nowhere', async () => {
  const secrets = new FakeSecrets();
  secrets.failStore = true;
  const setting = new FakeSetting('sk-in-settings');
  await assert.rejects(new ApiKey(secrets, setting).migrate(), /keychain locked/);
  assert.equal(setting.stored, 'sk-in-settings');
  assert.equal(setting.removals, 0);
});

test('setting a key removes an older one from settings.json, which would outrank it', async () => {
  const secrets = new FakeSecrets();
  const setting = new FakeSetting('sk-old');
  await new ApiKey(secrets, setting).set('sk-new');
  assert.equal(secrets.values.get(secretName), 'sk-new');
  assert.equal(setting.stored, undefined);
});
