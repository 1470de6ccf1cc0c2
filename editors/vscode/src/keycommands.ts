// "Warden: Set API Key" and "Clear API Key", and the offer to move a key out
// of settings.json. The key itself is handled in apikey.ts.

import * as vscode from 'vscode';
import { ApiKey } from './apikey';

/** The global state flag of a user who chose to keep the key in settings.json. */
const keepInSettings = 'warden.keepApiKeyInSettings';

/** The ApiKey over the extension's secret storage and the user's own warden.model.apiKey. */
export function apiKeyFor(context: vscode.ExtensionContext): ApiKey {
  return new ApiKey(context.secrets, {
    value: () => vscode.workspace.getConfiguration('warden').inspect<string>('model.apiKey')?.globalValue,
    remove: () => vscode.workspace.getConfiguration('warden').update('model.apiKey', undefined, vscode.ConfigurationTarget.Global),
  });
}

/**
 * Registers the key commands. `restart` starts the server again, so it is
 * spawned with the new key (the key is read only at start).
 */
export function registerKeyCommands(context: vscode.ExtensionContext, key: ApiKey, restart: () => Promise<void>): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('warden.setApiKey', async () => {
      const typed = await vscode.window.showInputBox({
        title: 'Warden: Set API Key',
        prompt: 'The model endpoint\'s API key. It is kept in VS Code\'s secret storage, not in settings.json.',
        password: true,
        ignoreFocusOut: true,
      });
      if (!typed?.trim()) return;
      try {
        await key.set(typed);
      } catch (err) {
        void vscode.window.showErrorMessage(`Warden: could not store the API key: ${(err as Error).message}`);
        return;
      }
      await restart();
      void vscode.window.showInformationMessage('Warden: API key stored in secret storage; the server restarted with it.');
    }),
    vscode.commands.registerCommand('warden.clearApiKey', async () => {
      try {
        await key.clear();
      } catch (err) {
        void vscode.window.showErrorMessage(`Warden: could not clear the API key: ${(err as Error).message}`);
        return;
      }
      await restart();
      void vscode.window.showInformationMessage('Warden: API key cleared; the server restarted without it.');
    }),
  );
}

/**
 * Offers, once per start, to move a key found in settings.json into secret
 * storage, unless the user chose to keep it there.
 */
export async function offerKeyMigration(context: vscode.ExtensionContext, key: ApiKey): Promise<void> {
  if (!key.inSettings() || context.globalState.get<boolean>(keepInSettings)) return;
  const move = 'Move to Secret Storage';
  const keep = 'Keep in Settings';
  const picked = await vscode.window.showWarningMessage(
    'Warden: your model API key is in settings.json, in plain text (and settings may be synced). Move it to VS Code\'s secret storage?',
    move,
    keep,
  );
  if (picked === keep) {
    await context.globalState.update(keepInSettings, true);
    return;
  }
  if (picked !== move) return;
  try {
    // Removing the setting restarts the server (a removed setting needs
    // one), which then starts with the stored key.
    await key.migrate();
  } catch (err) {
    void vscode.window.showErrorMessage(`Warden: could not move the API key: ${(err as Error).message}. It is still in settings.json.`);
    return;
  }
  void vscode.window.showInformationMessage('Warden: the API key is now in secret storage and gone from settings.json.');
}
