// The instructions the palette commands give the agent (warden.agent.run).

export interface Position { line: number; character: number }
export interface Range { start: Position; end: Position }

/** A diagnostic as the Fix command reads it (0-based positions). */
export interface Problem {
  range: Range;
  message: string;
  severity: 'error' | 'warning' | 'info' | 'hint';
  source?: string;
}

/** warden.agent.run's argument. */
export interface AgentRun {
  /** What to do; with a mode, added to the mode's own instruction. */
  instruction?: string;
  /** A built-in instruction on the server: fix, explain, tests, comment. */
  mode?: 'fix' | 'explain' | 'tests' | 'comment';
  uri?: string;
  range?: Range;
  diagnostics?: ReturnType<typeof toDiagnostic>[];
}

function overlaps(a: Range, b: Range): boolean {
  const before = (p: Position, q: Position) => p.line < q.line || (p.line === q.line && p.character < q.character);
  return !before(a.end, b.start) && !before(b.end, a.start);
}

/**
 * The problems the Fix command hands the agent: the errors and warnings in
 * the selection (or in the whole file when the selection is empty or holds
 * none), errors first, then by line. Empty when there is nothing to fix.
 */
export function problemsToFix(problems: Problem[], selection?: Range): Problem[] {
  const order = { error: 0, warning: 1, info: 2, hint: 3 };
  let chosen = selection ? problems.filter((p) => overlaps(p.range, selection)) : problems;
  if (!chosen.some(serious)) chosen = problems;
  return chosen.filter(serious)
    .sort((a, b) => order[a.severity] - order[b.severity] || a.range.start.line - b.range.start.line);
}

function serious(p: Problem): boolean {
  return p.severity === 'error' || p.severity === 'warning';
}

/** A problem as an LSP Diagnostic, for warden.agent.run's diagnostics. */
export function toDiagnostic(p: Problem): { range: Range; message: string; severity: number; source?: string } {
  return { range: p.range, message: p.message, severity: { error: 1, warning: 2, info: 3, hint: 4 }[p.severity], source: p.source };
}

/**
 * The range of whole lines the agent is pointed at for the Fix command: the
 * selection, else from the first to the last problem.
 */
export function fixRange(problems: Problem[], selection?: Range): Range | undefined {
  if (selection) return selection;
  if (problems.length === 0) return undefined;
  const first = Math.min(...problems.map((p) => p.range.start.line));
  const last = Math.max(...problems.map((p) => p.range.end.line));
  return { start: { line: first, character: 0 }, end: { line: last, character: 0 } };
}

/**
 * Whether text is a patch warden.patch.apply reads: the Codex format or a
 * unified/git diff (possibly after a few lines of prose, as in a mail).
 */
export function looksLikePatch(text: string): boolean {
  if (/^\s*\*\*\* Begin Patch\b/.test(text) || /^diff --git /m.test(text)) return true;
  return /^--- \S/m.test(text) && /^\+\+\+ \S/m.test(text) && /^@@ -\d/m.test(text);
}
