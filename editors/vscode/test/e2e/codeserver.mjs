// A real VS Code for end-to-end tests: code-server (VS Code in a browser) with
// the packaged extension installed, driven by playwright-core in Debian's
// chromium. .ci/vscode-setup.sh installs both; their locations come from the
// environment that the Makefile sets.
import { spawn, execFile } from 'node:child_process';
import { mkdtemp, mkdir, readdir, readFile, writeFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';

const run = promisify(execFile);

/** Where the tools are; null members are missing. */
export function tools() {
  const codeServer = process.env.WARDEN_CODE_SERVER || null;
  const browser = [process.env.WARDEN_CHROMIUM, '/usr/lib/chromium/chromium', '/usr/bin/chromium']
    .find((p) => p && existsSync(p)) || null;
  return {
    codeServer: codeServer && existsSync(codeServer) ? codeServer : null,
    browser,
    vsix: process.env.WARDEN_VSIX && existsSync(process.env.WARDEN_VSIX) ? process.env.WARDEN_VSIX : null,
    warden: process.env.WARDEN_BIN && existsSync(process.env.WARDEN_BIN) ? process.env.WARDEN_BIN : null,
  };
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function waitForHTTP(url, proc, output, deadlineMs) {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    if (proc.exitCode !== null) {
      throw new Error(`code-server exited with ${proc.exitCode}:\n${output()}`);
    }
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`code-server did not answer at ${url} within ${deadlineMs} ms:\n${output()}`);
}

/**
 * What a failed test needs to be understood from CI's output alone: the
 * toasts on screen, the tail of the Warden output channel and of the
 * extension host's log.
 */
async function explain(page, userData) {
  const toasts = await page.locator('.notifications-toasts').innerText({ timeout: 2_000 }).catch(() => '(none)');
  const logs = [];
  const walk = async (dir) => {
    for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (/^(Warden|exthost|remoteexthost)\.log$|^\d+-Warden\.log$/.test(e.name)) logs.push(p);
    }
  };
  await walk(join(userData, 'logs'));
  // A modal dialog left up blocks every test after it: say what it asks.
  const dialogs = await page.locator('.monaco-dialog-box').allInnerTexts().catch(() => []);
  let text = `toasts on screen:\n${toasts}\n`;
  if (dialogs.length > 0) text += `dialog on screen:\n${dialogs.join('\n---\n')}\n`;
  for (const p of logs) {
    const lines = (await readFile(p, 'utf8').catch(() => '')).split('\n');
    text += `--- last lines of ${p.slice(userData.length + 1)}:\n${lines.slice(-60).join('\n')}\n`;
  }
  return text;
}

/**
 * Starts code-server on a free loopback port with fresh user data, installs
 * the .vsix, writes the user settings, and opens the workspace folder in a
 * headless chromium. Returns the page and a stop function that ends both.
 */
export async function openVSCode({ codeServer, browser, vsix, workspace, settings, env = {}, artifacts }) {
  const home = await mkdtemp(join(tmpdir(), 'warden-vscode-'));
  const userData = join(home, 'user-data');
  const extensions = join(home, 'extensions');
  await mkdir(join(userData, 'User'), { recursive: true });
  await writeFile(join(userData, 'User', 'settings.json'), JSON.stringify({
    'security.workspace.trust.enabled': false,
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'chat.disableAIFeatures': true,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    // Text typed by the test lands exactly as typed.
    'editor.autoClosingBrackets': 'never',
    'editor.autoClosingQuotes': 'never',
    'editor.autoIndent': 'none',
    'editor.formatOnType': false,
    'editor.acceptSuggestionOnEnter': 'off',
    ...settings,
  }, null, 2));

  // VS Code leaves IPC sockets (vscode-git-*.sock, vscode-ipc-*.sock) in the
  // temporary directory when it is killed: keep them in home, removed below.
  const tmp = join(home, 'tmp');
  await mkdir(tmp, { mode: 0o700 });
  env = { TMPDIR: tmp, XDG_RUNTIME_DIR: tmp, ...env };
  const base = ['--user-data-dir', userData, '--extensions-dir', extensions];
  await run(codeServer, [...base, '--install-extension', vsix], { env: { ...process.env, ...env } });

  const port = await freePort();
  let log = '';
  const proc = spawn(codeServer, [
    ...base,
    '--bind-addr', `127.0.0.1:${port}`,
    '--auth', 'none',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    workspace,
  ], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  proc.stdout.on('data', (d) => { log += d; });
  proc.stderr.on('data', (d) => { log += d; });
  const url = `http://127.0.0.1:${port}/`;
  let chrome;
  const stop = async () => {
    if (chrome) await chrome.close().catch(() => {});
    // exitCode stays null for a process a signal ended: check both, and
    // listen before killing, or an exit already seen is waited for forever.
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    // Its extension host and language servers are in its process group
    // (detached above) and would otherwise write into home after it is gone.
    try { process.kill(-proc.pid, 'SIGKILL'); } catch { /* all gone */ }
    // WARDEN_E2E_KEEP=1 keeps code-server's logs and user data for a look.
    if (process.env.WARDEN_E2E_KEEP) console.log(`kept ${home}`);
    else await rm(home, { recursive: true, force: true });
  };
  try {
    await waitForHTTP(url + 'healthz', proc, () => log, 60_000);
    chrome = await chromium.launch({
      executablePath: browser,
      headless: true,
      args: [
        '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ],
    });
    const context = await chrome.newContext({ viewport: { width: 1400, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url.slice(0, -1) });
    const page = await context.newPage();
    await page.goto(`${url}?folder=${encodeURIComponent(workspace)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    return { page, url, home, log: () => log, stop, explain: () => explain(page, userData) };
  } catch (err) {
    await stop();
    throw err;
  }
}
