/** A tool call as every tool-call rule takes it: the call, and its facts (worked out once, by `callFacts`). */

import type { CallEffect } from "../../common/identity/classify.js";
import type { ResponseInput } from "./escalation.js";
import type { RecordedResult } from "./repetition.js";

/**
 * A tool call as the guards see it.
 *
 * @example
 * ```ts
 * const call: ToolCallInput = { name: "read_file", args: { path: "a.py" }, id: "call_1" };
 * ```
 */
export interface ToolCallInput {
  /** The tool's name. */
  name: string;
  /** The call's arguments as the model sent them (usually an object). */
  args: unknown;
  /** The tool-call id, when the model gave one. */
  id?: string | undefined;
  /** The id the model sent (`id` is made distinct where the model sent one id twice in a response). */
  modelId?: string | undefined;
}

/**
 * What a recorded call is to the ceiling: `"wait"` lets time pass (a tool that waits by its name, or arguments that
 * wait: `wait_seconds: 30`), which restarts every count and is not counted itself; `"poll"` a stateful call, counted
 * until its answer moves; `"count"` any other call.
 *
 * @example
 * ```ts
 * const kind: RepeatKind = "poll"; // get_job_status({ id: 7 }): counted until its normalized answer moves
 * ```
 */
export type RepeatKind = "count" | "poll" | "wait";

/** MCP's `readOnlyHint` and `idempotentHint` by tool name (a `DecideContext` gives them). */
export interface ToolHints {
  /** Metadata `readOnlyHint` by tool name. */
  readOnlyHints?: Readonly<Record<string, boolean | undefined>> | undefined;
  /** Metadata `idempotentHint` by tool name (with `readOnlyHint`, a tool whose repeats the cache serves). */
  idempotentHints?: Readonly<Record<string, boolean | undefined>> | undefined;
}

/**
 * What every tool-call rule asks of one call, worked out once per call and plan (`callFacts`): its identity
 * and effect, whether it is a shell or a stateful call, whether it lets time pass, what it is to the repeat ceiling,
 * and how long the result cache keeps its answer.
 *
 * @example
 * ```ts
 * const facts: CallFacts = callFacts({ name: "read_file", args: { path: "a.py" } }, options);
 * facts.effect; // { kind: "read", paths: ["a.py"] }
 * ```
 */
export interface CallFacts extends ToolCallInput {
  /** Digest of the call's canonical signature. */
  key: string;
  /** What the call does to the files and state the guards track. */
  effect: CallEffect;
  /** Volatile metadata was left out of `key` (see `callIdentity`): no cached answer is served for it, or kept. */
  stripped?: "undeclared" | "unknown" | undefined;
  /** A bash-like tool (`isShellTool`). */
  shell: boolean;
  /** A call whose answers move by themselves (a poll, a scroll: `isStatefulCall`, or the tool's `stateful`). */
  stateful: boolean;
  /** It lets time pass (a wait tool, a command that sleeps first). */
  waits: boolean;
  /** What it is to the repeat ceiling; `undefined` when the ceiling is off for every tool. */
  repeat: RepeatKind | undefined;
  /** How long the result cache serves its answer (ms), or `undefined` when its repeats are not served. */
  cacheTtlMs: number | undefined;
}

/**
 * Run-time switches and what the guards know about the response a call belongs to.
 *
 * @example
 * ```ts
 * decideToolCall(state, call, options, { disabled: true }); // the per-run off switch
 * ```
 */
export interface DecideContext {
  /**
   * The agent deciding (where its graph runs: `agentOf`): a state of another agent is forgotten and its run starts
   * afresh. Absent outside a graph.
   */
  agent?: string | undefined;
  /** The per-run off switch: nothing is blocked, calls are still recorded. */
  disabled?: boolean | undefined;
  /** Metadata `readOnlyHint` by tool name. */
  readOnlyHints?: Readonly<Record<string, boolean | undefined>> | undefined;
  /** Metadata `idempotentHint` by tool name (with `readOnlyHint`, a tool whose repeats the cache serves). */
  idempotentHints?: Readonly<Record<string, boolean | undefined>> | undefined;
  /**
   * Whether the ToolMessage of call id `callId` is still in the conversation with a result of exact digest
   * `digest`: a repeat is served from the cache only then (after trimming or summarization the call runs). Without
   * it nothing is served.
   */
  answerPresent?: ((callId: string, digest: string) => boolean) | undefined;
  /**
   * The model response the call belongs to (its id, text and all its calls): needed for the acknowledgment check
   * and to count one strike per response. Without it, each blocked call is its own response.
   */
  response?: ResponseInput | undefined;
  /** Every tool the model can call (named in the level-2 options). */
  toolNames?: readonly string[] | undefined;
  /** The clock for blocked-call timestamps and the cache's time-to-live (ms). Default `Date.now`. */
  clock?: (() => number) | undefined;
  /** Whether `response` acknowledges the pending block ({@link planToolCalls} works it out when omitted). */
  acknowledged?: boolean | undefined;
  /**
   * Another call of the response runs (it is new): the response makes progress, so its blocked repeats stay below
   * the level that asks a person or ends the run ({@link planTurn} sets it).
   */
  progressing?: boolean | undefined;
  /**
   * What a call would answer now, by its tool's own freshness check (a tool that serves repeats and can tell when
   * what it reads changed: the file tools), or `undefined` when it cannot tell. A call none of whose answers now is
   * the result a block would quote is no repeat under any rule: it runs, and no block quotes stale content. Asked
   * only of a call that some repeat rule would block.
   */
  answersNow?: ((call: CallFacts) => readonly AnswerNow[] | undefined) | undefined;
  /**
   * Whether what a call reads has changed since `previous` (the result a block would quote) was recorded, by the
   * adapter's own check: a read-only shell command whose files are known has them fingerprinted when it runs, the
   * fingerprint kept with its recorded result, and compared again here. `true`: they changed, and the call is no
   * repeat under any rule (as with {@link DecideContext.answersNow}); `false` or `undefined` (unchanged, or it
   * cannot tell): the rules decide. Asked only of a call that some repeat rule would block.
   */
  readsChanged?: ((call: CallFacts, previous: RecordedResult) => boolean | undefined) | undefined;
}

/**
 * One answer a call could give now (see {@link DecideContext.answersNow}): a tool that answers a repeat with a
 * reference to the earlier result gives that reference and the full answer.
 *
 * @example
 * ```ts
 * const now: AnswerNow = { ok: true, text: "1\tDEBUG = False" };
 * ```
 */
export interface AnswerNow {
  /** Whether the call would succeed. */
  ok: boolean;
  /** The text it would answer. */
  text: string;
}

/**
 * What a call that ran returned.
 *
 * @example
 * ```ts
 * const outcome: CallOutcome = { ok: false, text: "Error: file not found" };
 * ```
 */
export interface CallOutcome {
  /** Whether the call succeeded. */
  ok: boolean;
  /** The result's text. */
  text: string;
  /** The model was sent a note that the result is unchanged instead of `text` (see {@link unchangedNote}). */
  deduped?: boolean | undefined;
  /** A shell read's files' fingerprint, taken before it ran: a repeat is judged against it. */
  reads?: string | undefined;
}
