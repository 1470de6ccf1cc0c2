// The palette commands. Each maps onto one of the server's warden.* commands;
// the server does the work and asks for approval itself.

import * as os from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { Warden } from './extension';
import { AgentRun, Problem, Range, fixRange, looksLikePatch, problemsToFix, toDiagnostic } from './instructions';
import { approvalPolicies, sandboxModes } from './settings';
import { newestTranscript, stateDir } from './transcript';

function lspRange(r: vscode.Range): Range {
  return {
    start: { line: r.start.line, character: r.start.character },
    end: { line: r.end.line, character: r.end.character },
  };
}

const severities: Problem['severity'][] = ['error', 'warning', 'info', 'hint'];

/** The agent's target: the active editor's file and its selection, if any. */
function target(editor: vscode.TextEditor | undefined): Pick<AgentRun, 'uri' | 'range'> {
  // The agent works on files; an untitled buffer or an output pane is no target.
  if (!editor || editor.document.uri.scheme !== 'file') return {};
  const sel = editor.selection;
  return { uri: editor.document.uri.toString(), range: sel.isEmpty ? undefined : lspRange(sel) };
}

function workspaceDir(): string | undefined {
  const uri = vscode.window.activeTextEditor?.document.uri;
  const folder = (uri && vscode.workspace.getWorkspaceFolder(uri)) ?? vscode.workspace.workspaceFolders?.[0];
  return folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
}

export function registerCommands(context: vscode.ExtensionContext, warden: Warden): void {
  const register = (id: string, fn: (...args: unknown[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));

  const runAgent = (run: AgentRun) => warden.execute('warden.agent.run', run);

  register('warden.ask', async () => {
    const instruction = await vscode.window.showInputBox({
      title: 'Ask Warden',
      prompt: 'What should the agent do? It asks before anything risky.',
      ignoreFocusOut: true,
    });
    if (!instruction?.trim()) return;
    await runAgent({ instruction: instruction.trim(), ...target(vscode.window.activeTextEditor) });
  });

  register('warden.fix', async () => {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme !== 'file') {
      void vscode.window.showInformationMessage('Warden: open (or save) the file to fix first.');
      return;
    }
    const doc = editor.document;
    const selection = editor.selection.isEmpty ? undefined : lspRange(editor.selection);
    const problems = problemsToFix(vscode.languages.getDiagnostics(doc.uri).map((d) => ({
      range: lspRange(d.range),
      message: d.message,
      severity: severities[d.severity] ?? 'info',
      source: d.source,
    })), selection);
    if (problems.length === 0) {
      void vscode.window.showInformationMessage(`Warden: ${vscode.workspace.asRelativePath(doc.uri)} has no errors or warnings. Use "Warden: Ask" to say what to change.`);
      return;
    }
    await runAgent({
      mode: 'fix',
      uri: doc.uri.toString(),
      range: fixRange(problems, selection),
      diagnostics: problems.map(toDiagnostic),
    });
  });

  register('warden.explain', async () => {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme !== 'file') {
      void vscode.window.showInformationMessage('Warden: open (or save) the file to explain first.');
      return;
    }
    // The selection, else the whole file.
    const doc = editor.document;
    const range = editor.selection.isEmpty ? lspRange(new vscode.Range(0, 0, doc.lineCount, 0)) : lspRange(editor.selection);
    await runAgent({ mode: 'explain', uri: doc.uri.toString(), range });
  });

  register('warden.runCommand', async (given?: unknown) => {
    const command = typeof given === 'string' ? given : await vscode.window.showInputBox({
      title: 'Warden: Run Command',
      prompt: 'A shell command, run through Warden\'s approval policy and sandbox',
      placeHolder: 'make test',
      ignoreFocusOut: true,
    });
    if (!command?.trim()) return;
    await warden.execute('warden.exec', { command: command.trim(), cwd: workspaceDir() });
  });

  register('warden.cancel', async () => {
    const status = await warden.refreshStatus();
    const jobs = status?.jobs ?? [];
    if (jobs.length === 0) {
      void vscode.window.showInformationMessage('Warden: nothing is running.');
      return;
    }
    let job = jobs[0];
    if (jobs.length > 1) {
      const pick = await vscode.window.showQuickPick(
        jobs.map((j) => ({ label: jobLabel(j), description: j.message, job: j })),
        { title: 'Cancel which Warden job?' },
      );
      if (!pick) return;
      job = pick.job;
    }
    await warden.cancel(job);
  });

  register('warden.applyPatch', async () => {
    const editor = vscode.window.activeTextEditor;
    const text = editor ? (editor.selection.isEmpty ? editor.document.getText() : editor.document.getText(editor.selection)) : '';
    if (!looksLikePatch(text)) {
      void vscode.window.showErrorMessage('Warden: open a patch (Codex "*** Begin Patch" or a unified/git diff), or select its text, then run "Warden: Apply Patch" again.');
      return;
    }
    await warden.execute('warden.patch.apply', { patch: text, root: workspaceDir() });
  });

  register('warden.undoLastChange', () => warden.execute('warden.undo'));

  register('warden.setPolicy', async () => {
    const current = (await warden.refreshStatus())?.policy ?? {};
    const approval = await vscode.window.showQuickPick(
      approvalPolicies.map((p) => ({ label: p, description: p === current.approvalPolicy ? 'current' : undefined, detail: policyHelp[p] })),
      { title: 'Warden: approval policy (1/3)' },
    );
    if (!approval) return;
    const sandbox = await vscode.window.showQuickPick(
      sandboxModes.map((m) => ({ label: m, description: m === current.sandboxMode ? 'current' : undefined, detail: sandboxHelp[m] })),
      { title: 'Warden: sandbox (2/3)' },
    );
    if (!sandbox) return;
    const mode = current.network || (current.networkAccess === undefined ? undefined : current.networkAccess ? 'on' : 'off');
    const network = await vscode.window.showQuickPick(
      [
        { label: 'Network off', value: 'off', description: mode === 'off' ? 'current' : undefined },
        { label: 'Network ask', value: 'ask', description: mode === 'ask' ? 'current' : undefined, detail: 'Each new host is asked, through Warden\'s proxy' },
        { label: 'Network on', value: 'on', description: mode === 'on' ? 'current' : undefined },
      ],
      { title: 'Warden: network from sandboxed commands (3/3)' },
    );
    if (!network) return;
    await warden.execute('warden.policy.set', {
      approvalPolicy: approval.label,
      sandboxMode: sandbox.label,
      networkAccess: network.value,
    });
    await warden.refreshStatus();
  });

  register('warden.showTranscript', async () => {
    const path = warden.lastTranscript ?? await newestTranscript(join(stateDir(process.env, os.homedir()), 'sessions'));
    if (!path) {
      void vscode.window.showInformationMessage('Warden: no transcript yet. Transcripts are written when the agent runs.');
      return;
    }
    const uri = path.includes('://') ? vscode.Uri.parse(path) : vscode.Uri.file(path);
    await vscode.window.showTextDocument(uri, { preview: false });
  });

  register('warden.showLog', () => warden.output.show());
  register('warden.restart', () => warden.restart());

  register('warden.statusMenu', async () => {
    const status = await warden.refreshStatus();
    type Item = vscode.QuickPickItem & { run: () => unknown };
    const items: Item[] = (status?.jobs ?? []).map((j) => ({
      label: `$(debug-stop) Cancel: ${jobLabel(j)}`,
      description: j.message,
      run: () => warden.cancel(j),
    }));
    items.push(
      { label: '$(shield) Set Policy…', description: status?.policy ? `${status.policy.approvalPolicy} · ${status.policy.sandboxMode}` : undefined, run: () => vscode.commands.executeCommand('warden.setPolicy') },
      { label: '$(book) Show Transcript', run: () => vscode.commands.executeCommand('warden.showTranscript') },
      { label: '$(output) Show Log', run: () => warden.output.show() },
      { label: '$(debug-restart) Restart Server', run: () => warden.restart() },
    );
    const pick = await vscode.window.showQuickPick(items, { title: 'Warden' });
    await pick?.run();
  });
}

const policyHelp: Record<string, string> = {
  untrusted: 'Ask before anything but known-safe read-only commands',
  'on-failure': 'Run in the sandbox; ask only to retry outside it after a failure',
  'on-request': 'Run in the sandbox; ask when the agent requests more (default)',
  never: 'Never ask; failures go back to the agent',
};

const sandboxHelp: Record<string, string> = {
  'read-only': 'Commands may read files but write nothing',
  'workspace-write': 'Commands may write the workspace (default)',
  'danger-full-access': 'No sandbox at all',
};

/** A job as a menu names it: its title without the "Warden: " every server title starts with. */
function jobLabel(j: { id: string; title?: string; command?: string }): string {
  return (j.title ?? j.command ?? `job ${j.id}`).replace(/^Warden: /, '');
}
