import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProgressTracker, statusView } from '../status';

const status = {
  policy: { approvalPolicy: 'on-request', sandboxMode: 'workspace-write', networkAccess: false, writableRoots: [] },
  model: { configured: true, name: 'qwen', baseURL: 'http://127.0.0.1:1/v1' },
};

test('idle: the policy at a glance', () => {
  const v = statusView('running', status, undefined);
  assert.equal(v.text, '$(shield) on-request · workspace-write · net off');
  assert.match(v.tooltip, /Approval policy: on-request/);
  assert.match(v.tooltip, /Network from sandboxed commands: blocked/);
  assert.match(v.tooltip, /Model: qwen at http:\/\/127\.0\.0\.1:1\/v1/);
  assert.equal(v.alarm, false);
});

test('a running job shows its title and step before the policy', () => {
  const p = new ProgressTracker();
  assert.equal(p.update(1, { kind: 'begin', title: 'Warden: Running the agent' }), true);
  p.update(1, { kind: 'report', message: 'reading main.go', percentage: 20 });
  const v = statusView('running', status, p.current());
  assert.equal(v.text, '$(sync~spin) Running the agent: reading main.go 20% · on-request · workspace-write · net off');
  assert.match(v.tooltip, /^Running: Running the agent: reading main.go 20%/);
});

test('progress: latest job wins, end removes it, reports for unknown tokens are ignored', () => {
  const p = new ProgressTracker();
  p.update('a', { kind: 'begin', title: 'first' });
  p.update('b', { kind: 'begin', title: 'second' });
  assert.equal(p.current()?.title, 'second');
  assert.equal(p.update('zzz', { kind: 'report', message: 'x' }), false);
  assert.equal(p.tokenFor('first'), 'a');
  assert.equal(p.tokenFor('nothing'), undefined);
  p.update('b', { kind: 'end' });
  assert.equal(p.current()?.title, 'first');
  p.update('a', { kind: 'end' });
  assert.equal(p.current(), undefined);
  assert.equal(p.size, 0);
});

test('a long job title is shortened; no sandbox and no asking raises the alarm', () => {
  const p = new ProgressTracker();
  p.update(1, { kind: 'begin', title: 'x'.repeat(80) });
  const loose = { policy: { approvalPolicy: 'never', sandboxMode: 'danger-full-access', networkAccess: true } };
  const v = statusView('running', loose, p.current());
  assert.match(v.text, /^\$\(sync~spin\) x{39}… · never · danger-full-access · net on$/);
  assert.equal(v.alarm, true);
});

test('network ask shows as such; a server without the mode falls back to networkAccess', () => {
  const ask = statusView('running', { policy: { approvalPolicy: 'on-request', sandboxMode: 'workspace-write', networkAccess: false, network: 'ask' } }, undefined);
  assert.match(ask.text, / · net ask$/);
  assert.match(ask.tooltip, /Network from sandboxed commands: asked per host, through Warden's proxy/);
  const off = statusView('running', { policy: { approvalPolicy: 'on-request', sandboxMode: 'workspace-write', networkAccess: false, network: 'off' } }, undefined);
  assert.match(off.text, / · net off$/);
  assert.match(off.tooltip, /Network from sandboxed commands: blocked/);
  const old = statusView('running', { policy: { approvalPolicy: 'on-request', sandboxMode: 'workspace-write', networkAccess: true } }, undefined);
  assert.match(old.text, / · net on$/);
});

test('starting and stopped states', () => {
  assert.equal(statusView('starting', undefined, undefined).text, '$(loading~spin) Warden');
  const stopped = statusView('stopped', status, undefined);
  assert.equal(stopped.text, '$(error) Warden: stopped');
  assert.equal(stopped.alarm, true);
});
