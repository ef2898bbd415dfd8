/** The words every guard and the run's end share: a block's rule, a stop's kind and reason, the artifacts. */

/**
 * The rule a blocked call broke: `consecutive` (identical to the previous call), `threshold` (too many identical
 * calls in the recent window), `redundant` (a read whose result is still valid, or a change repeated with nothing
 * changed since), and after a block `near_duplicate` (a response repeats a blocked call in substance without saying
 * what it will do differently) and `repeat_failure` (a tool keeps failing with the same error under changing
 * arguments), `cycle` (2 to 5 calls gone round twice with the same results each time), `file_edits` (a write of a
 * file already written `rules.fileEdits.blockAt` − 1 times in the run, or a rewrite of its whole content at
 * `blockRewritesAt`), and `repeat_ceiling` (an identical call already made `rules.repeatCeiling.blockAt` − 1 times in
 * the run, its answers changing or not). Not to be confused with the escalation level (1–4) that follows a block.
 *
 * @example
 * ```ts
 * const rule: BlockRule = "redundant";
 * ```
 */
export type BlockRule =
  | "consecutive"
  | "threshold"
  | "redundant"
  | "near_duplicate"
  | "repeat_failure"
  | "cycle"
  | "file_edits"
  | "repeat_ceiling";

/**
 * Which limit stopped a run (`"steps"`: LangGraph's step budget, `recursionLimit`, would not allow another turn).
 *
 * @example
 * ```ts
 * if (state.loopGuard.stopped?.kind === ("loop" satisfies StopKind)) notifyTeam();
 * ```
 */
export type StopKind = "loop" | "handoffs" | "iterations" | "runtime" | "cost" | "tokens" | "failures" | "steps";

/**
 * Why a run was stopped: the limit, the value reached, and a sentence for people and models.
 *
 * @example
 * ```ts
 * const reason: StopReason | null = guard.checkLimits(); // { kind, value, limit, message }
 * ```
 */
export interface StopReason {
  /** Which limit stopped the run. */
  kind: StopKind;
  /** The value that reached the limit (similarity 0..1 for a loop). */
  value: number;
  /** The limit (threshold for a loop). */
  limit: number;
  /** A sentence saying why the run stopped, for people and models. */
  message: string;
  /** The limit is the task's budget, shared by every agent of the task (`configurable.taskBudget`), not the agent's own. */
  task?: true | undefined;
}

/**
 * What a blocked call's ToolMessage carries in `artifact.guard` (never sent to the model).
 *
 * @example
 * ```ts
 * const guard = (message.artifact as { guard?: GuardArtifact } | undefined)?.guard;
 * if (guard?.blocked) console.log(`blocked (${guard.rule}), escalation ${guard.escalation}`);
 * ```
 */
export interface GuardArtifact {
  /** Always `true`: the call was blocked (it did not run). */
  blocked: true;
  /** The rule the call broke. */
  rule: BlockRule;
  /** Identical calls the window would have held with this one. */
  count: number;
  /** The rule's message (without the arguments and the previous result). */
  message: string;
  /** Escalation level of the block (1 ask, 2 options, 3 the user was asked, 4 the run ended); 0 when off. */
  escalation?: number | undefined;
  /** Strikes of the thread with this block. */
  strikes?: number | undefined;
  /** The call was held back with a reminder to acknowledge (no strike). */
  reminder?: boolean | undefined;
  /** At level 3: the person's answer given to the model. */
  answer?: string | undefined;
}

/**
 * What a ToolMessage served from the result cache carries in `artifact.guard` (never sent to the model): the call
 * did not run; its answer is the result of the earlier identical call `from`.
 *
 * @example
 * ```ts
 * const guard = (message.artifact as { guard?: ServedArtifact } | undefined)?.guard;
 * if (guard?.served) console.log(`served from the cache: the result of ${guard.from}`);
 * ```
 */
export interface ServedArtifact {
  /** Always `true`: the call was answered from the result cache (it did not run). */
  served: true;
  /** The call id of the earlier answer whose result was served. */
  from: string;
  /** The call repeated `from` under the same id in one response: its answer is a note pointing at that answer. */
  sameId?: true | undefined;
}

/** What a not-run call's ToolMessage carries in `artifact.guard` when the run stopped before it. */
export interface StopArtifact {
  stopped: true;
  kind: string;
}

/** Why the run ends, as the final message's `response_metadata.guard` carries it. */
export interface EndReason {
  /** Which guard or limit ended the run (`"steps"`, `"loop"`, `"iterations"`, `"escalation"`, …). */
  kind: string;
  /** The canned message: the reason in words, and the fallback final message. */
  message: string;
  /** More of the guard's reason (level, tool, value, limit…). */
  [key: string]: unknown;
}
