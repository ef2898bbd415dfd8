/** The events the `toolGuard` reducer applies (state.ts): what a node writes to the channel. */
import type { CallEffect } from "../../common/identity/classify.js";
import type { BlockRule } from "../../common/vocabulary.js";
import type { RepeatKind } from "./call.js";
import type { EscalationEvent } from "./escalation.js";
import type { OperationLimits } from "./redundancy.js";
import type { RecordedResult } from "./repetition.js";
import type { CacheTerms } from "./result-cache.js";

/**
 * A call that would have been blocked in observe mode (or was blocked in enforce mode), kept for inspection.
 *
 * @example
 * ```ts
 * const last: ObservedBlock | undefined = state.toolGuard.observed.at(-1); // { tool, rule, count, enforced }
 * ```
 */
export interface ObservedBlock {
  /** The tool's name. */
  tool: string;
  /** The rule that blocked the call (or would have). */
  rule: BlockRule;
  /** Identical calls the window would have held with this one. */
  count: number;
  /** The tool-call id, when the model gave one. */
  toolCallId?: string | undefined;
  /** Whether the call was really blocked (`false` in observe mode). */
  enforced: boolean;
}

/**
 * A change to `ToolGuardState`. Nodes return events and the channel's reducer applies them, so parallel
 * writers never overwrite each other.
 *
 * @example
 * ```ts
 * const events: GuardEvent[] = decideToolCall(state, call, options).events;
 * const next = reduceToolGuard(state, events);
 * ```
 */
export type GuardEvent =
  | {
      /** An allowed call is recorded (in the window; a change makes earlier reads stale). */
      type: "call";
      /** The call's sequence number. */
      seq: number;
      /** Digest of the call's canonical signature. */
      key: string;
      /** The tool's name. */
      tool: string;
      /** What the call does to the files and state the guards track. */
      effect: CallEffect;
      /** The window's size (older calls are dropped). */
      windowSize: number;
      /** The call's writes count toward the file-edits rule (see `countsEdits`). */
      edits?: true | undefined;
      /** What the call is to the repeat ceiling (absent: the ceiling is off, nothing is counted). */
      repeat?: RepeatKind | undefined;
    }
  | {
      /** The result of a recorded call. */
      type: "result";
      /** The sequence number of the call it belongs to. */
      seq: number;
      /** Digest of the call's canonical signature. */
      key: string;
      /** The tool's name. */
      tool: string;
      /** What the call does to the files and state the guards track. */
      effect: CallEffect;
      /** The call's outcome. */
      result: RecordedResult;
      /** Bounds of the operation history. */
      limits: OperationLimits;
      /** The ToolMessage's call id (where the model reads the result). */
      callId?: string | undefined;
      /** The model was sent a note that the result is unchanged, not the result: the earlier answer stays the one. */
      deduped?: boolean | undefined;
      /** The call's writes were counted toward the file-edits rule: a failure takes them back. */
      edits?: true | undefined;
      /** A successful result is cached: until when (ms), and the entries kept. */
      cache?: CacheTerms | undefined;
    }
  | {
      /** A call was answered from the result cache without running (counted; the repeat ceiling counts it). */
      type: "served";
      /** Digest of the call's canonical signature. */
      key: string;
      /** The tool's name. */
      tool: string;
      /** What the call is to the repeat ceiling (absent: the ceiling is off). */
      repeat?: RepeatKind | undefined;
    }
  | {
      /** A call was blocked, or would have been in observe mode (counted and kept for inspection). */
      type: "block";
      /** The block. */
      block: ObservedBlock;
      /** Blocks kept (older ones are dropped). */
      observedLimit: number;
    }
  | {
      /** Everything is forgotten: the state becomes empty. */
      type: "reset";
    }
  | {
      /** A change made by someone else (a person's own tool call in a recorded run): earlier results may be stale. */
      type: "external";
      /** What the change did. */
      effect: CallEffect;
    }
  /** The events that follow are the memory of agent `agent`: a state of another agent is forgotten first. */
  | {
      /** The agent deciding (see `ToolGuardState.agent`). */
      type: "agent";
      /** Where the agent's graph runs (`agentOf`). */
      agent: string;
    }
  /** A new run starts (see `runBoundary`): per-run memory starts afresh; `keep` says what stays. */
  | {
      /** A new run starts. */
      type: "run";
      /** What marks the run (the id of the person's message that started it). */
      run: string;
      /** What stays from the previous run. */
      keep: {
        /** The redundant rule's operations (`acrossRuns: "keep"`). */
        operations: boolean;
        /** The escalation state: strikes, the acknowledgment owed, the blocked calls (`escalation.carryStrikes`). */
        strikes: boolean;
      };
    }
  | EscalationEvent;
