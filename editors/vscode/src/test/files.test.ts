import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { ServerPathInputs, binaryName, bundledPath, resolveServerPath } from '../serverpath';
import { newestTranscript, stateDir } from '../transcript';

const temps: string[] = [];
after(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));

function temp(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  temps.push(d);
  return d;
}

function fakeBinary(dir: string, mode = 0o755): string {
  mkdirSync(dir, { recursive: true });
  const p = join(dir, 'warden');
  writeFileSync(p, '#!/bin/sh\n');
  chmodSync(p, mode);
  return p;
}

/** Resolves with nothing bundled, no setting and an empty PATH, but for `over`. */
function resolve(home: string, over: Partial<ServerPathInputs>): string {
  return resolveServerPath({
    setting: undefined,
    bundled: bundledPath(join(home, 'extension'), 'linux'),
    env: { PATH: '' },
    home,
    platform: 'linux',
    ...over,
  });
}

test('the platform .vsix\'s own binary is found with no setting, before PATH', () => {
  const home = temp('home-');
  const bundled = fakeBinary(join(home, 'extension', 'dist', 'bin'));
  const onPath = fakeBinary(join(home, 'path'));
  assert.equal(bundledPath(join(home, 'extension'), 'linux'), bundled);
  assert.equal(resolve(home, { env: { PATH: join(home, 'path') } }), bundled);
  assert.equal(resolve(home, { setting: '', env: { PATH: join(home, 'path') } }), bundled);
  assert.notEqual(bundled, onPath);
});

test('a bundled binary unzipped without its executable bit gets it back', () => {
  const home = temp('home-');
  const bundled = fakeBinary(join(home, 'extension', 'dist', 'bin'), 0o644);
  assert.equal(resolve(home, {}), bundled);
  assert.equal(statSync(bundled).mode & 0o777, 0o755);
});

test('the server path setting wins over the bundled binary, with ~/ expanded', () => {
  const home = temp('home-');
  fakeBinary(join(home, 'extension', 'dist', 'bin'));
  const bin = fakeBinary(join(home, 'bin'));
  assert.equal(resolve(home, { setting: '~/bin/warden' }), bin);
  assert.equal(resolve(home, { setting: bin }), bin);
});

test('a bad setting says what is wrong and what to do, even with a binary bundled', () => {
  const home = temp('home-');
  fakeBinary(join(home, 'extension', 'dist', 'bin'));
  const notExec = fakeBinary(join(home, 'x'), 0o644);
  assert.throws(() => resolve(home, { setting: 'bin/warden' }), /give an absolute path/);
  assert.throws(() => resolve(home, { setting: notExec }), /not an executable file.*make build/);
  assert.throws(() => resolve(home, { setting: join(home, 'missing') }), /not an executable file/);
});

test('with nothing bundled and no setting, warden is found on PATH, skipping directories without it', () => {
  const home = temp('home-');
  const bin = fakeBinary(join(home, 'b'));
  fakeBinary(join(home, 'c'), 0o644);
  const path = [join(home, 'a'), join(home, 'c'), join(home, 'b')].join(delimiter);
  assert.equal(resolve(home, { setting: '  ', env: { PATH: path } }), bin);
});

test('no binary anywhere: the message names each place looked and what to do', () => {
  const home = temp('home-');
  const bundled = bundledPath(join(home, 'extension'), 'linux');
  assert.throws(() => resolve(home, { env: { PATH: join(home, 'a') } }), (err: Error) => {
    assert.ok(err.message.includes(bundled), err.message);
    assert.match(err.message, /warden\.server\.path setting \(not set\)/);
    assert.match(err.message, /warden on PATH \(1 directories\)/);
    assert.match(err.message, /Install the \.vsix for your platform \(make vsix\), or set warden\.server\.path/);
    return true;
  });
});

test('on Windows the binary is warden.exe, bundled and on PATH', () => {
  assert.equal(binaryName('win32'), 'warden.exe');
  assert.equal(bundledPath('ext', 'win32'), join('ext', 'dist', 'bin', 'warden.exe'));
  const home = temp('home-');
  fakeBinary(join(home, 'path'));
  assert.throws(() => resolve(home, { platform: 'win32', env: { PATH: join(home, 'path') } }), /warden\.exe on PATH/);
});

test('state dir follows XDG_STATE_HOME like the server', () => {
  assert.equal(stateDir({ XDG_STATE_HOME: '/s' }, '/h'), '/s/warden');
  assert.equal(stateDir({ XDG_STATE_HOME: 'relative' }, '/h'), '/h/.local/state/warden');
  assert.equal(stateDir({}, '/h'), '/h/.local/state/warden');
});

test('the newest Markdown transcript is found below the state dir', async () => {
  const dir = temp('state-');
  mkdirSync(join(dir, 'sessions', 'old'), { recursive: true });
  const old = join(dir, 'sessions', 'old', 'a.md');
  const newer = join(dir, 'sessions', 'b.md');
  writeFileSync(old, '# a');
  writeFileSync(newer, '# b');
  writeFileSync(join(dir, 'sessions', 'c.jsonl'), '{}');
  utimesSync(old, new Date(1000), new Date(1000));
  utimesSync(newer, new Date(2000), new Date(2000));
  assert.equal(await newestTranscript(dir), newer);
  assert.equal(await newestTranscript(join(dir, 'nothing')), undefined);
});
