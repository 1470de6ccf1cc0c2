// End to end in a real VS Code: code-server with the packaged extension,
// driven through its UI by playwright-core in headless chromium, with the
// real bin/warden as the language server.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { access, chmod, mkdir, mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openVSCode, tools } from './codeserver.mjs';
import { startFakeModel } from './fakemodel.mjs';

const artifacts = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-results');
let vs;
let workspace;
let scratch;
let model;
// A directory outside every root the sandbox lets commands write (the
// workspace, /tmp): what the grant tests ask access to.
let outside;

// notes.txt, and a patch with two hunks far apart, so that each is its own
// change in the Refactor Preview.
const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
const original = lines.join('\n') + '\n';
const fixPatch = [
  '*** Begin Patch',
  '*** Update File: notes.txt',
  '@@',
  ' line 1',
  '-line 2',
  '+line two',
  ' line 3',
  '@@',
  ' line 17',
  '-line 18',
  '+line eighteen',
  ' line 19',
  '*** End Patch',
  '',
].join('\n');
// The agent's story, one turn per request: run a command, then patch
// notes.txt, then answer. Each turn follows from the tool results so far.
const agentPatch = '*** Begin Patch\n*** Update File: notes.txt\n@@\n line 9\n-line 10\n+line ten (from the agent)\n line 11\n*** End Patch\n';
function agentScript(request) {
  const prompt = request.messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n');
  if (prompt.includes('Explain what the selected code does')) {
    return { text: 'These lines count from five to seven.' };
  }
  if (prompt.includes('Fix the problems the editor reports below')) {
    return { text: 'The JSON needs a comma.' };
  }
  if (prompt.includes('Say hello from the light bulb')) {
    return { text: 'Hello from Ask agent.' };
  }
  if (prompt.includes('think for a long time')) {
    return { hold: true };
  }
  const results = request.messages.filter((m) => m.role === 'tool');
  if (prompt.includes('Write the grant marker')) {
    // Asks for write access to outside; then writes there without a grant.
    switch (results.length) {
      case 0:
        return { calls: [{ name: 'shell', args: { command: ['touch', join(outside, 'granted.txt')], sandbox_permissions: 'with_additional_permissions', additional_permissions: { write: [outside] } } }] };
      case 1:
        return { calls: [{ name: 'shell', args: { command: ['touch', join(outside, 'plain.txt')] } }] };
      default:
        return { text: 'Grant marker written.' };
    }
  }
  if (prompt.includes('Try the grant again')) {
    return results.length === 0
      ? { calls: [{ name: 'shell', args: { command: ['touch', join(outside, 'denied.txt')], sandbox_permissions: 'with_additional_permissions', additional_permissions: { write: [outside] } } }] }
      : { text: 'Understood, not writing.' };
  }
  switch (results.length) {
    case 0:
      return { text: 'Let me record the date first. ', calls: [{ name: 'shell', args: { command: ['bash', '-c', 'echo checked > agent-was-here.txt'], justification: 'leave a marker the user asked for' } }] };
    case 1:
      return { calls: [{ name: 'apply_patch', args: { input: agentPatch } }] };
    default:
      return { text: 'All done: notes.txt line 10 now says ten.' };
  }
}

const firstHunkOnly = original.replace('line 2\n', 'line two\n');

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
  scratch = await mkdtemp(join(tmpdir(), 'warden-e2e-'));
  workspace = join(scratch, 'ws');
  await mkdir(workspace);
  await writeFile(join(workspace, 'notes.txt'), original);
  await writeFile(join(workspace, 'fix.patch'), fixPatch);
  await writeFile(join(workspace, 'broken.json'), '{\n  "a": 1\n  "b": 2\n}\n');
  await mkdir(join(workspace, 'build'));
  await writeFile(join(workspace, 'build', 'out.txt'), 'built\n');
  // A 2 GiB sparse file: deleting a tree that large is high risk (a small
  // rm -rf inside the writable roots is medium, and runs unasked under on-request).
  await writeFile(join(workspace, 'build', 'cache.bin'), '');
  await truncate(join(workspace, 'build', 'cache.bin'), 2 * 1024 ** 3);
  await mkdir(join(scratch, 'home'));
  outside = await mkdtemp('/var/tmp/warden-e2e-grant-');
  model = await startFakeModel(agentScript);
  vs = await openVSCode({
    ...t,
    workspace,
    settings: {
      'warden.server.path': t.warden,
      'warden.trace.server': 'messages',
      'warden.model.baseURL': model.url,
      'warden.model.name': 'fake-model',
    },
    // Warden's (and code-server's) home, config, state and cache stay out of the user's.
    env: { HOME: join(scratch, 'home'), XDG_CONFIG_HOME: join(scratch, 'config'), XDG_STATE_HOME: join(scratch, 'state'), XDG_CACHE_HOME: join(scratch, 'cache') },
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
  if (outside) await rm(outside, { recursive: true, force: true });
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

/** Opens a workspace file in an editor tab by Quick Open. */
async function openFile(name) {
  const page = vs.page;
  await page.keyboard.press('Control+P');
  await page.locator('.quick-input-widget input').fill(name);
  await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: name }).waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.tab.active', { hasText: name }).waitFor();
}

/** Waits until a file on disk has the wanted content; returns what it has. */
async function diskContent(name, want, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  let got;
  while ((got = await readFile(join(workspace, name), 'utf8')) !== want && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  return got;
}

/** The modal dialog, once it is shown. */
async function dialog() {
  const box = vs.page.locator('.monaco-dialog-box');
  await box.waitFor({ timeout: 30_000 });
  return box;
}

/**
 * The dialog's buttons as the user reads them from the default one: VS Code
 * lays the row out from the right on Linux and macOS (left on Windows), and
 * puts the closing button (Deny) right after the default.
 */
async function buttonsFromDefault(box) {
  const titles = await box.locator('.dialog-buttons .monaco-button').allInnerTexts();
  return process.platform === 'win32' ? titles : [...titles].reverse();
}

/** The default button: styled primary and focused, so Enter picks it. */
async function defaultButton(box) {
  const primary = await box.locator('.dialog-buttons .monaco-button:not(.secondary)').innerText();
  const focused = await vs.page.evaluate(() => document.activeElement?.textContent ?? '');
  assert.equal(focused, primary, 'the focused button is the primary one');
  return primary;
}

/** The Warden status bar item. */
function statusItem() {
  return vs.page.locator('.statusbar-item[id$="warden.status"]');
}

test('the server starts and the status bar shows its policy', async () => {
  const item = statusItem();
  // The policy comes from warden.status on the running server: the defaults,
  // since the test sets no policy.
  await item.filter({ hasText: 'on-request · workspace-write · net ask' }).waitFor({ timeout: 120_000 });
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
  await statusItem().filter({ hasText: 'on-request · workspace-write · net ask' }).waitFor({ timeout: 30_000 });
});

test('Apply Patch: a modal approval with the risk, then the Refactor Preview hunk by hunk; one hunk lands on disk', async () => {
  const page = vs.page;
  await updateUserSettings((s) => { s['warden.approvalPolicy'] = 'untrusted'; });
  await statusItem().filter({ hasText: 'untrusted' }).waitFor({ timeout: 30_000 });
  // notes.txt open in the editor: the patch is computed against its buffer.
  await openFile('notes.txt');
  await openFile('fix.patch');
  await runCommand('Warden: Apply Patch');

  const box = await dialog();
  const heading = await box.locator('.dialog-message-text').innerText();
  const detail = await box.locator('.dialog-message-detail').innerText();
  assert.match(heading, /apply a patch to 1 file: notes\.txt\? \[low risk\]/);
  assert.match(detail, /the untrusted policy asks before every patch/);
  assert.match(detail, /Risk: low: Edits 1 file inside the workspace/);
  // The server's actions: "Review…" (approving opens the review) the
  // default, Deny the dialog's closer (VS Code adds no Cancel).
  assert.deepEqual(await buttonsFromDefault(box), ['Review…', 'Deny', 'Allow for session', 'Deny and stop']);
  assert.equal(await defaultButton(box), 'Review…');
  await shot('approval-dialog');
  await box.locator('.monaco-button', { hasText: /^Review…$/ }).click();

  // Every hunk arrives unticked in the Refactor Preview.
  const preview = page.locator('#refactorPreview');
  const hunks = preview.locator('.monaco-list-row[aria-level="2"]');
  await hunks.nth(1).waitFor({ timeout: 30_000 });
  assert.equal(await hunks.count(), 2);
  assert.deepEqual(await hunks.locator('.edit-checkbox').evaluateAll((els) => els.map((e) => e.getAttribute('aria-checked'))), ['false', 'false']);
  // Accept the first hunk only.
  await hunks.nth(0).locator('.edit-checkbox').click();
  await shot('refactor-preview');
  await preview.locator('.monaco-button', { hasText: 'Apply' }).click();
  await preview.waitFor({ state: 'hidden' });
  // The server read back what landed and says so.
  await page.locator('.notifications-toasts', { hasText: /applied only in part.*only chunks 1 of 2 applied/s }).waitFor({ timeout: 30_000 });

  await openFile('notes.txt');
  await page.keyboard.press('Control+S');
  assert.equal(await diskContent('notes.txt', firstHunkOnly), firstHunkOnly);
});

test('Undo Last Change puts the file back, through the preview', async () => {
  const page = vs.page;
  await runCommand('Warden: Undo Last Change');
  const preview = page.locator('#refactorPreview');
  // Undo may ask first under the untrusted policy.
  const first = await Promise.race([
    preview.locator('.monaco-list-row').first().waitFor({ timeout: 30_000 }).then(() => 'preview'),
    page.locator('.monaco-dialog-box').waitFor({ timeout: 30_000 }).then(() => 'dialog'),
  ]);
  if (first === 'dialog') {
    await page.locator('.monaco-dialog-box .monaco-button', { hasText: /^(Allow once|Review…)$/ }).click();
  }
  await preview.locator('.monaco-list-row').first().waitFor({ timeout: 30_000 });
  await preview.locator('.monaco-list-row[aria-level="1"] .edit-checkbox').first().click();
  await preview.locator('.monaco-button', { hasText: 'Apply' }).click();
  await preview.waitFor({ state: 'hidden' });
  await openFile('notes.txt');
  await page.keyboard.press('Control+S');
  assert.equal(await diskContent('notes.txt', original), original);
});

test('closing the approval dialog denies: nothing changes', async () => {
  const page = vs.page;
  await openFile('fix.patch');
  await runCommand('Warden: Apply Patch');
  const box = await dialog();
  await page.keyboard.press('Escape');
  await box.waitFor({ state: 'hidden' });
  // The server reports the refusal; no preview opens and the file stays.
  await page.locator('.notifications-toasts', { hasText: /rejected/ }).waitFor({ timeout: 30_000 });
  assert.equal(await page.locator('#refactorPreview .monaco-list-row').count(), 0);
  assert.equal(await readFile(join(workspace, 'notes.txt'), 'utf8'), original);
});

/** Runs "Warden: Run Command…" with this command line. */
async function runShell(line) {
  await runCommand('Warden: Run Command…');
  const input = vs.page.locator('.quick-input-widget input');
  await vs.page.locator('.quick-input-widget', { hasText: 'Warden: Run Command' }).waitFor();
  await input.fill(line);
  await vs.page.keyboard.press('Enter');
}

const exists = (p) => access(p).then(() => true, () => false);

/** Clicks Allow once (or Review…) when the policy asks first; the untrusted policy asks before every command and undo. */
async function allowIfAsked(ready) {
  const page = vs.page;
  const first = await Promise.race([
    ready.waitFor({ timeout: 30_000 }).then(() => 'ready'),
    page.locator('.monaco-dialog-box').waitFor({ timeout: 30_000 }).then(() => 'dialog'),
  ]);
  if (first === 'dialog') {
    await page.locator('.monaco-dialog-box .monaco-button', { hasText: /^(Allow once|Review…)$/ }).click();
  }
}

test('Undo Last Change takes back what a command deleted and overwrote, reviewed in the preview like a patch', async () => {
  const page = vs.page;
  // Byte for byte: no final newline, CRLF, not UTF-8, an executable.
  const files = {
    'undo-me/a.txt': ['alpha\n', 0o644],
    'undo-me/no-eol.txt': ['no newline at the end', 0o644],
    'undo-me/dos.txt': ['one\r\ntwo\r\n', 0o644],
    'undo-me/data.bin': [Buffer.from([0, 1, 2, 0xff, 0xfe]), 0o640],
    'undo-me/run.sh': ['#!/bin/sh\necho run\n', 0o755],
    'kept.txt': ['kept\n', 0o644],
  };
  await mkdir(join(workspace, 'undo-me'));
  for (const [rel, [content, mode]] of Object.entries(files)) {
    await writeFile(join(workspace, rel), content);
    await chmod(join(workspace, rel), mode);
  }
  await runShell('rm -rf undo-me && echo overwritten > kept.txt');
  const ran = page.locator('.notifications-toasts', { hasText: /exited 0[\s\S]*deleted 5 files under undo-me\// });
  await allowIfAsked(ran);
  await ran.waitFor({ timeout: 30_000 });
  assert.equal(await exists(join(workspace, 'undo-me')), false);

  await runCommand('Warden: Undo Last Change');
  const preview = page.locator('#refactorPreview');
  const files1 = preview.locator('.monaco-list-row[aria-level="1"]');
  await allowIfAsked(files1.first());
  await files1.first().waitFor({ timeout: 30_000 });
  // What a text editor holds is reviewed, each file unticked; what a new
  // editor buffer cannot hold (not text, CRLF, a mode) Warden writes after.
  const listed = (await files1.allInnerTexts()).join('\n');
  for (const name of ['a.txt', 'no-eol.txt', 'kept.txt']) {
    assert.match(listed, new RegExp(name.replace('.', '\\.')), `the preview lists ${name}:\n${listed}`);
  }
  await shot('undo-command-preview');
  const boxes = files1.locator('.edit-checkbox');
  for (let i = 0; i < await boxes.count(); i++) {
    if (await boxes.nth(i).getAttribute('aria-checked') !== 'true') await boxes.nth(i).click();
  }
  await preview.locator('.monaco-button', { hasText: 'Apply' }).click();
  await preview.waitFor({ state: 'hidden' });
  await runCommand('File: Save All');
  for (const [rel, [content, mode]] of Object.entries(files)) {
    const want = Buffer.from(content);
    const deadline = Date.now() + 15_000;
    let got = await readFile(join(workspace, rel)).catch(() => null);
    while (!(got && want.equals(got)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      got = await readFile(join(workspace, rel)).catch(() => null);
    }
    assert.deepEqual(got, want, `${rel} back byte for byte`);
    assert.equal((await stat(join(workspace, rel))).mode & 0o777, mode, `${rel}'s mode`);
  }
});


test('Run Command: a high-risk command asks in an error dialog with its facts; Deny keeps the files, Allow once runs it sandboxed', async () => {
  const page = vs.page;
  await runShell('rm -rf build');
  let box = await dialog();
  assert.equal(await box.locator('.dialog-message-text').innerText(), 'Warden: run `rm -rf build`? [high risk]');
  const detail = await box.locator('.dialog-message-detail').innerText();
  assert.match(detail, /Risk: high: deletes 2 files \(2\.1 GB\) under build\//);
  assert.match(detail, /Sandbox: runs sandboxed \(workspace-write, network through the proxy, credential stores hidden\)/);
  assert.equal(await box.locator('.codicon-dialog-error').count(), 1, 'high risk is an error dialog');
  const buttons = await box.locator('.dialog-buttons .monaco-button').allInnerTexts();
  assert.ok(buttons.includes('Allow once') && buttons.includes('Deny'), buttons.join(', '));
  assert.ok(!buttons.some((b) => b.startsWith('Always allow')), 'a high-risk command is never offered "Always allow"');
  // Enter denies (Deny and stop is the default); Deny closes the dialog,
  // with no Cancel beside it.
  assert.deepEqual(await buttonsFromDefault(box), ['Deny and stop', 'Deny', 'Allow once']);
  assert.equal(await defaultButton(box), 'Deny and stop');
  await shot('approval-high-risk');
  await box.locator('.monaco-button', { hasText: /^Deny$/ }).click();
  await page.locator('.notifications-toasts', { hasText: '`rm -rf build` did not run' }).waitFor({ timeout: 30_000 });
  assert.equal(await exists(join(workspace, 'build', 'out.txt')), true);

  await runShell('rm -rf build');
  box = await dialog();
  await box.locator('.monaco-button', { hasText: /^Allow once$/ }).click();
  await page.locator('.notifications-toasts', { hasText: '`rm -rf build` exited 0 (sandboxed)' }).waitFor({ timeout: 30_000 });
  assert.equal(await exists(join(workspace, 'build')), false);
});

test('Ask: the agent\'s command and patch each ask in a modal, the patch is reviewed in the preview, the model hears what happened', async () => {
  const page = vs.page;
  await openFile('notes.txt');
  await runCommand('Warden: Ask…');
  await page.locator('.quick-input-widget', { hasText: 'Ask Warden' }).waitFor();
  await page.locator('.quick-input-widget input').fill('Change line 10 of notes.txt to say ten');
  await page.keyboard.press('Enter');

  // The command the agent wants to run, with its justification.
  let box = await dialog();
  assert.match(await box.locator('.dialog-message-text').innerText(), /^Warden: run `echo checked > agent-was-here\.txt`\?/);
  assert.match(await box.locator('.dialog-message-detail').innerText(), /The model's reason: leave a marker the user asked for/);
  // The status bar shows the running agent.
  await statusItem().filter({ hasText: 'Running the agent' }).waitFor();
  await shot('agent-approval');
  await box.locator('.monaco-button', { hasText: /^Allow once$/ }).click();

  // Its patch: asked (untrusted policy), then reviewed.
  box = await dialog();
  assert.match(await box.locator('.dialog-message-text').innerText(), /apply a patch to 1 file: notes\.txt/);
  await box.locator('.monaco-button', { hasText: /^Review…$/ }).click();
  const preview = page.locator('#refactorPreview');
  await preview.locator('.monaco-list-row[aria-level="2"]').first().waitFor({ timeout: 30_000 });
  await preview.locator('.monaco-list-row[aria-level="1"] .edit-checkbox').first().click();
  await preview.locator('.monaco-button', { hasText: 'Apply' }).click();
  await preview.waitFor({ state: 'hidden' });

  await page.locator('.notifications-toasts', { hasText: 'All done: notes.txt line 10 now says ten.' }).waitFor({ timeout: 30_000 });
  await openFile('notes.txt');
  await page.keyboard.press('Control+S');
  const want = original.replace('line 10\n', 'line ten (from the agent)\n');
  assert.equal(await diskContent('notes.txt', want), want);
  assert.equal(await readFile(join(workspace, 'agent-was-here.txt'), 'utf8'), 'checked\n');

  // The model was told the command's output and that the patch landed.
  const results = model.requests.at(-1).messages.filter((m) => m.role === 'tool').map((m) => m.content);
  assert.equal(results.length, 2);
  assert.match(results[1], /Success\. Updated the following files:\nM .*notes\.txt/);

  // The transcript is a click away.
  await runCommand('Warden: Show Transcript');
  await page.locator('.tab.active', { hasText: /\.md$/ }).waitFor();
  await page.locator('.editor-instance', { hasText: 'Change line 10 of notes.txt' }).first().waitFor();
  await shot('transcript');
});

test('Explain sends the selected lines with the explain mode; the answer is shown', async () => {
  const page = vs.page;
  await openFile('notes.txt');
  await page.keyboard.press('Control+G');
  await page.locator('.quick-input-widget input').fill(':5');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Home');
  for (let i = 0; i < 3; i++) await page.keyboard.press('Shift+ArrowDown');
  const asked = model.requests.length;
  await runCommand('Warden: Explain');
  await page.locator('.notifications-toasts', { hasText: 'These lines count from five to seven.' }).waitFor({ timeout: 30_000 });
  const prompt = model.requests[asked].messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n');
  assert.match(prompt, /Explain what the selected code does/);
  assert.match(prompt, /line 5\nline 6\nline 7/);
  assert.doesNotMatch(prompt, /line 9\n/);
});

test('Fix hands the agent the editor\'s errors for the file', async () => {
  const page = vs.page;
  await openFile('broken.json');
  // VS Code's JSON support reports the missing comma.
  await page.locator('.statusbar-item[id="status.problems"]', { hasText: /1/ }).waitFor({ timeout: 30_000 });
  const asked = model.requests.length;
  await runCommand('Warden: Fix Problems');
  await page.locator('.notifications-toasts', { hasText: 'The JSON needs a comma.' }).waitFor({ timeout: 30_000 });
  const prompt = model.requests[asked].messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n');
  assert.match(prompt, /Fix the problems the editor reports below/);
  assert.match(prompt, /line 3: Expected comma/);
});

test('the light bulb offers Ask agent…: it asks for the words, Escape sends nothing', async () => {
  const page = vs.page;
  await openFile('notes.txt');
  await page.keyboard.press('Control+G');
  await page.locator('.quick-input-widget input').fill(':5');
  await page.keyboard.press('Enter');
  const askAgent = async () => {
    // The menu can open before the server has the document or answered
    // (it then shows nothing or "No code actions"): close it and ask again.
    const row = page.locator('.action-widget .monaco-list-row', { hasText: 'Warden: Ask agent…' });
    for (let attempt = 1; ; attempt++) {
      await page.keyboard.press('Control+.');
      try {
        await row.waitFor({ timeout: 5_000 });
        break;
      } catch (err) {
        if (attempt === 5) throw err;
        await page.keyboard.press('Escape');
      }
    }
    await row.click();
    await page.locator('.quick-input-widget', { hasText: 'Ask Warden' }).waitFor();
  };
  const asked = model.requests.length;
  await askAgent();
  await page.keyboard.press('Escape');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });

  await askAgent();
  await page.locator('.quick-input-widget input').fill('Say hello from the light bulb');
  await page.keyboard.press('Enter');
  await page.locator('.notifications-toasts', { hasText: 'Hello from Ask agent.' }).waitFor({ timeout: 30_000 });
  // One run only: the Escape sent nothing.
  assert.equal(model.requests.length, asked + 1);
  const prompt = model.requests[asked].messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n');
  assert.match(prompt, /Say hello from the light bulb/);
  assert.match(prompt, /line 5/);
});

test('Cancel stops a running agent and its model stream', async () => {
  const page = vs.page;
  await runCommand('Warden: Ask…');
  await page.locator('.quick-input-widget', { hasText: 'Ask Warden' }).waitFor();
  await page.locator('.quick-input-widget input').fill('think for a long time');
  await page.keyboard.press('Enter');
  await statusItem().filter({ hasText: 'Running the agent' }).waitFor({ timeout: 30_000 });
  const before = model.abandoned;
  await runCommand('Warden: Cancel');
  await statusItem().filter({ hasNotText: 'Running the agent' }).waitFor({ timeout: 30_000 });
  const deadline = Date.now() + 10_000;
  while (model.abandoned === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.equal(model.abandoned, before + 1, 'the model stream was closed');
});

/** Runs "Warden: Ask…" with this instruction. */
async function ask(instruction) {
  await runCommand('Warden: Ask…');
  await vs.page.locator('.quick-input-widget', { hasText: 'Ask Warden' }).waitFor();
  await vs.page.locator('.quick-input-widget input').fill(instruction);
  await vs.page.keyboard.press('Enter');
}

/**
 * Sets this session's approval policy (workspace-write, no network) from the
 * status bar menu. Each step waits for its own quick pick by title: the menu
 * before it may still show a row naming the current policy.
 */
async function setSessionPolicy(approval) {
  const page = vs.page;
  const step = async (title, label) => {
    await page.locator('.quick-input-widget', { hasText: title }).waitFor();
    await pick(label);
  };
  await statusItem().click();
  await pick('Set Policy…');
  await step('approval policy (1/3)', approval);
  await step('sandbox (2/3)', 'workspace-write');
  await step('network from sandboxed commands (3/3)', 'Network off');
  await statusItem().filter({ hasText: `${approval} · workspace-write · net off` }).waitFor({ timeout: 30_000 });
}

/** The tool results the model has been sent in its latest request. */
function toolResults() {
  return model.requests.at(-1).messages.filter((m) => m.role === 'tool').map((m) => m.content);
}

test('grant: the agent asks for write access outside the workspace; the dialog names it; Allow once lands the file, an ungranted write stays blocked', async () => {
  const page = vs.page;
  await setSessionPolicy('on-request');
  const granted = join(outside, 'granted.txt');
  const plain = join(outside, 'plain.txt');
  await ask('Write the grant marker outside the workspace');

  let box = await dialog();
  assert.equal(await box.locator('.dialog-message-text').innerText(),
    `Warden: run \`touch ${granted}\` in the sandbox with write access to ${outside}? [medium risk]`);
  const detail = await box.locator('.dialog-message-detail').innerText();
  assert.match(detail, new RegExp(`Sandbox: runs sandboxed \\(.*\\) plus write access to ${outside}, nothing else`));
  assert.ok(detail.includes(`Risk: medium: grants write access to ${outside} (outside the writable roots`), detail);
  // Enter never allows a grant: Deny and stop is the default, Deny the
  // closer; no "Always allow" for a one-off path under /var/tmp.
  assert.deepEqual(await buttonsFromDefault(box), ['Deny and stop', 'Deny', 'Allow once', 'Allow for session']);
  assert.equal(await defaultButton(box), 'Deny and stop');
  await shot('grant-dialog');
  await box.locator('.monaco-button', { hasText: /^Allow once$/ }).click();
  // The next dialog may take this one's place before a look sees none:
  // wait for this one's question to go, not for every dialog to.
  await vs.page.locator('.monaco-dialog-box', { hasText: `touch ${granted}` }).waitFor({ state: 'hidden' });

  // The same write without a grant: high risk, asked with a deny the
  // default; allowed, it runs in the plain sandbox, which refuses it.
  box = await dialog();
  assert.equal(await box.locator('.dialog-message-text').innerText(), `Warden: run \`touch ${plain}\`? [high risk]`);
  assert.deepEqual(await buttonsFromDefault(box), ['Deny and stop', 'Deny', 'Allow once']);
  assert.equal(await defaultButton(box), 'Deny and stop');
  await box.locator('.monaco-button', { hasText: /^Allow once$/ }).click();

  await page.locator('.notifications-toasts', { hasText: 'Grant marker written.' }).waitFor({ timeout: 30_000 });
  assert.equal(await exists(granted), true, 'the granted write landed');
  assert.equal(await exists(plain), false, 'the ungranted write was refused by the sandbox');
  const results = toolResults();
  assert.equal(results.length, 2);
  assert.match(results[0], /^Exit code: 0\n/);
  assert.ok(results[0].includes(`Sandboxed: yes, with additional write access to ${outside}\n`), results[0]);
  assert.doesNotMatch(results[1], /^Exit code: 0\n/);
  assert.match(results[1], /Sandboxed: yes\n/);
});

test('grant: Deny writes nothing and the model is told', async () => {
  const page = vs.page;
  await ask('Try the grant again');
  const box = await dialog();
  assert.match(await box.locator('.dialog-message-text').innerText(), new RegExp(`in the sandbox with write access to ${outside}\\?`));
  await box.locator('.monaco-button', { hasText: /^Deny$/ }).click();
  await page.locator('.notifications-toasts', { hasText: 'Understood, not writing.' }).waitFor({ timeout: 30_000 });
  assert.equal(await exists(join(outside, 'denied.txt')), false);
  assert.match(toolResults().at(-1), /^The user denied this command/);
});

test('retry with a grant: a write the sandbox blocked is retried with write access to exactly that directory', async () => {
  const page = vs.page;
  await setSessionPolicy('on-failure');
  await writeFile(join(workspace, 'build.sh'), `#!/bin/sh\necho building\ntouch ${outside}/built.txt\n`, { mode: 0o755 });
  await runShell('./build.sh');
  const box = await dialog();
  assert.equal(await box.locator('.dialog-message-text').innerText(),
    `Warden: the sandbox blocked \`./build.sh\`. Retry it in the sandbox with write access to ${outside}? [medium risk]`);
  const detail = await box.locator('.dialog-message-detail').innerText();
  assert.match(detail, /"Run without sandbox" runs it with NO sandbox at all/);
  assert.deepEqual(await buttonsFromDefault(box), ['Deny and stop', 'Deny', 'Allow once', 'Allow for session', 'Run without sandbox']);
  assert.equal(await defaultButton(box), 'Deny and stop');
  await shot('grant-retry-dialog');
  await box.locator('.monaco-button', { hasText: /^Allow once$/ }).click();
  await page.locator('.notifications-toasts', { hasText: `\`./build.sh\` exited 0 (sandboxed) with write access to ${outside}` }).waitFor({ timeout: 30_000 });
  assert.equal(await exists(join(outside, 'built.txt')), true);
  // Back to the policy the settings gave before these tests.
  await setSessionPolicy('untrusted');
});

/** Picks the quick pick row whose label starts with this text. */
async function pick(label) {
  const page = vs.page;
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
  await row.waitFor();
  await row.click();
}

test('the status bar menu sets the policy for the session and cancels a running command', async () => {
  const page = vs.page;
  await statusItem().click();
  await pick('Set Policy…');
  await pick('on-failure');
  await pick('read-only');
  await pick('Network off');
  await statusItem().filter({ hasText: 'on-failure · read-only · net off' }).waitFor({ timeout: 30_000 });

  // A long command runs (sandboxed, without asking under on-failure) and
  // shows in the status bar; the menu cancels it.
  const started = Date.now();
  await runShell('sleep 60');
  await statusItem().filter({ hasText: 'Running a command' }).waitFor({ timeout: 30_000 });
  await shot('status-running');
  await statusItem().click();
  await pick('Cancel: Running a command');
  await statusItem().filter({ hasText: 'on-failure · read-only · net off', hasNotText: 'Running' }).waitFor({ timeout: 30_000 });
  assert.ok(Date.now() - started < 45_000, 'the command was cancelled, not waited for');
});
