// Warden for VS Code: starts `warden serve` as a language server and gives it
// a VS Code face: modal approval dialogs, palette commands, a status bar item.
// Patches need nothing here: the server sends annotated edits with
// needsConfirmation, and VS Code opens its Refactor Preview for them.

import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ShowMessageRequest,
  State,
  WorkDoneProgressCancelNotification,
} from 'vscode-languageclient/node';
import { ApiKey, serverEnv } from './apikey';
import { ShowMessageRequestParams, answer, dialogFor } from './approval';
import { announceAskAgent, needsInstruction, withInstruction } from './askagent';
import { registerCommands } from './commands';
import { apiKeyFor, offerKeyMigration, registerKeyCommands } from './keycommands';
import { bundledPath, resolveServerPath } from './serverpath';
import { needsRestart, toServerSettings } from './settings';
import { JobInfo, ProgressTracker, ProgressValue, ServerStatus, statusView } from './status';

export class Warden implements vscode.Disposable {
  readonly output = vscode.window.createOutputChannel('Warden', { log: true });
  private readonly item = vscode.window.createStatusBarItem('warden.status', vscode.StatusBarAlignment.Left, 100);
  private client: LanguageClient | undefined;
  private state: 'starting' | 'running' | 'stopped' = 'stopped';
  private sent: string[] = [];
  private serverPathSetting: string | undefined;
  private starts = 0;
  /** The last start or stop asked for; the next one waits for it (see serially). */
  private lifecycle: Promise<void> = Promise.resolve();
  private readonly progress = new ProgressTracker();
  status: ServerStatus | undefined;
  /** The transcript the server last opened (window/showDocument). */
  lastTranscript: string | undefined;

  /**
   * extensionDir is the installed extension, where a platform .vsix carries
   * the binary; apiKey is the model key from secret storage.
   */
  constructor(private readonly extensionDir: string, private readonly apiKey: ApiKey) {
    this.item.name = 'Warden';
    this.item.command = 'warden.statusMenu';
    this.render();
    this.item.show();
  }

  /** The settings the user set, as Warden's config JSON. */
  private settings() {
    const cfg = vscode.workspace.getConfiguration('warden');
    // Only the user's own (global) values: these settings are application
    // scoped, so a workspace's .vscode/settings.json cannot loosen policy.
    const t = toServerSettings((key) => cfg.inspect(key)?.globalValue);
    for (const p of t.problems) {
      void vscode.window.showWarningMessage(`Warden: ignoring ${p}`);
    }
    return t;
  }

  /**
   * Runs one start or stop after those asked before it. Without it a restart
   * asked while the server was still starting (a key stored while a setting's
   * change restarts it, "Restart Server" clicked twice) stopped nothing: a
   * starting client cannot be stopped, so it lived on beside the new one.
   */
  private serially(step: () => Promise<void>): Promise<void> {
    const next = this.lifecycle.then(step, step);
    this.lifecycle = next.catch(() => undefined);
    return next;
  }

  start(): Promise<void> {
    const attempt = ++this.starts;
    return this.serially(() => this.startNow(attempt));
  }

  stop(): Promise<void> {
    return this.serially(() => this.stopNow());
  }

  /** Stops the server and starts it again, the two as one step. */
  restart(): Promise<void> {
    const attempt = ++this.starts;
    return this.serially(async () => {
      await this.stopNow();
      await this.startNow(attempt);
    });
  }

  private async startNow(attempt: number): Promise<void> {
    // A start asked after this one supersedes it.
    if (attempt !== this.starts) return;
    const key = await this.storedKey();
    if (attempt !== this.starts) return;
    this.serverPathSetting = serverPathSetting();
    let command: string;
    try {
      command = resolveServerPath({
        setting: this.serverPathSetting,
        bundled: bundledPath(this.extensionDir, process.platform),
        env: process.env,
        home: os.homedir(),
        platform: process.platform,
      });
    } catch (err) {
      this.state = 'stopped';
      this.render();
      void vscode.window.showErrorMessage(`Warden: ${(err as Error).message}`, 'Open Settings').then((open) => {
        if (open) void vscode.commands.executeCommand('workbench.action.openSettings', 'warden.server.path');
      });
      return;
    }
    this.output.info(`starting ${command}`);
    const initial = this.settings();
    this.sent = initial.sent;
    const env = serverEnv(process.env, key);
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      outputChannel: this.output,
      initializationOptions: initial.settings,
      middleware: {
        // "Warden: Ask agent…" comes without an instruction: ask for it here.
        // Escape sends nothing.
        executeCommand: async (cmd, args, next) => {
          if (!needsInstruction(cmd, args)) return next(cmd, args);
          const typed = await vscode.window.showInputBox({
            title: 'Ask Warden',
            prompt: 'What should the agent do with this code? It asks before anything risky.',
            ignoreFocusOut: true,
          });
          const filled = withInstruction(args, typed);
          return filled ? next(cmd, filled) : undefined;
        },
        handleWorkDoneProgress: (token, params, next) => {
          if (this.progress.update(token, params as ProgressValue)) this.render();
          if (params.kind !== 'report') void this.refreshStatus();
          next(token, params);
        },
        window: {
          showDocument: async (params, token, next) => {
            if (params.uri.endsWith('.md')) this.lastTranscript = params.uri;
            return next(params, token);
          },
        },
      },
    };
    const client = new LanguageClient('warden', 'Warden', { command, args: ['serve'], options: { env } }, clientOptions);
    // Tells the server this client prompts for an agent instruction, so it
    // offers the "Ask agent…" code action (see the middleware above).
    client.registerFeature({
      fillClientCapabilities: announceAskAgent,
      initialize: () => undefined,
      getState: () => ({ kind: 'static' }),
      clear: () => undefined,
    });
    // Installed after the client's own handler at start, so it replaces the
    // toast with a modal dialog.
    client.onRequest(ShowMessageRequest.method, async (params: ShowMessageRequestParams) => {
      const dialog = dialogFor(params);
      const show = dialog.severity === 'error'
        ? vscode.window.showErrorMessage
        : dialog.severity === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
      const picked = await show(
        dialog.message,
        { modal: true, detail: dialog.detail },
        // Deny closes the dialog (no Cancel of VS Code's own); see approval.ts.
        ...dialog.buttons.map((b) => ({ title: b.title, isCloseAffordance: b.closes === true })),
      );
      // The actions in the server's order: the dialog lays its buttons out by platform.
      const offered = (params.actions ?? []).map((a) => a.title).join(' | ');
      this.output.appendLine(`[approval] ${dialog.message} (${offered}) -> ${picked?.title ?? 'dismissed'}`);
      return answer(dialog, picked?.title);
    });
    client.onDidChangeState((e) => {
      this.state = e.newState === State.Running ? 'running' : e.newState === State.Starting ? 'starting' : 'stopped';
      if (this.state !== 'running') {
        this.progress.clear();
        this.status = undefined;
      }
      this.render();
      if (this.state === 'running') void this.refreshStatus();
    });
    this.client = client;
    this.state = 'starting';
    this.render();
    try {
      await client.start();
      // Says in the log that a start came back: the "Clear API Key" e2e
      // test's rare hang waits for a restart that never does.
      this.output.info('server running');
    } catch (err) {
      this.output.appendLine(`warden serve failed to start: ${(err as Error).message}`);
    }
  }

  /** The key in secret storage; none when the storage cannot be read (said in the log). */
  private async storedKey(): Promise<string | undefined> {
    try {
      return await this.apiKey.get();
    } catch (err) {
      this.output.warn(`the API key in secret storage could not be read: ${(err as Error).message}`);
      return undefined;
    }
  }

  private async stopNow(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) await client.stop().catch(() => undefined);
    this.state = 'stopped';
    this.render();
  }

  /** Sends changed settings, restarting when the server must forget one. */
  async settingsChanged(): Promise<void> {
    const path = serverPathSetting();
    const next = this.settings();
    if (!this.client || path !== this.serverPathSetting || needsRestart(this.sent, next.sent)) {
      await this.restart();
      return;
    }
    this.sent = next.sent;
    await this.client.sendNotification(DidChangeConfigurationNotification.type, { settings: next.settings });
    await this.refreshStatus();
  }

  /** The server's commands, as advertised at initialize. */
  serverCommands(): string[] {
    return this.client?.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
  }

  /**
   * Runs one of the server's warden.* commands. Errors are shown to the user
   * and come back as undefined.
   */
  async execute(command: string, ...args: unknown[]): Promise<unknown> {
    if (!this.client || this.state !== 'running') {
      void vscode.window.showErrorMessage('Warden: the server is not running. Check the Warden output, or run "Warden: Restart Server".');
      return undefined;
    }
    if (!this.serverCommands().includes(command)) {
      void vscode.window.showErrorMessage(`Warden: this warden server has no ${command} command; update the warden binary.`);
      return undefined;
    }
    try {
      return await this.client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
    } catch (err) {
      void vscode.window.showErrorMessage(`Warden: ${command} failed: ${(err as Error).message}`);
      return undefined;
    } finally {
      void this.refreshStatus();
    }
  }

  /**
   * Cancels a job: an agent run through warden.agent.cancel, any other job
   * (a command, a patch) through its progress, as the progress UI would.
   */
  async cancel(job: JobInfo): Promise<void> {
    if (job.command === 'warden.agent.run') {
      await this.execute('warden.agent.cancel', { jobId: job.id });
      return;
    }
    const token = this.progress.tokenFor(job.title ?? '');
    if (!this.client || token === undefined) {
      void vscode.window.showErrorMessage(`Warden: cannot cancel "${job.title ?? job.id}": it reports no progress to cancel.`);
      return;
    }
    await this.client.sendNotification(WorkDoneProgressCancelNotification.type, { token });
  }

  async refreshStatus(): Promise<ServerStatus | undefined> {
    if (!this.client || this.state !== 'running') return undefined;
    try {
      this.status = (await this.client.sendRequest(ExecuteCommandRequest.type, { command: 'warden.status', arguments: [] })) as ServerStatus;
    } catch (err) {
      this.output.appendLine(`warden.status failed: ${(err as Error).message}`);
    }
    this.render();
    return this.status;
  }

  private render(): void {
    const view = statusView(this.state, this.status, this.progress.current());
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.alarm ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  }

  dispose(): void {
    void this.stop();
    this.item.dispose();
    this.output.dispose();
  }
}

/** The user's own warden.server.path: never a workspace's, which could name a binary it ships. */
function serverPathSetting(): string | undefined {
  return vscode.workspace.getConfiguration('warden').inspect<string>('server.path')?.globalValue;
}

let warden: Warden | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const apiKey = apiKeyFor(context);
  const w = new Warden(context.extensionPath, apiKey);
  warden = w;
  context.subscriptions.push(w);
  registerCommands(context, w);
  registerKeyCommands(context, apiKey, () => w.restart());
  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('warden') && !e.affectsConfiguration('warden.trace')) void warden?.settingsChanged();
  }));
  // Not awaited: activation must not wait on the server (or on a dialog
  // about a missing binary).
  void w.start();
  void offerKeyMigration(context, apiKey);
}

export async function deactivate(): Promise<void> {
  await warden?.stop();
  warden = undefined;
}
