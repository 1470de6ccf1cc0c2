import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Problem, fixRange, looksLikePatch, problemsToFix, toDiagnostic } from '../instructions';

const at = (line: number, a = 0, b = 5) => ({ start: { line, character: a }, end: { line, character: b } });
const problems: Problem[] = [
  { range: at(9), message: 'unused variable x', severity: 'warning', source: 'go vet' },
  { range: at(2), message: 'undefined: foo', severity: 'error', source: 'compiler' },
  { range: at(20), message: 'consider a constant', severity: 'hint' },
];

test('fix takes errors first, then warnings, by line; hints and infos are left out', () => {
  assert.deepEqual(problemsToFix(problems).map((p) => p.message), ['undefined: foo', 'unused variable x']);
});

test('fix keeps to the selection when it holds problems, else takes the whole file', () => {
  assert.deepEqual(problemsToFix(problems, at(9, 0, 2)).map((p) => p.message), ['unused variable x']);
  assert.deepEqual(problemsToFix(problems, at(30)).map((p) => p.message), ['undefined: foo', 'unused variable x']);
  // A selection holding only a hint counts as holding nothing to fix.
  assert.deepEqual(problemsToFix(problems, at(20)).map((p) => p.message), ['undefined: foo', 'unused variable x']);
  assert.deepEqual(problemsToFix([problems[2]]), []);
});

test('problems go to the server as LSP diagnostics, pointing the agent at their lines', () => {
  assert.deepEqual(toDiagnostic(problems[1]), { range: at(2), message: 'undefined: foo', severity: 1, source: 'compiler' });
  assert.deepEqual(fixRange(problemsToFix(problems)), { start: { line: 2, character: 0 }, end: { line: 9, character: 0 } });
  assert.deepEqual(fixRange([], at(4)), at(4));
  assert.equal(fixRange([]), undefined);
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
