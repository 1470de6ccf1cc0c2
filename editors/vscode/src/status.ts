// What the status bar shows: the effective policy from warden.status and the
// job that is running, from the server's $/progress notifications.

/** The parts of warden.status the extension reads. */
export interface ServerStatus {
  version?: string;
  policy?: {
    approvalPolicy?: string;
    sandboxMode?: string;
    /** Whether commands get the network directly (network on). */
    networkAccess?: boolean;
    /** The network mode: off, ask (per host, through Warden's proxy) or on. */
    network?: string;
    writableRoots?: string[];
  };
  model?: { configured?: boolean; name?: string; baseURL?: string };
  jobs?: JobInfo[];
  commands?: string[];
}

export interface JobInfo {
  id: string;
  command?: string;
  title?: string;
  message?: string;
  percent?: number;
}

/** A $/progress value (WorkDoneProgressBegin, Report or End). */
export interface ProgressValue {
  kind: 'begin' | 'report' | 'end';
  title?: string;
  message?: string;
  percentage?: number;
}

export interface Progress {
  token: string | number;
  title: string;
  message?: string;
  percentage?: number;
}

/** Running work by progress token, in the order it started. */
export class ProgressTracker {
  private readonly running = new Map<string, Progress>();

  /** Applies one $/progress notification; returns whether anything changed. */
  update(token: string | number, value: ProgressValue): boolean {
    const key = String(token);
    switch (value.kind) {
      case 'begin':
        this.running.set(key, { token, title: value.title ?? 'Warden', message: value.message, percentage: value.percentage });
        return true;
      case 'report': {
        const p = this.running.get(key);
        if (!p) return false;
        if (value.message !== undefined) p.message = value.message;
        if (value.percentage !== undefined) p.percentage = value.percentage;
        return true;
      }
      case 'end':
        return this.running.delete(key);
    }
  }

  clear(): void {
    this.running.clear();
  }

  /** The most recently started work still running. */
  current(): Progress | undefined {
    let last: Progress | undefined;
    for (const p of this.running.values()) last = p;
    return last;
  }

  /** The token of the newest running work with this title. */
  tokenFor(title: string): string | number | undefined {
    let token: string | number | undefined;
    for (const p of this.running.values()) if (p.title === title) token = p.token;
    return token;
  }

  get size(): number {
    return this.running.size;
  }
}

/** The status bar item's text and tooltip. */
export interface StatusView {
  text: string;
  tooltip: string;
  /** The item stands out: the server is down or the policy never asks. */
  alarm: boolean;
}

export function statusView(state: 'starting' | 'running' | 'stopped', status: ServerStatus | undefined, progress: Progress | undefined): StatusView {
  if (state === 'stopped') {
    return { text: '$(error) Warden: stopped', tooltip: 'The Warden server is not running. Click for options.', alarm: true };
  }
  if (state === 'starting' || !status?.policy) {
    return { text: '$(loading~spin) Warden', tooltip: 'Warden is starting…', alarm: false };
  }
  const p = status.policy;
  // Servers before network ask only send networkAccess.
  const mode = p.network || (p.networkAccess ? 'on' : 'off');
  const net = `net ${mode}`;
  const policy = `${p.approvalPolicy ?? '?'} · ${p.sandboxMode ?? '?'} · ${net}`;
  const lines = [
    `Approval policy: ${p.approvalPolicy ?? 'unknown'}`,
    `Sandbox: ${p.sandboxMode ?? 'unknown'}${p.writableRoots?.length ? ` (also writable: ${p.writableRoots.join(', ')})` : ''}`,
    `Network from sandboxed commands: ${mode === 'on' ? 'allowed' : mode === 'ask' ? 'asked per host, through Warden\'s proxy' : 'blocked'}`,
    `Model: ${status.model?.configured ? `${status.model.name ?? ''}${status.model.baseURL ? ` at ${status.model.baseURL}` : ''}` : 'not configured'}`,
  ];
  let text = `$(shield) ${policy}`;
  if (progress) {
    const step = progress.message ? `: ${progress.message}` : '';
    const pct = progress.percentage !== undefined ? ` ${progress.percentage}%` : '';
    // The item is Warden's own: the "Warden: " every server title starts with is said already.
    const title = progress.title.replace(/^Warden: /, '');
    text = `$(sync~spin) ${truncate(title + step, 40)}${pct} · ${policy}`;
    lines.unshift(`Running: ${title}${step}${pct}`);
  }
  lines.push('', 'Click to cancel a job or change the policy.');
  return {
    text,
    tooltip: lines.join('\n'),
    alarm: p.approvalPolicy === 'never' && p.sandboxMode === 'danger-full-access',
  };
}

function truncate(s: string, n: number): string {
  return s.length <= n ? s : s.slice(0, n - 1) + '…';
}
