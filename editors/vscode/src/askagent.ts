// "Warden: Ask agent…": the server offers this code action only to a client
// that announces experimental.wardenAskAgent, and sends its warden.agent.run
// without an instruction. The client asks the user and fills the words in.
// Pure logic here (no vscode import) so the unit tests can run it in Node.

/** The capability that makes the server offer "Ask agent…". */
export const askAgentCapability = 'wardenAskAgent';

/** Adds wardenAskAgent: true to capabilities.experimental, keeping what is there. */
export function announceAskAgent(capabilities: { experimental?: unknown }): void {
  const experimental = capabilities.experimental;
  const base = experimental && typeof experimental === 'object' && !Array.isArray(experimental) ? experimental : {};
  capabilities.experimental = { ...base, [askAgentCapability]: true };
}

function agentArg(command: string, args: unknown[]): Record<string, unknown> | undefined {
  if (command !== 'warden.agent.run' || args.length !== 1) return undefined;
  const arg = args[0];
  return arg && typeof arg === 'object' && !Array.isArray(arg) ? (arg as Record<string, unknown>) : undefined;
}

/**
 * Whether executing command with args needs the user's instruction first: a
 * warden.agent.run in the ask (or no) mode with no words of its own. Fix,
 * explain, tests and comment carry their own instruction on the server.
 */
export function needsInstruction(command: string, args: unknown[]): boolean {
  const arg = agentArg(command, args);
  if (!arg) return false;
  const mode = arg.mode ?? '';
  const words = typeof arg.instruction === 'string' ? arg.instruction.trim() : '';
  return (mode === '' || mode === 'ask') && words === '';
}

/**
 * The arguments to send once the user answered: a copy with the typed
 * instruction (trimmed) in place. undefined (send nothing) when the user
 * cancelled or typed only blanks.
 */
export function withInstruction(args: unknown[], typed: string | undefined): unknown[] | undefined {
  const words = typed?.trim();
  if (!words) return undefined;
  return [{ ...(args[0] as Record<string, unknown>), instruction: words }];
}
