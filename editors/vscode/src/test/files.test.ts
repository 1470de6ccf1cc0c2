import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveServerPath } from '../serverpath';
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

test('the server path setting wins, with ~/ expanded', () => {
  const home = temp('home-');
  const bin = fakeBinary(join(home, 'bin'));
  assert.equal(resolveServerPath('~/bin/warden', { PATH: '' }, home), bin);
  assert.equal(resolveServerPath(bin, { PATH: '' }, home), bin);
});

test('a bad setting says what is wrong and what to do', () => {
  const home = temp('home-');
  const notExec = fakeBinary(join(home, 'x'), 0o644);
  assert.throws(() => resolveServerPath('bin/warden', {}, home), /give an absolute path/);
  assert.throws(() => resolveServerPath(notExec, {}, home), /not an executable file.*make build/);
  assert.throws(() => resolveServerPath(join(home, 'missing'), {}, home), /not an executable file/);
});

test('without a setting, warden is found on PATH, skipping directories without it', () => {
  const home = temp('home-');
  const bin = fakeBinary(join(home, 'b'));
  fakeBinary(join(home, 'c'), 0o644);
  assert.equal(resolveServerPath('  ', { PATH: [join(home, 'a'), join(home, 'c'), join(home, 'b')].join(':') }, home), bin);
  assert.throws(() => resolveServerPath(undefined, { PATH: join(home, 'a') }, home), /set warden\.server\.path/);
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
