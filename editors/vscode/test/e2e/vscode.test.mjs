// End to end in a real VS Code: code-server with the packaged extension,
// driven through its UI by playwright-core in headless chromium, with the
// real bin/warden as the language server.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
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
});

test('the extension is installed and active: its commands are in the palette', async () => {
  const page = vs.page;
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill('>Warden:');
  const rows = page.locator('.quick-input-list .monaco-list-row');
  await rows.first().waitFor();
  const labels = await rows.allInnerTexts();
  await shot('palette');
  await page.keyboard.press('Escape');
  for (const want of ['Ask…', 'Fix Problems', 'Explain', 'Run Command…', 'Cancel', 'Undo Last Change', 'Set Policy…', 'Show Transcript']) {
    assert.ok(labels.some((l) => l.includes(`Warden: ${want}`)), `palette lacks "Warden: ${want}"; it shows:\n${labels.join('\n')}`);
  }
});

test('the status bar item is there', async () => {
  const item = vs.page.locator('#warden\\.status');
  await item.waitFor({ timeout: 30_000 });
  assert.ok((await item.innerText()).length > 0);
});
