import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Problem, explainInstruction, fixInstruction, looksLikePatch } from '../instructions';

const at = (line: number, a = 0, b = 5) => ({ start: { line, character: a }, end: { line, character: b } });
const problems: Problem[] = [
  { range: at(9), message: 'unused variable x', severity: 'warning', source: 'go vet' },
  { range: at(2), message: 'undefined: foo', severity: 'error', source: 'compiler' },
  { range: at(20), message: 'consider a constant', severity: 'hint' },
];

test('fix lists errors first, then warnings, with 1-based lines; hints are left out', () => {
  assert.equal(fixInstruction('main.go', problems),
    'Fix these problems in main.go:\n- line 3: error (compiler): undefined: foo\n- line 10: warning (go vet): unused variable x');
});

test('fix keeps to the selection when it holds problems, else takes the whole file', () => {
  assert.equal(fixInstruction('main.go', problems, at(9, 0, 2)),
    'Fix these problems in main.go:\n- line 10: warning (go vet): unused variable x');
  assert.match(fixInstruction('main.go', problems, at(30))!, /line 3: error/);
});

test('nothing to fix when only hints and infos are left', () => {
  assert.equal(fixInstruction('a.go', [problems[2]]), undefined);
  assert.equal(fixInstruction('a.go', []), undefined);
});

test('explain names the lines of a selection, or the file', () => {
  assert.equal(explainInstruction('a.go'), 'Explain what a.go does.');
  assert.equal(explainInstruction('a.go', at(4, 2, 2)), 'Explain what a.go does.');
  assert.equal(explainInstruction('a.go', { start: { line: 4, character: 0 }, end: { line: 11, character: 3 } }),
    'Explain the code in a.go from line 5 to line 12.');
});

test('patches are recognised in both formats; other text is not', () => {
  assert.equal(looksLikePatch('*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n'), true);
  assert.equal(looksLikePatch('  *** Begin Patch\n'), true);
  assert.equal(looksLikePatch('diff --git a/x b/x\nindex 1..2\n'), true);
  assert.equal(looksLikePatch('Fix:\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n'), true);
  assert.equal(looksLikePatch('--- a heading\nsome text\n'), false);
  assert.equal(looksLikePatch('hello world'), false);
  assert.equal(looksLikePatch(''), false);
});
