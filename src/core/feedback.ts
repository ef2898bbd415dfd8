import { z } from "zod";
import { normalizePath } from "./classify.js";
import { parseOptions } from "./options.js";
import { canonicalJson, digest, toolCallSignature, truncate } from "./signature.js";
import { similarityRatio } from "./similarity.js";

/** A tool call as the duplicate handler compares it. */
export interface CallLike {
  tool: string;
  args: unknown;
}

/** A call that was blocked, with when (ms since the epoch) and at which escalation level. */
export interface BlockedCall extends CallLike {
  key: string;
  at: number;
  level: number;
}

/** Plain, serialisable state of a {@link DuplicateHandler}. */
export interface DuplicateState {
  pendingAcknowledgment: boolean;
  blockedCalls: BlockedCall[];
  /** Blocked duplicates counted toward escalation (reset by an acknowledgment only if `resetOnAcknowledge`). */
  strikes: number;
}

/**
 * The seed's acknowledgment patterns, plus a few close variants.
 *
 * @example
 * ```ts
 * DEFAULT_ACKNOWLEDGMENT_PATTERNS.some((p) => p.test("Instead, I will check the logs")); // true
 * ```
 */
export const DEFAULT_ACKNOWLEDGMENT_PATTERNS: readonly RegExp[] = [
  /instead.*I will/i,
  /instead.*I'll/i,
  /different approach/i,
  /let me try/i,
  /I'll (check|verify|diagnose)/i,
  /I will (check|verify|diagnose)/i,
  /the issue is/i,
];

/**
 * Words that make a response a plain retry, never an acknowledgment (DESIGN decision 7: the seed's test rejects
 * "Let me try writing the file again" though its patterns contain "let me try").
 *
 * @example
 * ```ts
 * DEFAULT_RETRY_PATTERNS[0].test("let me run it again"); // true
 * ```
 */
export const DEFAULT_RETRY_PATTERNS: readonly RegExp[] = [/\b(again|retry|retrying|once more|one more time)\b/i];

const optionsSchema = z
  .object({
    /** Text that acknowledges a block. Default {@link DEFAULT_ACKNOWLEDGMENT_PATTERNS}. */
    acknowledgmentPatterns: z.array(z.instanceof(RegExp)).default([...DEFAULT_ACKNOWLEDGMENT_PATTERNS]),
    /** Text that marks a plain retry. Default {@link DEFAULT_RETRY_PATTERNS}. */
    retryPatterns: z.array(z.instanceof(RegExp)).default([...DEFAULT_RETRY_PATTERNS]),
    /**
     * The strike at which each escalation level starts: 1 ask what will be different, 2 present options,
     * 3 ask the user (interrupt), 4 end the run. Default `[1, 2, 3, 4]`.
     */
    levelStrikes: z
      .tuple([z.number().int().min(1), z.number().int().min(1), z.number().int().min(1), z.number().int().min(1)])
      .default([1, 2, 3, 4])
      .refine((s) => s.every((n, i) => i === 0 || n > (s[i - 1] as number)), {
        message: "levelStrikes must increase: [ask, options, user, end]",
      }),
    /** Similarity of written content above which two writes to one path are one call. Default 0.9. */
    contentThreshold: z.number().min(0).max(1).default(0.9),
    /** Per tool, the argument fields that decide whether two calls are the same (others are ignored). */
    keys: z.record(z.string(), z.array(z.string())).default({}),
    /** Blocked calls remembered. Default 50. */
    historyLimit: z.number().int().min(1).default(50),
    /** The clock (ms). Default `Date.now`. */
    clock: z.custom<() => number>((v) => typeof v === "function").optional(),
  })
  .strict();

/** Options of {@link DuplicateHandler}. */
export type DuplicateHandlerOptions = z.input<typeof optionsSchema>;

const PATH_KEYS = ["path", "file_path", "filePath", "filename", "file"] as const;
const CONTENT_KEYS = ["content", "contents", "text", "data"] as const;

function field(args: unknown, names: readonly string[]): unknown {
  if (args === null || typeof args !== "object") return undefined;
  for (const name of names) if (Object.hasOwn(args, name)) return (args as Record<string, unknown>)[name];
  return undefined;
}

function pick(args: unknown, keys: readonly string[]): unknown {
  if (args === null || typeof args !== "object") return args;
  return Object.fromEntries(
    keys.filter((k) => Object.hasOwn(args, k)).map((k) => [k, (args as Record<string, unknown>)[k]]),
  );
}

/**
 * The feedback of seed 003 for a blocked duplicate: the tool, the arguments (JSON, cut at 500 characters), the
 * previous result of this exact call (cut at 1000), why it was blocked, and "What will you do differently?".
 *
 * @example
 * ```ts
 * duplicateFeedback("filesystem.write_file", { path: "x.py" }, '{"error": "diagnostics_failed"}');
 * ```
 */
export function duplicateFeedback(tool: string, args: unknown, previousResult: string, previousOk?: boolean): string {
  const outcome =
    previousOk === undefined ? "already failed/succeeded" : previousOk ? "already succeeded" : "already failed";
  return [
    "[DUPLICATE TOOL CALL BLOCKED]",
    `Tool: ${tool}`,
    `Arguments: ${truncate(canonicalJson(args, 2), 500)}`,
    "",
    "Previous result for this exact call:",
    truncate(previousResult, 1000),
    "",
    "This call was blocked because:",
    "- Repeating the same call will produce the same result",
    `- The previous attempt ${outcome}`,
    "",
    "To make progress, you must CHANGE your approach:",
    "1. If previous call failed: Fix the underlying issue first",
    "2. If previous call succeeded: Move to the next step",
    "3. If stuck: Ask the user for help or try an alternative",
    "",
    "What will you do differently?",
  ].join("\n");
}

/**
 * Seed 003's duplicate handler: builds the feedback for a blocked duplicate, remembers the blocked calls, counts
 * strikes toward the four escalation levels, and checks that the model's next response acknowledges the block
 * (its text says what it will do differently and is not a plain retry, or its next action differs from every
 * blocked call). Serialisable: {@link DuplicateHandler.toJSON} / {@link DuplicateHandler.fromJSON}.
 *
 * @example
 * ```ts
 * const handler = new DuplicateHandler();
 * handler.handleDuplicate("write_file", { path: "x.py" }, '{"error": "diagnostics_failed"}');
 * handler.validateResponse("Let me try writing the file again");                  // false
 * handler.validateResponse("Instead, I will check if pygame is installed first"); // true
 * ```
 */
export class DuplicateHandler {
  private readonly options: z.output<typeof optionsSchema>;
  private state: DuplicateState;

  constructor(options: DuplicateHandlerOptions = {}, state?: DuplicateState) {
    this.options = parseOptions(optionsSchema, options, "duplicate-handler");
    this.state = state ?? { pendingAcknowledgment: false, blockedCalls: [], strikes: 0 };
  }

  /** Whether the model still owes an acknowledgment. */
  get pendingAcknowledgment(): boolean {
    return this.state.pendingAcknowledgment;
  }

  /** The blocked calls, oldest first, with timestamps. */
  get blockedCalls(): readonly BlockedCall[] {
    return this.state.blockedCalls;
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

  /** A key for a call under the per-tool `keys` option (all arguments when the tool has none). */
  private keyOf(call: CallLike): string {
    const keys = this.options.keys[call.tool];
    return digest(toolCallSignature(call.tool, keys ? pick(call.args, keys) : call.args));
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
    const strikes = this.state.strikes + 1;
    const blocked: BlockedCall = {
      tool,
      args: JSON.parse(canonicalJson(args)),
      key: this.keyOf({ tool, args }),
      at: (this.options.clock ?? Date.now)(),
      level: levelFor(strikes, this.options.levelStrikes),
    };
    this.state = {
      pendingAcknowledgment: true,
      strikes,
      blockedCalls: [...this.state.blockedCalls, blocked].slice(-this.options.historyLimit),
    };
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
    if (!this.state.pendingAcknowledgment) return true;
    const retry = this.options.retryPatterns.some((p) => p.test(text));
    const acknowledges = !retry && this.options.acknowledgmentPatterns.some((p) => p.test(text));
    const differs =
      nextCalls !== undefined &&
      nextCalls.length > 0 &&
      nextCalls.every((c) => this.state.blockedCalls.every((b) => !this.isSemanticallyDuplicate(c, b)));
    if (acknowledges || differs) {
      this.state = { ...this.state, pendingAcknowledgment: false };
      return true;
    }
    return false;
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
    if (call1.tool !== call2.tool) return false;
    const path1 = field(call1.args, PATH_KEYS);
    const path2 = field(call2.args, PATH_KEYS);
    const content1 = field(call1.args, CONTENT_KEYS);
    const content2 = field(call2.args, CONTENT_KEYS);
    if (
      typeof path1 === "string" &&
      typeof path2 === "string" &&
      typeof content1 === "string" &&
      typeof content2 === "string"
    ) {
      if (normalizePath(path1, undefined) !== normalizePath(path2, undefined)) return false;
      if (content1 === content2) return true;
      return similarityRatio(content1, content2) > this.options.contentThreshold;
    }
    return this.keyOf(call1) === this.keyOf(call2);
  }

  /**
   * Forgets the strikes and the pending acknowledgment (e.g. when a person says to start over).
   *
   * @example
   * ```ts
   * handler.reset();
   * ```
   */
  reset(): void {
    this.state = { pendingAcknowledgment: false, blockedCalls: [], strikes: 0 };
  }

  /**
   * The handler's state as plain JSON.
   *
   * @example
   * ```ts
   * const copy = DuplicateHandler.fromJSON(JSON.parse(JSON.stringify(handler)));
   * ```
   */
  toJSON(): { state: DuplicateState } {
    return { state: structuredClone(this.state) };
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
    return new DuplicateHandler(options, structuredClone(json.state));
  }
}

/**
 * The escalation level for a number of strikes: the highest level whose starting strike has been reached.
 *
 * @example
 * ```ts
 * levelFor(3, [1, 2, 3, 4]); // 3
 * levelFor(3, [1, 3, 5, 7]); // 2
 * ```
 */
export function levelFor(strikes: number, levelStrikes: readonly number[]): number {
  let level = 0;
  for (const [i, start] of levelStrikes.entries()) if (strikes >= start) level = i + 1;
  return level;
}
