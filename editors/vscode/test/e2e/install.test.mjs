// The platform .vsix on its own, as a user installs it: no warden.server.path
// and no warden on PATH, so the server that starts is the binary the .vsix
// carries. The model API key found in settings.json moves to secret storage
// on the user's word, and "Warden: Set API Key" / "Clear API Key" change the
// key the server sends the model, which never lands in settings or logs.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { openVSCode, tools } from './codeserver.mjs';
import { startFakeModel } from './fakemodel.mjs';

const artifacts = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-results');
const keyInSettings = `sk-settings-${Date.now()}`;
const keyTyped = `sk-typed-${Date.now()}`;
let vs;
let scratch;
let model;

before(async () => {
  const t = tools();
  const missing = Object.entries(t).filter(([k, v]) => k !== 'warden' && !v).map(([k]) => k);
  assert.deepEqual(missing, [], `missing ${missing.join(', ')}: use \`make vscode-e2e\` (it sets WARDEN_VSIX to this platform's .vsix, WARDEN_CODE_SERVER)`);
  await mkdir(artifacts, { recursive: true });
  scratch = await mkdtemp(join(tmpdir(), 'warden-e2e-install-'));
  const workspace = join(scratch, 'ws');
  await mkdir(workspace);
  await writeFile(join(workspace, 'notes.txt'), 'notes\n');
  await mkdir(join(scratch, 'home'));
  model = await startFakeModel(() => ({ text: `Answered request ${model.requests.length}.` }));
  // PATH as the machine has it (code-server runs on its node), less any
  // directory that holds a warden.
  const path = (process.env.PATH ?? '').split(delimiter).filter((d) => d && !existsSync(join(d, 'warden'))).join(delimiter);
  vs = await openVSCode({
    ...t,
    workspace,
    settings: {
      'warden.model.baseURL': model.url,
      'warden.model.name': 'fake-model',
      'warden.model.apiKey': keyInSettings,
    },
    env: {
      PATH: path,
      HOME: join(scratch, 'home'),
      XDG_CONFIG_HOME: join(scratch, 'config'),
      XDG_STATE_HOME: join(scratch, 'state'),
      XDG_CACHE_HOME: join(scratch, 'cache'),
      OPENAI_API_KEY: '',
    },
  });
});

// A failed test says what the editor showed and what Warden logged.
afterEach(async (t) => {
  if (!t.passed && vs) console.log(`${t.name} failed; ${await vs.explain()}`);
});

after(async () => {
  await vs?.stop();
  await model?.close();
  if (scratch && !process.env.WARDEN_E2E_KEEP) await rm(scratch, { recursive: true, force: true });
});

/**
 * Waits for a notice: as a toast or, where VS Code filed it in the
 * notification center without one (seen here after several restarts: the
 * extension's log says the restart came back, and no toast came), there.
 */
async function noticeShown(text) {
  try {
    await vs.page.locator('.notifications-toasts', { hasText: text }).waitFor({ timeout: 20_000 });
    return;
  } catch {
    // Not as a toast: look in the center.
  }
  await runCommand('Notifications: Show Notifications');
  await vs.page.locator('.notifications-center', { hasText: text }).waitFor({ timeout: 30_000 });
  await vs.page.keyboard.press('Escape');
}

function statusItem() {
  return vs.page.locator('.statusbar-item[id$="warden.status"]');
}

async function runCommand(label) {
  const page = vs.page;
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(`>${label}`);
  await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: label }).waitFor();
  await page.keyboard.press('Enter');
}

/** Asks the agent; returns the Authorization header its model request carried. */
async function askAndGetAuthorization() {
  const before = model.requests.length;
  await runCommand('Warden: Ask…');
  await vs.page.locator('.quick-input-widget', { hasText: 'Ask Warden' }).waitFor();
  await vs.page.locator('.quick-input-widget input').fill('Say hello');
  await vs.page.keyboard.press('Enter');
  await noticeShown(`Answered request ${before + 1}.`);
  return model.authorizations[before];
}

/** The `warden serve` processes running now: {pid, exe}. */
async function wardenServers() {
  const found = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
      if (argv[1] === 'serve' && argv[0].endsWith('warden')) found.push({ pid, exe: await readlink(`/proc/${pid}/exe`) });
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** Waits for a warden serve that was not among `was`, and for its status. */
async function restarted(was) {
  const deadline = Date.now() + 60_000;
  const fresh = async () => (await wardenServers()).some((s) => !was.some((w) => w.pid === s.pid));
  while (!(await fresh())) {
    assert.ok(Date.now() < deadline, 'the server did not restart');
    await new Promise((r) => setTimeout(r, 200));
  }
  await statusItem().filter({ hasText: 'on-request · workspace-write' }).waitFor({ timeout: 60_000 });
}

/** Every file below dir that holds text, as [path, text]. */
async function textFiles(dir) {
  const out = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.push([path, await readFile(path, 'utf8').catch(() => '')]);
  }
  return out;
}

test('the platform .vsix starts its own binary with no setting and nothing on PATH', async () => {
  await statusItem().filter({ hasText: 'on-request · workspace-write' }).waitFor({ timeout: 120_000 });
  const extensions = join(vs.home, 'extensions');
  const servers = (await wardenServers()).map((s) => s.exe);
  assert.ok(
    servers.some((exe) => exe.startsWith(extensions) && /\/dist\/bin\/warden$/.test(exe)),
    `no warden serve from the installed extension under ${extensions}; running: ${servers.join(', ') || 'none'}`,
  );
});

test('a key in settings.json is moved to secret storage on the user\'s word, and the model still gets it', async () => {
  const page = vs.page;
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'your model API key is in settings.json' });
  await toast.waitFor({ timeout: 60_000 });
  await vs.page.screenshot({ path: join(artifacts, 'install-move-key.png') });
  const first = await wardenServers();
  await toast.locator('.monaco-button', { hasText: 'Move to Secret Storage' }).click();
  await page.locator('.notifications-toasts', { hasText: 'the API key is now in secret storage' }).waitFor({ timeout: 30_000 });
  const settings = JSON.parse(await readFile(join(vs.home, 'user-data', 'User', 'settings.json'), 'utf8'));
  assert.equal(settings['warden.model.apiKey'], undefined, 'the key is still in settings.json');
  // The setting's removal restarts the server, with the stored key.
  await restarted(first);
  assert.equal(await askAndGetAuthorization(), `Bearer ${keyInSettings}`);
});

test('Set API Key: typed in a password box, sent to the model, written in neither settings nor logs', async () => {
  const page = vs.page;
  await runCommand('Warden: Set API Key');
  const box = page.locator('.quick-input-widget', { hasText: 'secret storage' });
  await box.waitFor();
  assert.equal(await box.locator('input').getAttribute('type'), 'password');
  await box.locator('input').fill(keyTyped);
  await page.keyboard.press('Enter');
  await page.locator('.notifications-toasts', { hasText: 'API key stored in secret storage' }).waitFor({ timeout: 30_000 });
  await statusItem().filter({ hasText: 'on-request · workspace-write' }).waitFor({ timeout: 60_000 });
  assert.equal(await askAndGetAuthorization(), `Bearer ${keyTyped}`);

  const userFiles = [...await textFiles(join(vs.home, 'user-data', 'User')), ...await textFiles(join(vs.home, 'user-data', 'logs'))]
    .filter(([path]) => !path.endsWith('.vscdb') && !path.endsWith('.vscdb.backup'));
  assert.ok(userFiles.some(([path]) => path.endsWith('settings.json')));
  assert.ok(userFiles.some(([path, text]) => path.endsWith('Warden.log') && text.includes('warden serve starting')), 'the Warden log was not found');
  for (const [path, text] of userFiles) {
    for (const key of [keyInSettings, keyTyped]) assert.ok(!text.includes(key), `${path} holds the key ${key}`);
  }
});

test('the server started with the key keeps the rest of the environment: its transcripts are under XDG_STATE_HOME', async () => {
  const sessions = await readdir(join(scratch, 'state', 'warden', 'sessions')).catch(() => []);
  assert.equal(sessions.filter((f) => f.endsWith('.md')).length, 2, `want the two asks' transcripts, have: ${sessions.join(', ')}`);
});

test('Clear API Key: the server starts again without a key', async () => {
  await runCommand('Warden: Clear API Key');
  await noticeShown('API key cleared');
  await statusItem().filter({ hasText: 'on-request · workspace-write' }).waitFor({ timeout: 60_000 });
  assert.equal(await askAndGetAuthorization(), null);
});
