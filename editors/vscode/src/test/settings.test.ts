import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { needsRestart, settingSpecs, toServerSettings } from '../settings';

const from = (values: Record<string, unknown>) => (key: string) => values[key];

test('only the settings the user set are sent, nested as config.Config JSON', () => {
  const t = toServerSettings(from({
    approvalPolicy: 'untrusted',
    networkAccess: false,
    'model.name': 'qwen2.5-coder',
    'model.baseURL': 'http://127.0.0.1:11434/v1',
    writableRoots: ['/tmp/out'],
  }));
  assert.deepEqual(t.settings, {
    approvalPolicy: 'untrusted',
    networkAccess: false,
    writableRoots: ['/tmp/out'],
    model: { name: 'qwen2.5-coder', baseURL: 'http://127.0.0.1:11434/v1' },
  });
  assert.deepEqual(t.sent.sort(), ['approvalPolicy', 'model.baseURL', 'model.name', 'networkAccess', 'writableRoots']);
  assert.deepEqual(t.problems, []);
});

test('nothing set sends an empty object, so config.toml stays in charge', () => {
  const t = toServerSettings(from({ 'model.name': '', sandboxMode: undefined }));
  assert.deepEqual(t.settings, {});
  assert.deepEqual(t.sent, []);
});

test('a wrong value is left out and named, with what to write instead', () => {
  const t = toServerSettings(from({ sandboxMode: 'workspace', networkAccess: 'yes', writableRoots: [1], approvalPolicy: 'never' }));
  assert.deepEqual(t.settings, { approvalPolicy: 'never' });
  assert.equal(t.problems.length, 3);
  assert.match(t.problems[0], /^warden\.sandboxMode: "workspace" is not one of read-only, workspace-write, danger-full-access$/);
  assert.match(t.problems[1], /^warden\.networkAccess: want "off", "ask" or "on", got "yes"$/);
  assert.match(t.problems[2], /^warden\.writableRoots: want a list of strings/);
});

test('networkAccess takes a mode, or a boolean as before', () => {
  for (const v of ['off', 'ask', 'on', true, false]) {
    const t = toServerSettings(from({ networkAccess: v }));
    assert.deepEqual(t.settings, { networkAccess: v });
    assert.deepEqual(t.problems, []);
  }
});

test('removing a setting needs a restart; adding or changing one does not', () => {
  assert.equal(needsRestart(['approvalPolicy', 'model.name'], ['model.name']), true);
  assert.equal(needsRestart(['model.name'], ['model.name', 'sandboxMode']), false);
  assert.equal(needsRestart([], []), false);
});

test('every setting is contributed in package.json, application scoped so a workspace cannot loosen policy', () => {
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
  const props = pkg.contributes.configuration.properties;
  for (const spec of settingSpecs) {
    const prop = props[`warden.${spec.key}`];
    assert.ok(prop, `warden.${spec.key} is not contributed`);
    assert.equal(prop.scope, 'application', `warden.${spec.key} scope`);
    if (spec.values) {
      assert.deepEqual([...(prop.enum ?? [])].sort(), [...spec.values].sort(), `warden.${spec.key} enum`);
    }
  }
  assert.equal(props['warden.server.path'].scope, 'application');
});
