// End to end in a real VS Code: code-server with the packaged extension,
// driven through its UI by playwright-core in headless chromium, with the
// real bin/warden as the language server.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openVSCode, tools } from './codeserver.mjs';

const artifacts = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-results');
let vs;
let workspace;

async function shot(name) {
  await vs.page.screenshot({ path: join(artifacts, `${name}.png`) });
}

/** Opens the command palette and runs the command with this exact label. */
async function runCommand(label) {
  const page = vs.page;
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(`>${label}`);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
  await row.waitFor();
  await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: label }).waitFor();
  await page.keyboard.press('Enter');
}

before(async () => {
  const t = tools();
  const missing = Object.entries(t).filter(([, v]) => !v).map(([k]) => k);
  assert.deepEqual(missing, [], `missing ${missing.join(', ')}: run .ci/vscode-setup.sh and use \`make vscodetest\` (it sets WARDEN_BIN, WARDEN_VSIX, WARDEN_CODE_SERVER)`);
  await mkdir(artifacts, { recursive: true });
  workspace = await mkdtemp(join(tmpdir(), 'warden-ws-'));
  await writeFile(join(workspace, 'greet.txt'), 'hello\nworld\n');
  vs = await openVSCode({
    ...t,
    workspace,
    settings: { 'warden.server.path': t.warden, 'warden.trace.server': 'messages' },
    env: { XDG_CONFIG_HOME: join(workspace, '.xdg-config'), XDG_STATE_HOME: join(workspace, '.xdg-state') },
  });
});

after(async () => {
  await vs?.stop();
  if (workspace && !process.env.WARDEN_E2E_KEEP) await rm(workspace, { recursive: true, force: true });
});

/**
 * Edits the user's settings.json in VS Code's own editor (Preferences: Open
 * User Settings (JSON)) and saves it, as a user would.
 */
async function updateUserSettings(change) {
  const path = join(vs.home, 'user-data', 'User', 'settings.json');
  const settings = JSON.parse(await readFile(path, 'utf8'));
  change(settings);
  await runCommand('Preferences: Open User Settings (JSON)');
  const editor = vs.page.locator('.editor-instance .monaco-editor').first();
  await editor.waitFor();
  await editor.click();
  // Pasted, not typed, so the editor's auto-closing cannot add to it.
  await vs.page.evaluate((t) => navigator.clipboard.writeText(t), JSON.stringify(settings, null, 2));
  await vs.page.keyboard.press('Control+A');
  await vs.page.keyboard.press('Control+V');
  await vs.page.keyboard.press('Control+S');
  const want = JSON.stringify(settings);
  const deadline = Date.now() + 15_000;
  let saved;
  const text = async () => {
    const t = await readFile(path, 'utf8');
    try {
      return JSON.stringify(JSON.parse(t));
    } catch {
      return t;
    }
  };
  while ((saved = await text()) !== want && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(saved, want, 'settings.json was not saved');
  await vs.page.keyboard.press('Control+W');
}

/** The Warden status bar item. */
function statusItem() {
  return vs.page.locator('.statusbar-item[id$="warden.status"]');
}

test('the server starts and the status bar shows its policy', async () => {
  const item = statusItem();
  // The policy comes from warden.status on the running server: the defaults,
  // since the test sets no policy.
  await item.filter({ hasText: 'on-request · workspace-write · net off' }).waitFor({ timeout: 120_000 });
  await shot('status-bar');
});

test('the palette has every Warden command', async () => {
  const page = vs.page;
  for (const want of ['Ask…', 'Fix Problems', 'Explain', 'Run Command…', 'Cancel', 'Undo Last Change', 'Set Policy…', 'Show Transcript']) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.fill(`>Warden: ${want}`);
    const rows = page.locator('.quick-input-list .monaco-list-row');
    await rows.first().waitFor();
    const labels = await rows.allInnerTexts();
    await page.keyboard.press('Escape');
    assert.ok(labels.some((l) => l.startsWith(`Warden: ${want}`)), `palette lacks "Warden: ${want}"; it shows:\n${labels.join('\n')}`);
  }
});

test('a changed setting reaches the server; a removed one falls back after a restart', async () => {
  await updateUserSettings((s) => { s['warden.approvalPolicy'] = 'untrusted'; s['warden.networkAccess'] = true; });
  await statusItem().filter({ hasText: 'untrusted · workspace-write · net on' }).waitFor({ timeout: 30_000 });
  await updateUserSettings((s) => { delete s['warden.approvalPolicy']; delete s['warden.networkAccess']; });
  await statusItem().filter({ hasText: 'on-request · workspace-write · net off' }).waitFor({ timeout: 30_000 });
});
