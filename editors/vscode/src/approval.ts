// Warden's approval requests, shown as modal dialogs.
//
// The server asks through window/showMessageRequest. vscode-languageclient
// would show that as a toast, and VS Code hides toasts after a while (and
// entirely under Do Not Disturb) while the request stays pending. A modal
// dialog cannot be missed.
//
// The buttons are exactly the server's actions. "Deny" is the dialog's close
// affordance, so VS Code adds no Cancel of its own beside it, and Escape or
// closing the dialog answers Deny. VS Code makes the first non-closing button
// the default (focused, Enter) and moves the closing one next to it (Linux,
// macOS) or last (Windows): the closer can never be the default. So where
// Enter must not allow (a grant, a medium or high risk), "Deny and stop" is
// put first and is the default; elsewhere the server's order stands, its
// first action ("Allow once", "Review…") the default.

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
  /**
   * Buttons in the order to show, the first the default; `closes` marks the
   * close affordance (Deny); `action` is echoed back to the server.
   */
  buttons: { title: string; action: Action; closes?: true }[];
}

const messageTypeError = 1;
const messageTypeWarning = 2;

/**
 * Whether a request is one of Warden's approval prompts. A patch dialog whose
 * approval opens the review offers "Review…" instead of "Allow once".
 */
export function isApproval(params: ShowMessageRequestParams): boolean {
  return (params.actions ?? []).some((a) => a.title === 'Allow once' || a.title === 'Review…');
}

/**
 * Whether Enter must not allow: the request asks for a grant (its heading
 * says "in the sandbox with ...") or its risk is medium or high.
 */
export function needsDenyDefault(params: ShowMessageRequestParams, risk: RiskLevel | undefined): boolean {
  const heading = params.message.replace(/^\s+/, '').split(/\r?\n/)[0];
  return risk === 'medium' || risk === 'high' || / in the sandbox with /.test(heading);
}

/** The buttons in the order to show: see the top of this file. */
function buttonsFor(params: ShowMessageRequestParams, risk: RiskLevel | undefined): Dialog['buttons'] {
  const actions = params.actions ?? [];
  const approval = isApproval(params);
  let ordered = actions;
  const stop = actions.find((a) => a.title === 'Deny and stop');
  if (approval && stop && needsDenyDefault(params, risk)) {
    ordered = [stop, ...actions.filter((a) => a !== stop)];
  }
  return ordered.map((action) =>
    approval && action.title === 'Deny' ? { title: action.title, action, closes: true as const } : { title: action.title, action },
  );
}

/** The risk level the message states ("Risk: high", "risk high: ..."), if any. */
export function riskLevel(message: string): RiskLevel | undefined {
  const m = /\brisk\b[^\n]{0,20}?\b(low|medium|high)\b/i.exec(message);
  return m ? (m[1].toLowerCase() as RiskLevel) : undefined;
}

/**
 * Lays a request out as a modal dialog: the first line is the heading, the
 * rest the detail, and the heading names the risk level when the message
 * states one. Every action is a button (ordered as the top of this file
 * says); Escape or closing the dialog answers Deny, its close affordance.
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
  return {
    severity: params.type === messageTypeError || risk === 'high'
      ? 'error'
      : params.type === messageTypeWarning || isApproval(params) ? 'warning' : 'info',
    message,
    detail,
    risk,
    buttons: buttonsFor(params, risk),
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
