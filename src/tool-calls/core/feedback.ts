import { z } from "zod/v4";
import { parseOptions } from "../../common/options.js";
import { StatefulGuard } from "../../common/stateful-guard.js";
import {
  type BlockedCall,
  blockedCall,
  type CallLike,
  type EscalationState,
  emptyEscalationState,
  escalationOptionsSchema,
  levelFor,
  reduceEscalation,
  responseAcknowledges,
  sameInSubstance,
} from "./escalation.js";
import { duplicateFeedback } from "./texts.js";

/**
 * Plain, serialisable state of a {@link DuplicateHandler}: the escalation state the graph keeps in
 * `toolGuard.escalation`.
 *
 * @example
 * ```ts
 * const state: DuplicateState = handler.toJSON().state;
 * ```
 */
export type DuplicateState = EscalationState;

const optionsSchema = escalationOptionsSchema
  .pick({ acknowledgmentPatterns: true, retryPatterns: true, levelStrikes: true, contentThreshold: true })
  .extend({
    /** Per tool, the argument fields that decide whether two calls are the same (others are ignored). */
    keys: z.record(z.string(), z.array(z.string())).default({}),
    /** Blocked calls remembered. Default 50. */
    historyLimit: z.number().int().min(1).default(50),
    /** The clock (ms). Default `Date.now`. */
    clock: z.custom<() => number>((v) => typeof v === "function").optional(),
  })
  .strict();

/**
 * Options of {@link DuplicateHandler}: the escalation options it shares with the graph (acknowledgment and retry
 * patterns, strikes per level, content similarity), plus its own. Every field is optional.
 *
 * @example
 * ```ts
 * const options: DuplicateHandlerOptions = { levelStrikes: [1, 3, 5, 7], keys: { write_file: ["path"] } };
 * const handler = new DuplicateHandler(options);
 * ```
 *
 * @interface
 */
export type DuplicateHandlerOptions = z.input<typeof optionsSchema>;

/**
 * The duplicate handler: builds the feedback for a blocked duplicate, remembers the blocked calls, counts
 * strikes toward the four escalation levels, and checks that the model's next response acknowledges the block
 * (its text says what it will do differently and is not a plain retry, or its next action differs from every
 * blocked call). The same functions decide in the graph ({@link langgraph-guards!GuardedToolNode} and the escalation hook), over
 * the same state. Serialisable: {@link DuplicateHandler.toJSON} / {@link DuplicateHandler.fromJSON}.
 *
 * @example
 * ```ts
 * const handler = new DuplicateHandler();
 * handler.handleDuplicate("write_file", { path: "x.py" }, '{"error": "diagnostics_failed"}');
 * handler.validateResponse("Let me try writing the file again");                  // false
 * handler.validateResponse("Instead, I will check if pygame is installed first"); // true
 * ```
 */
export class DuplicateHandler extends StatefulGuard<DuplicateState> {
  private readonly options: z.output<typeof optionsSchema>;

  constructor(options: DuplicateHandlerOptions = {}, state?: DuplicateState) {
    super(state ?? emptyEscalationState(), emptyEscalationState);
    this.options = parseOptions(optionsSchema, options, "duplicate-handler");
  }

  /** Whether the model still owes an acknowledgment. */
  get pendingAcknowledgment(): boolean {
    return this.state.pending;
  }

  /** The blocked calls, oldest first, with timestamps. */
  get blockedCalls(): readonly BlockedCall[] {
    return this.state.blocked;
  }

  /** Strikes so far. */
  get strikes(): number {
    return this.state.strikes;
  }

  /**
   * The escalation level of the latest strike: 0 (none), 1 ask, 2 options, 3 ask the user, 4 end the run.
   *
   * @example
   * ```ts
   * new DuplicateHandler().escalationLevel; // 0
   * ```
   */
  get escalationLevel(): number {
    return levelFor(this.state.strikes, this.options.levelStrikes);
  }

  /**
   * Records a blocked duplicate (a strike) and returns the feedback for the model.
   *
   * @example
   * ```ts
   * handler.handleDuplicate("read_file", { path: "a.py" }, "print(1)"); // "[DUPLICATE TOOL CALL BLOCKED]\n..."
   * ```
   */
  handleDuplicate(tool: string, args: unknown, previousResult: string, previousOk?: boolean): string {
    const level = levelFor(this.state.strikes + 1, this.options.levelStrikes);
    const call = blockedCall({ tool, args }, level, (this.options.clock ?? Date.now)(), this.options.keys[tool]);
    // Each handled duplicate is its own response (the graph counts one strike per model response).
    const turn = `handler:${this.state.strikes + 1}:${this.state.blocked.length}`;
    this.state = reduceEscalation(this.state, {
      type: "strike",
      turn,
      call,
      blockedLimit: this.options.historyLimit,
    });
    return duplicateFeedback(tool, args, previousResult, previousOk);
  }

  /**
   * Whether the model's response acknowledges the block (always true when nothing is pending): its text matches
   * an acknowledgment pattern and no retry pattern, or its next calls (when given) all differ from every blocked
   * call. An acknowledgment clears the pending state.
   *
   * @example
   * ```ts
   * handler.validateResponse("The issue is a missing module; I'll check the imports"); // true
   * ```
   */
  validateResponse(text: string, nextCalls?: readonly CallLike[]): boolean {
    const ok = responseAcknowledges(
      this.state,
      { id: "", text, calls: nextCalls ?? [] },
      this.options,
      (tool) => this.options.keys[tool],
    );
    if (ok) this.state = reduceEscalation(this.state, { type: "acknowledge" });
    return ok;
  }

  /**
   * Whether two calls are the same in substance: the same tool and, for a file write (a path and a content), the
   * same path with content more than `contentThreshold` similar; otherwise the same arguments (only the tool's
   * `keys` when configured), keys in any order.
   *
   * @example
   * ```ts
   * handler.isSemanticallyDuplicate(
   *   { tool: "write_file", args: { path: "x.py", content: "print('a')\n" } },
   *   { tool: "write_file", args: { path: "./x.py", content: "print('a') \n" } },
   * ); // true
   * ```
   */
  isSemanticallyDuplicate(call1: CallLike, call2: CallLike): boolean {
    return sameInSubstance(call1, call2, {
      contentThreshold: this.options.contentThreshold,
      keys: this.options.keys[call1.tool],
    });
  }

  /**
   * Rebuilds a handler from {@link DuplicateHandler.toJSON} output (options are passed again: they hold RegExps).
   *
   * @example
   * ```ts
   * const copy = DuplicateHandler.fromJSON(saved, { levelStrikes: [1, 3, 5, 7] });
   * ```
   */
  static fromJSON(json: { state: DuplicateState }, options: DuplicateHandlerOptions = {}): DuplicateHandler {
    return new DuplicateHandler(options, { ...emptyEscalationState(), ...structuredClone(json.state) });
  }
}
