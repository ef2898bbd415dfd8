/** A tool call as every tool-call rule takes it: the call, and its facts (worked out once, by `callFacts`). */

import type { CallEffect } from "../../common/identity/classify.js";

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

/**
 * What the tools' metadata says of them, by tool name: MCP's `readOnlyHint` and `idempotentHint` (a `DecideContext` gives them).
 *
 * @example
 * ```ts
 * const hints: ToolHints = { readOnlyHints: { get_weather: true }, idempotentHints: { get_weather: true } };
 * ```
 */
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
