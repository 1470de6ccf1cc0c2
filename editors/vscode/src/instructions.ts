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
  instruction: string;
  uri?: string;
  range?: Range;
}

function overlaps(a: Range, b: Range): boolean {
  const before = (p: Position, q: Position) => p.line < q.line || (p.line === q.line && p.character < q.character);
  return !before(a.end, b.start) && !before(b.end, a.start);
}

/**
 * The Fix instruction: the problems in the selection (or in the whole file
 * when the selection is empty or holds none), errors first, each with its
 * 1-based line. Undefined when there is nothing to fix.
 */
export function fixInstruction(file: string, problems: Problem[], selection?: Range): string | undefined {
  const order = { error: 0, warning: 1, info: 2, hint: 3 };
  let chosen = selection ? problems.filter((p) => overlaps(p.range, selection)) : problems;
  if (chosen.length === 0) chosen = problems;
  chosen = chosen.filter((p) => p.severity === 'error' || p.severity === 'warning');
  if (chosen.length === 0) return undefined;
  chosen = [...chosen].sort((a, b) => order[a.severity] - order[b.severity] || a.range.start.line - b.range.start.line);
  const list = chosen.map((p) => `- line ${p.range.start.line + 1}: ${p.severity}${p.source ? ` (${p.source})` : ''}: ${p.message}`);
  return `Fix these problems in ${file}:\n${list.join('\n')}`;
}

/** The Explain instruction, for the selection or the whole file. */
export function explainInstruction(file: string, selection?: Range): string {
  if (!selection || (selection.start.line === selection.end.line && selection.start.character === selection.end.character)) {
    return `Explain what ${file} does.`;
  }
  return `Explain the code in ${file} from line ${selection.start.line + 1} to line ${selection.end.line + 1}.`;
}

/**
 * Whether text is a patch warden.patch.apply reads: the Codex format or a
 * unified/git diff (possibly after a few lines of prose, as in a mail).
 */
export function looksLikePatch(text: string): boolean {
  if (/^\s*\*\*\* Begin Patch\b/.test(text) || /^diff --git /m.test(text)) return true;
  return /^--- \S/m.test(text) && /^\+\+\+ \S/m.test(text) && /^@@ -\d/m.test(text);
}
