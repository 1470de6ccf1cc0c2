import { test } from 'node:test';
import assert from 'node:assert/strict';
import { announceAskAgent, needsInstruction, withInstruction } from '../askagent';

const range = { start: { line: 1, character: 0 }, end: { line: 3, character: 0 } };
// The arguments of the server's "Warden: Ask agent…" action (lsp/agent_actions.go).
const ask = [{ instruction: '', mode: 'ask', uri: 'file:///ws/calc.go', range }];

test('the capability is announced under experimental, beside what is already there', () => {
  const caps: { experimental?: unknown } = {};
  announceAskAgent(caps);
  assert.deepEqual(caps.experimental, { wardenAskAgent: true });
  const other: { experimental?: unknown } = { experimental: { somethingElse: 1 } };
  announceAskAgent(other);
  assert.deepEqual(other.experimental, { somethingElse: 1, wardenAskAgent: true });
});

test('only an agent run in ask (or no) mode without words asks the user', () => {
  assert.equal(needsInstruction('warden.agent.run', ask), true);
  assert.equal(needsInstruction('warden.agent.run', [{ uri: 'file:///ws/a.go' }]), true);
  assert.equal(needsInstruction('warden.agent.run', [{ mode: 'ask', instruction: '   ' }]), true);
  assert.equal(needsInstruction('warden.agent.run', [{ mode: 'ask', instruction: 'rename it' }]), false);
  for (const mode of ['fix', 'explain', 'tests', 'comment']) {
    assert.equal(needsInstruction('warden.agent.run', [{ mode, uri: 'file:///ws/a.go', range }]), false, mode);
  }
  assert.equal(needsInstruction('warden.exec', [{ command: 'ls' }]), false);
  assert.equal(needsInstruction('warden.agent.run', []), false);
  assert.equal(needsInstruction('warden.agent.run', ['ask']), false);
});

test('the typed words fill the instruction; uri, range and mode stay as the server sent them', () => {
  assert.deepEqual(withInstruction(ask, '  Rename add to sum \n'), [
    { instruction: 'Rename add to sum', mode: 'ask', uri: 'file:///ws/calc.go', range },
  ]);
  assert.equal(ask[0].instruction, '', 'the server\'s arguments are not modified');
});

test('Escape or an empty answer sends nothing', () => {
  assert.equal(withInstruction(ask, undefined), undefined);
  assert.equal(withInstruction(ask, ''), undefined);
  assert.equal(withInstruction(ask, '   '), undefined);
});
