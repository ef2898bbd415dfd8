/** A call's facts, worked out once: the one place the engine asks the classifier about a call. */
import { baseWords, callIdentity, ownEntry, passesTime, statefulCall } from "../../common/identity/classify.js";
import type { CallFacts, RepeatKind, ToolCallInput, ToolHints } from "./call.js";
import type { ResolvedToolGuardOptions } from "./options.js";
import { isTracked } from "./repeat-ceiling.js";

/** A call's facts under the options and metadata hints, read by every rule. */
export function callFacts(call: ToolCallInput, options: ResolvedToolGuardOptions, hints: ToolHints = {}): CallFacts {
  const { name, args } = call;
  const tool = ownEntry(options.tools, name);
  const { key, effect, stripped, shell, command } = callIdentity(name, args, {
    tools: options.tools,
    readOnlyHints: hints.readOnlyHints,
    root: options.rules.root,
    ignoreArgs: ignoredArgs(options, name),
  });
  const words = baseWords(name); // the name's words read once, for both
  const stateful = statefulCall(name, args, tool, { words, shell });
  const waits = passesTime(words) || sleepsFirst(command);
  const repeat = repeatKindOf(args, waits, stateful, options);
  const cacheTtlMs = cacheTtl(name, tool, shell || stateful, options, hints);
  return { name, args, id: call.id, key, effect, stripped, shell, stateful, waits, repeat, cacheTtlMs };
}

/** The global `ignoreArgs` and the tool's own. */
export function ignoredArgs(options: ResolvedToolGuardOptions, tool: string): readonly string[] {
  const own = ownEntry(options.tools, tool)?.ignoreArgs;
  return own ? [...options.ignoreArgs, ...own] : options.ignoreArgs;
}

function cacheTtl(
  name: string,
  tool: ResolvedToolGuardOptions["tools"][string] | undefined,
  moving: boolean,
  options: ResolvedToolGuardOptions,
  hints: ToolHints,
): number | undefined {
  const cache = options.memory.cache;
  if (cache === false) return undefined;
  const own = tool?.cache;
  if (own === false) return undefined;
  if (own === undefined) {
    // Served by default: read-only and idempotent (the per-tool `readOnly` and `idempotent`, else the metadata's MCP
    // hints), and not a call whose answers move by themselves (a poll, a scroll, a wait: `stateful`) or a shell.
    if ((tool?.readOnly ?? ownEntry(hints.readOnlyHints ?? {}, name)) !== true) return undefined;
    if ((tool?.idempotent ?? ownEntry(hints.idempotentHints ?? {}, name)) !== true || moving) return undefined;
  }
  const seconds = typeof own === "object" ? own.ttlSeconds : cache.ttlSeconds;
  return seconds * 1000;
}

function repeatKindOf(
  args: unknown,
  waits: boolean,
  stateful: boolean,
  options: ResolvedToolGuardOptions,
): RepeatKind | undefined {
  if (!isTracked(options)) return undefined;
  if (waits || argsWait(args)) return "wait";
  return stateful ? "poll" : "count";
}

// A shell command that sleeps first: `sleep 60 && gh run view 123`, `sleep 2m; kubectl get pods`, `sleep 5`.
const SLEEPS_FIRST = /^\s*sleep\s+(\d+(?:\.\d+)?)[smhd]?\s*(?:&&|;|\n|$)/;

/**
 * Whether a shell's command line sleeps first; with a name that lets time pass (`passesTime`), what makes a call
 * wait (`CallFacts.waits`): repeating it is no stuck repeat.
 */
function sleepsFirst(command: string | undefined): boolean {
  if (command === undefined) return false; // no shell command (another tool, or unreadable arguments)
  const match = SLEEPS_FIRST.exec(command);
  return match !== null && Number(match[1]) > 0;
}

// Words of an argument's name that say the call waits (`wait`, `wait_seconds`, `waitMs`, `sleep`, `delay_ms`).
const WAIT_TEXT = /wait|sleep|delay|pause/i;
const WAIT_WORDS = new Set(["wait", "sleep", "delay", "pause"]);

/** Whether a call's arguments make it wait: a top-level argument named for waiting, `true` or a positive number. */
function argsWait(args: unknown): boolean {
  try {
    // Inside the try: a revoked Proxy throws even when asked whether it is an array.
    if (args === null || typeof args !== "object" || Array.isArray(args)) return false;
    for (const name in args) {
      if (!Object.hasOwn(args, name)) continue;
      const value = (args as Record<string, unknown>)[name];
      if (value !== true && !(typeof value === "number" && value > 0)) continue;
      // A cheap test first: most arguments set to a number are no wait (`limit: 10`, `page: 2`).
      if (!WAIT_TEXT.test(name)) continue;
      const words = name
        .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
        .toLowerCase()
        .split(/[^a-z0-9]+/);
      if (words.some((w) => WAIT_WORDS.has(w))) return true;
    }
  } catch {
    // Arguments that throw when read (a revoked Proxy, a getter) say nothing.
  }
  return false;
}
