// Network approvals end to end in a real VS Code: the agent's sandboxed curl
// asks for a host on the machine's loopback through Warden's proxy; the user
// answers the modal dialog, and the model hears what happened.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openVSCode, tools } from './codeserver.mjs';
import { startFakeModel } from './fakemodel.mjs';

const artifacts = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-results');
const content = `payload from the host ${Date.now()}`;
const contract = (host) => ['Allow once', 'Allow for session', `Always allow \`${host}\``, 'Deny', 'Deny and stop'];
let vs;
let scratch;
let model;
let host;
let hits = 0;
let url;

function haveCurl() {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const noCurl = haveCurl() ? false : 'curl is not installed';

// The agent downloads the file with curl, then says how it went. 127.0.0.1
// inside the sandbox is the sandbox's own loopback (NO_PROXY sends it
// there); --noproxy '' makes curl go through Warden's proxy to the host's
// server, as it would to any outside host.
function agentScript(request) {
  const results = request.messages.filter((m) => m.role === 'tool');
  if (results.length === 0) {
    return { calls: [{ name: 'shell', args: { command: ['curl', '-sS', '-f', '--noproxy', '', url] } }] };
  }
  const prompt = request.messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n');
  return { text: prompt.includes('again') ? 'Second download finished.' : 'First download finished.' };
}

before(async () => {
  if (noCurl) return;
  const t = tools();
  const missing = Object.entries(t).filter(([, v]) => !v).map(([k]) => k);
  assert.deepEqual(missing, [], `missing ${missing.join(', ')}: run .ci/vscode-setup.sh and use \`make vscodetest\` (it sets WARDEN_BIN, WARDEN_VSIX, WARDEN_CODE_SERVER)`);
  await mkdir(artifacts, { recursive: true });
  scratch = await mkdtemp(join(tmpdir(), 'warden-e2e-net-'));
  const workspace = join(scratch, 'ws');
  await mkdir(workspace);
  await writeFile(join(workspace, 'notes.txt'), 'notes\n');
  // The host's server, outside the sandbox.
  host = createServer((req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(content);
  });
  await new Promise((resolve) => host.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${host.address().port}/file`;
  model = await startFakeModel(agentScript);
  vs = await openVSCode({
    ...t,
    workspace,
    // The defaults otherwise: on-request, workspace-write, network ask.
    settings: {
      'warden.server.path': t.warden,
      'warden.model.baseURL': model.url,
      'warden.model.name': 'fake-model',
    },
    env: { XDG_CONFIG_HOME: join(scratch, 'config'), XDG_STATE_HOME: join(scratch, 'state'), XDG_CACHE_HOME: join(scratch, 'cache') },
  });
  // The extension is up and its server answered warden.status: network ask.
  await vs.page.locator('.statusbar-item[id$="warden.status"]', { hasText: 'on-request · workspace-write · net ask' }).waitFor({ timeout: 120_000 });
});

// A failed test says what the editor showed and what Warden logged.
afterEach(async (t) => {
  if (!t.passed && vs) console.log(`${t.name} failed; ${await vs.explain()}`);
});

after(async () => {
  await vs?.stop();
  await model?.close();
  if (host) {
    host.closeAllConnections();
    await new Promise((resolve) => host.close(resolve));
  }
  if (scratch && !process.env.WARDEN_E2E_KEEP) await rm(scratch, { recursive: true, force: true });
});

async function runCommand(label) {
  const page = vs.page;
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(`>${label}`);
  await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: label }).waitFor();
  await page.keyboard.press('Enter');
}

/** Asks the agent through "Warden: Ask…" as a user types it. */
async function ask(words) {
  await runCommand('Warden: Ask…');
  await vs.page.locator('.quick-input-widget', { hasText: 'Ask Warden' }).waitFor();
  await vs.page.locator('.quick-input-widget input').fill(words);
  await vs.page.keyboard.press('Enter');
}

/** The modal dialog, once it is shown. */
async function dialog() {
  const box = vs.page.locator('.monaco-dialog-box');
  await box.waitFor({ timeout: 60_000 });
  return box;
}

/**
 * The actions of every network question, in the order the extension got
 * them from the server, from the lines it writes to its Output channel
 * (which VS Code keeps under its logs directory).
 */
async function loggedNetworkActions() {
  const found = [];
  const walk = async (dir) => {
    for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name === 'Warden.log') found.push(p);
    }
  };
  await walk(join(vs.home, 'user-data', 'logs'));
  const questions = [];
  for (const file of found) {
    for (const line of (await readFile(file, 'utf8')).split('\n')) {
      const m = /\[approval\] .* wants to connect to .* \(([^()]*)\) -> /.exec(line);
      if (m) questions.push(m[1].split(' | '));
    }
  }
  return questions;
}

/** The tool output in the model's last request. */
function lastToolOutput() {
  const results = model.requests.at(-1).messages.filter((m) => m.role === 'tool').map((m) => m.content);
  assert.equal(results.length, 1, 'one tool result');
  return results[0];
}

async function waitFor(cond, what, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('network: the agent\'s curl asks for the host in a modal; Allow once downloads the file', { skip: noCurl }, async () => {
  const page = vs.page;
  const port = host.address().port;
  await ask('Download the file from the host');
  const box = await dialog();
  const heading = await box.locator('.dialog-message-text').innerText();
  const detail = await box.locator('.dialog-message-detail').innerText();
  assert.match(heading, new RegExp(`^Warden: \`curl -sS -f --noproxy '' http://127\\.0\\.0\\.1:${port}/file\` wants to connect to 127\\.0\\.0\\.1 port ${port} \\(http\\)\\. Allow\\?`));
  assert.match(detail, /^in .*\/ws$/m);
  assert.match(detail, /First contact with this host this session/);
  assert.match(detail, /Risk: medium: 127\.0\.0\.1 is this machine/);
  // Every action of the contract is a button and VS Code adds no Cancel
  // (Deny closes the dialog); medium risk, so Enter denies: "Deny and
  // stop" is the primary.
  const buttons = await box.locator('.dialog-buttons .monaco-button').allInnerTexts();
  assert.deepEqual([...buttons].sort(), [...contract('127.0.0.1')].sort());
  assert.equal(await box.locator('.dialog-buttons .monaco-button:not(.secondary)').innerText(), 'Deny and stop');
  await vs.page.screenshot({ path: join(artifacts, 'network-dialog.png') });
  assert.equal(hits, 0, 'nothing reached the host before the answer');
  await box.locator('.monaco-button', { hasText: /^Allow once$/ }).click();

  await page.locator('.notifications-toasts', { hasText: 'First download finished.' }).waitFor({ timeout: 60_000 });
  assert.equal(hits, 1, 'the host server was reached once');
  const out = lastToolOutput();
  assert.match(out, /Exit code: 0/);
  assert.ok(out.includes(content), `the model received the file's content:\n${out}`);

  // The actions came in the contract's order (the dialog lays its buttons
  // out by platform: on Linux reversed, with the close affordance, Deny,
  // next to the primary).
  await waitFor(async () => (await loggedNetworkActions()).length === 1, 'the logged network question');
  assert.deepEqual(await loggedNetworkActions(), [contract('127.0.0.1')]);
});

test('network: Deny refuses the host; curl fails and the model is told which host and why', { skip: noCurl }, async () => {
  const page = vs.page;
  const port = host.address().port;
  await ask('Download the file from the host again');
  // "Allow once" was not remembered: it asks again.
  const box = await dialog();
  assert.match(await box.locator('.dialog-message-text').innerText(), new RegExp(`wants to connect to 127\\.0\\.0\\.1 port ${port} \\(http\\)`));
  await box.locator('.monaco-button', { hasText: /^Deny$/ }).click();

  await page.locator('.notifications-toasts', { hasText: 'Second download finished.' }).waitFor({ timeout: 60_000 });
  assert.equal(hits, 1, 'denied: the host server was not reached');
  const out = lastToolOutput();
  assert.ok(!out.includes(content), `denied: no content reached the model:\n${out}`);
  assert.match(out, /403/, 'curl failed on the proxy\'s refusal');
  assert.ok(out.includes(`[Warden proxy: network to 127.0.0.1:${port} denied by the user]`), `the model is told which host was refused and why:\n${out}`);
  assert.equal((await loggedNetworkActions()).length, 2, 'asked again after Allow once');
});
