// Warden's approval requests, shown as modal dialogs.
//
// The server asks through window/showMessageRequest. vscode-languageclient
// would show that as a toast, and VS Code hides toasts after a while (and
// entirely under Do Not Disturb) while the request stays pending. A modal
// dialog cannot be missed.
//
// The buttons are exactly the server's actions, in its order, and none is
// the dialog's close affordance: VS Code makes the first non-closing button
// the default (focused, Enter), and moves the closing one out of order (next
// to the default on Linux and macOS, last on Windows). So the server's first
// action is the default (Deny for high risk, never "Allow once"), the rest
// follow it in order (Linux and macOS lay a row out from the right), and VS
// Code adds its own Cancel, which answers null: dismissing denies.

/** A MessageActionItem as the server sent it (extra properties preserved). */
export interface Action {
  title: string;
  [key: string]: unknown;
}

export interface ShowMessageRequestParams {
  type: number;
  message: string;
  actions?: Action[];
}

export type RiskLevel = 'low' | 'medium' | 'high';

export interface Dialog {
  severity: 'error' | 'warning' | 'info';
  /** The dialog's heading. */
  message: string;
  /** The body: what runs, where, why, sandboxed or not, the risk facts. */
  detail: string;
  risk?: RiskLevel;
  /** Buttons in the server's order, the first the default; `action` is echoed back to the server. */
  buttons: { title: string; action: Action }[];
}

const messageTypeError = 1;
const messageTypeWarning = 2;

/** Whether a request is one of Warden's approval prompts. */
export function isApproval(params: ShowMessageRequestParams): boolean {
  return (params.actions ?? []).some((a) => a.title === 'Allow once');
}

/** The risk level the message states ("Risk: high", "risk high: ..."), if any. */
export function riskLevel(message: string): RiskLevel | undefined {
  const m = /\brisk\b[^\n]{0,20}?\b(low|medium|high)\b/i.exec(message);
  return m ? (m[1].toLowerCase() as RiskLevel) : undefined;
}

/**
 * Lays a request out as a modal dialog: the first line is the heading, the
 * rest the detail, and the heading names the risk level when the message
 * states one. Every action is a button in the server's order; a dismissed
 * dialog (VS Code's own Cancel, Escape) is a denial.
 */
export function dialogFor(params: ShowMessageRequestParams): Dialog {
  const lines = params.message.replace(/\r\n/g, '\n').split('\n');
  while (lines.length > 0 && lines[0].trim() === '') lines.shift();
  const heading = (lines.shift() ?? '').trim();
  const detail = lines.join('\n').trim();
  const risk = riskLevel(params.message);
  let message = heading || 'Warden';
  if (risk && !new RegExp(`\\b${risk}\\b`, 'i').test(heading)) {
    message = `${message} [${risk} risk]`;
  }
  const actions = params.actions ?? [];
  return {
    severity: params.type === messageTypeError || risk === 'high'
      ? 'error'
      : params.type === messageTypeWarning || isApproval(params) ? 'warning' : 'info',
    message,
    detail,
    risk,
    buttons: actions.map((action) => ({ title: action.title, action })),
  };
}

/**
 * The answer for the server: the action the user picked, as sent, or null
 * when the dialog was dismissed without a choice.
 */
export function answer(dialog: Dialog, pickedTitle: string | undefined): Action | null {
  if (pickedTitle === undefined) return null;
  return dialog.buttons.find((b) => b.title === pickedTitle)?.action ?? null;
}
