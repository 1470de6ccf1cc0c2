import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answer, dialogFor, isApproval, riskLevel } from '../approval';

const actions = [
  { title: 'Allow once' },
  { title: 'Allow for session' },
  { title: 'Always allow `git push`', amendment: ['git', 'push'] },
  { title: 'Deny' },
  { title: 'Deny and stop' },
];

const message = [
  'Run `git push --force origin main`?',
  'in /home/me/proj, outside the sandbox',
  'Why: the agent wants to publish the fix',
  'Risk: high: rewrites remote history (force push)',
].join('\n');

test('an approval becomes a modal with the first line as heading and the risk facts as detail', () => {
  const d = dialogFor({ type: 2, message, actions });
  assert.equal(d.message, 'Run `git push --force origin main`? [high risk]');
  assert.equal(d.detail, 'in /home/me/proj, outside the sandbox\nWhy: the agent wants to publish the fix\nRisk: high: rewrites remote history (force push)');
  assert.equal(d.risk, 'high');
  assert.equal(d.severity, 'error', 'high risk is shown as an error dialog');
});

test('a low-risk command keeps the server order, its first action the default, and Deny closes the dialog', () => {
  const d = dialogFor({ type: 3, message: 'Warden: run `make build`?\nin /home/me/proj\nRisk: low: runs make', actions });
  assert.deepEqual(d.buttons.map((b) => b.title), actions.map((a) => a.title));
  assert.deepEqual(d.buttons.filter((b) => b.closes).map((b) => b.title), ['Deny'], 'Deny is the only closer: VS Code adds no Cancel');
});

test('a patch dialog that opens the review is an approval; Review… is its default', () => {
  const review = ['Review…', 'Allow for session', 'Deny', 'Deny and stop'].map((title) => ({ title }));
  const params = { type: 3, message: 'Warden: apply a patch to 1 file: notes.txt?\nRisk: low: edits 1 file', actions: review };
  assert.equal(isApproval(params), true);
  const d = dialogFor(params);
  assert.equal(d.buttons[0].title, 'Review…');
  assert.equal(d.severity, 'warning');
});

test('medium risk: Enter denies (Deny and stop first), Deny closes', () => {
  const d = dialogFor({ type: 2, message: 'Warden: run `npm install left-pad`?\nRisk: medium: installs a package', actions });
  assert.deepEqual(d.buttons.map((b) => b.title), ['Deny and stop', 'Allow once', 'Allow for session', 'Always allow `git push`', 'Deny']);
  assert.equal(d.buttons.find((b) => b.closes)?.title, 'Deny');
});

test('a grant dialog keeps its text whole and every action the server sends, in order', () => {
  const grant = [
    'Warden: the sandbox blocked `./build.sh`. Retry it in the sandbox with write access to /var/tmp/out?',
    'in /home/me/proj',
    'Sandbox: runs sandboxed (workspace-write, no network, credential stores hidden) plus write access to /var/tmp/out, nothing else',
    '"Run without sandbox" runs it with NO sandbox at all',
    'Risk: medium: grants write access to /var/tmp/out (outside the writable roots; protected entries inside stay read-only)',
  ].join('\n');
  const retry = ['Allow once', 'Allow for session', 'Run without sandbox', 'Deny', 'Deny and stop'].map((title) => ({ title }));
  const d = dialogFor({ type: 2, message: grant, actions: retry });
  assert.equal(d.message, 'Warden: the sandbox blocked `./build.sh`. Retry it in the sandbox with write access to /var/tmp/out? [medium risk]');
  assert.equal(d.detail, grant.split('\n').slice(1).join('\n'));
  assert.deepEqual(d.buttons.map((b) => b.title), ['Deny and stop', 'Allow once', 'Allow for session', 'Run without sandbox', 'Deny'], 'Enter never allows a grant');
  const lowGrant = dialogFor({ type: 3, message: 'Warden: run `touch /srv/a` in the sandbox with write access to /srv?\nRisk: low: x', actions: retry });
  assert.equal(lowGrant.buttons[0].title, 'Deny and stop', 'a grant, whatever its level, is not allowed by Enter');
  assert.deepEqual(answer(d, 'Run without sandbox'), { title: 'Run without sandbox' });
});

test('high risk: Deny and stop is first, so Enter denies; Deny closes the dialog', () => {
  const high = ['Deny', 'Allow once', 'Run without sandbox', 'Deny and stop'].map((title) => ({ title }));
  const d = dialogFor({ type: 1, message: 'Warden: retry `cat ~/.ssh/id`?\nRisk: high: grants read access to ~/.ssh/id', actions: high });
  assert.deepEqual(d.buttons.map((b) => b.title), ['Deny and stop', 'Deny', 'Allow once', 'Run without sandbox']);
  assert.equal(d.buttons.find((b) => b.closes)?.title, 'Deny');
  assert.equal(d.severity, 'error');
  assert.deepEqual(answer(d, 'Deny'), { title: 'Deny' });
});

test('the picked action goes back as the server sent it; a dismissed dialog is null (deny)', () => {
  const d = dialogFor({ type: 2, message, actions });
  assert.deepEqual(answer(d, 'Always allow `git push`'), { title: 'Always allow `git push`', amendment: ['git', 'push'] });
  assert.equal(answer(d, undefined), null);
  assert.equal(answer(d, 'Something else'), null);
});

test('risk level is read from the message wherever it is stated', () => {
  assert.equal(riskLevel('Risk: medium — writes 3 files'), 'medium');
  assert.equal(riskLevel('risk low'), 'low');
  assert.equal(riskLevel('RISK (HIGH): deletes the repository'), 'high');
  assert.equal(riskLevel('Delete the high score table?'), undefined);
});

test('a heading that already names the level is not tagged again; low risk stays a warning', () => {
  const d = dialogFor({ type: 3, message: 'Low risk: run `ls`\nRisk: low', actions });
  assert.equal(d.message, 'Low risk: run `ls`');
  assert.equal(d.severity, 'warning');
});

test('leading blank lines and CRLF are tolerated; non-approval requests are recognised', () => {
  const d = dialogFor({ type: 3, message: '\r\n\r\nRestart?\r\nthe config changed', actions: [{ title: 'Yes' }, { title: 'No' }] });
  assert.equal(d.message, 'Restart?');
  assert.equal(d.detail, 'the config changed');
  assert.equal(d.severity, 'info');
  assert.equal(isApproval({ type: 3, message: 'x', actions: [{ title: 'Yes' }] }), false);
  assert.equal(isApproval({ type: 3, message: 'x', actions }), true);
});
