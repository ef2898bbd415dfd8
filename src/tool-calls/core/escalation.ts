import { z } from "zod/v4";
import { normalizePath } from "../../common/identity/classify.js";
import { canonicalJson, digest, toolCallSignature } from "../../common/identity/signature.js";
import { similarityRatio } from "../../common/similarity/similarity.js";

/**
 * Phrases that acknowledge a block (say what will be done differently), with close variants.
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
 * Words that make a response a plain retry, never an acknowledgment: "Let me try writing the file again" does not
 * acknowledge a block, though "let me try" alone is one of the acknowledgment patterns.
 *
 * @example
 * ```ts
 * DEFAULT_RETRY_PATTERNS[0].test("let me run it again"); // true
 * ```
 */
export const DEFAULT_RETRY_PATTERNS: readonly RegExp[] = [/\b(again|retry|retrying|once more|one more time)\b/i];

const strike = z.number().int().min(1);

/** A RegExp (z.custom, not z.instanceof: the .d.ts then names `ZodCustom`, which zod 3's `zod/v4` has too). */
const regExp = z.custom<RegExp>((value) => value instanceof RegExp, { error: "expected a RegExp" });

/**
 * Options of the escalation that follows a block, validated with the guard options (`escalation`).
 *
 * @example
 * ```ts
 * const escalation = escalationOptionsSchema.parse({ levelStrikes: [1, 3, 5, 7] });
 * escalation.maxReminders; // 1 (the default, filled in)
 * ```
 */
export const escalationOptionsSchema = z
  .object({
    /** Count strikes and escalate. `false`: no strikes, every block asks the same question. */
    enabled: z.boolean().default(true),
    /**
     * The strike at which each level starts: 1 ask what will be different, 2 present options, 3 ask the user
     * (`interrupt()`), 4 end the run. Default `[1, 2, 3, 4]`. Levels 3 and 4 need
     * {@link langgraph-guards!escalationHook | escalationHook}.
     */
    levelStrikes: z
      .tuple([strike, strike, strike, strike])
      .default([1, 2, 3, 4])
      .refine((s) => s.every((n, i) => i === 0 || n > (s[i - 1] as number)), {
        message: "levelStrikes must increase: [ask, options, user, end]",
      }),
    /**
     * The identical call from which a block may ask a person (level 3); ending the run (level 4) waits as many calls
     * more as `levelStrikes` puts between the two levels. Until then a strike stays at level 2. Default 5: asking or
     * stopping at the 5th identical call at the earliest, as Cline, Qwen Code and deer-flow do (OpenRouter at the
     * 6th). `1`: the levels follow `levelStrikes` alone.
     */
    askFrom: z.number().int().min(1).default(5),
    /**
     * Reminders given to responses that neither acknowledge a block nor change the blocked call (a near-duplicate
     * of it), before such a response counts as a strike. Default 1.
     */
    maxReminders: z.number().int().min(0).default(1),
    /** Similarity of written content above which two writes to one path are the same call. Default 0.9. */
    contentThreshold: z.number().min(0).max(1).default(0.9),
    /**
     * After this many failures in a row of one tool with the same error (with different arguments), its next call
     * is blocked unless the response says what it will do differently. Default 5 (on real runs lower values
     * mostly block retries that went on to other errors); 0 switches it off.
     */
    sameErrorThreshold: z.number().int().min(0).default(5),
    /** Text that acknowledges a block. Default {@link DEFAULT_ACKNOWLEDGMENT_PATTERNS}. */
    acknowledgmentPatterns: z.array(regExp).default([...DEFAULT_ACKNOWLEDGMENT_PATTERNS]),
    /** Text that marks a plain retry. Default {@link DEFAULT_RETRY_PATTERNS}. */
    retryPatterns: z.array(regExp).default([...DEFAULT_RETRY_PATTERNS]),
    /** Blocked calls remembered for the near-duplicate check (their arguments are kept in state). Default 5. */
    blockedLimit: z.number().int().min(1).default(5),
    /**
     * Carry escalation into the next run of the thread (a new person's message): the strikes, the acknowledgment
     * still owed and the blocked calls, so a repeat of a blocked call in the next run is held back and escalates
     * from where the last run left off. Default false: each run starts with no strikes. A run ended at level 4 is
     * forgiven by the person's next message either way.
     */
    carryStrikes: z.boolean().default(false),
  })
  .strict();

/**
 * Escalation options as the user writes them.
 *
 * @example
 * ```ts
 * const escalation: EscalationOptions = { levelStrikes: [1, 3, 5, 7], maxReminders: 2 };
 * ```
 *
 * @interface
 */
export type EscalationOptions = z.input<typeof escalationOptionsSchema>;
/**
 * Escalation options with their defaults.
 *
 * @example
 * ```ts
 * const resolved: ResolvedEscalationOptions = resolveToolGuardOptions().escalation;
 * ```
 *
 * @interface
 */
export type ResolvedEscalationOptions = z.output<typeof escalationOptionsSchema>;

/**
 * A tool call as the escalation compares it.
 *
 * @example
 * ```ts
 * const call: CallLike = { tool: "write_file", args: { path: "x.py", content: "print(1)" } };
 * ```
 */
export interface CallLike {
  /** The tool's name. */
  tool: string;
  /** The call's arguments. */
  args: unknown;
}

/**
 * The arguments of a call as escalation compares them (default: as the model sent them). The guards pass the
 * block rules' view (`ignoreArgs` dropped, paths normalized, a shell command's spacing squeezed), so that "did the
 * model do something different" agrees with what the rules call a repeat.
 *
 * @example
 * ```ts
 * const view: ArgsView = (call) => withoutIgnoredArgs(call.args, ["task_progress"]);
 * ```
 */
export type ArgsView = (call: CallLike) => unknown;

/**
 * A call that was blocked (or held back with a reminder): when (ms since the epoch), at which level, and its
 * arguments (left out when longer than 8,000 characters of JSON; `key` still identifies the call).
 *
 * @example
 * ```ts
 * const last: BlockedCall | undefined = state.toolGuard.escalation.blocked.at(-1);
 * ```
 */
export interface BlockedCall extends CallLike {
  /** Digest of the call's signature under the tool's `keys`. */
  key: string;
  /** When the call was blocked (ms since the epoch). */
  at: number;
  /** Escalation level of this strike (0 for a reminder). */
  level: number;
  /** The block was of a call of a stuck cycle (a block of another call of the cycle goes on counting). */
  cycle?: boolean | undefined;
  /** A `file_edits` block: the file written too often (a block of another write of it goes on counting). */
  file?: string | undefined;
  /**
   * The response (turn) of the strike this block belongs to: every call a response had blocked is kept with its
   * strike, so that a later response repeating any of them, in whatever order, goes on counting. Absent for reminders.
   */
  turn?: string | undefined;
}

/**
 * Plain, serialisable escalation state of a thread (`toolGuard.escalation`).
 *
 * @example
 * ```ts
 * const { strikes, pending } = (await graph.getState(config)).values.toolGuard.escalation as EscalationState;
 * ```
 */
export interface EscalationState {
  /**
   * Strikes in a row for one call: blocked repeats of the same call (in substance; for repeated errors, the same
   * tool) since the agent last made progress (a response whose calls all ran and one succeeded), at most one per
   * model response. A block of another call starts the count again at 1.
   */
  strikes: number;
  /**
   * Responses struck since the agent last made progress, however often the count started again (a model alternating
   * two blocked calls restarts it at every block): how far back a strike looks for the calls it repeats. Absent before
   * the first strike (read as `strikes`).
   */
  streak?: number | undefined;
  /** Whether the model still owes an acknowledgment of the latest block. */
  pending: boolean;
  /** Reminders given since the latest strike or acknowledgment. */
  reminders: number;
  /** The model response (AI message id) that got the latest strike or reminder: one per response. */
  lastTurn: string | null;
  /** The most recent blocked calls, oldest first (bounded by `blockedLimit`). */
  blocked: BlockedCall[];
  /** The run was ended at level 4 by the AI message with this id (a later human message forgives). */
  endedBy: string | null;
}

/**
 * A change to the escalation state (part of the `toolGuard` channel's events).
 *
 * @example
 * ```ts
 * const forgive: EscalationEvent = { type: "forgive" }; // a person said to start over
 * ```
 */
export type EscalationEvent =
  | {
      /** A blocked call counted as a strike. */
      type: "strike";
      /** The model response (turn) the call belongs to: one strike per response. */
      turn: string;
      /** The blocked call. */
      call: BlockedCall;
      /** Blocked calls remembered (older ones are dropped). */
      blockedLimit: number;
      /** The blocked call is not the one of the latest strike: the count starts again at 1. */
      restart?: boolean | undefined;
      /**
       * The strikes after this one, when they are not the count plus one (a response that also made new calls is
       * held below the level that asks a person).
       */
      strikes?: number | undefined;
    }
  | {
      /** A call held back with a reminder (no strike). */
      type: "remind";
      /** The model response (turn) the call belongs to. */
      turn: string;
      /** The call held back. */
      call: BlockedCall;
      /** Blocked calls remembered (older ones are dropped). */
      blockedLimit: number;
    }
  | {
      /** The model acknowledged the block (said what it will do differently, or did something else). */
      type: "acknowledge";
    }
  | {
      /** A response whose calls all ran and one of them succeeded: the agent moved on, strikes start again. */
      type: "progress";
    }
  | {
      /** A person's message: strikes, the pending acknowledgment and the end of the run are cleared. */
      type: "forgive";
    }
  | {
      /** The run was ended at level 4. */
      type: "end";
      /** The id of the AI message that ended it. */
      by: string;
    };

/**
 * An empty escalation state.
 *
 * @example
 * ```ts
 * emptyEscalationState().strikes; // 0
 * ```
 */
export function emptyEscalationState(): EscalationState {
  return { strikes: 0, pending: false, reminders: 0, lastTurn: null, blocked: [], endedBy: null };
}

/**
 * Applies one escalation event. A strike or reminder for a response that already has one adds no strike (parallel
 * tool calls of one response count once); a strike's further blocked calls are kept with it (see
 * {@link BlockedCall.turn}).
 *
 * @example
 * ```ts
 * reduceEscalation(emptyEscalationState(), { type: "forgive" }).strikes; // 0
 * ```
 */
export function reduceEscalation(state: EscalationState | undefined, event: EscalationEvent): EscalationState {
  const current = state ?? emptyEscalationState();
  switch (event.type) {
    case "strike":
    case "remind": {
      if (current.lastTurn === event.turn) return event.type === "strike" ? keepStruck(current, event) : current;
      const blocked = [...current.blocked, event.call];
      const base = {
        ...current,
        pending: true,
        lastTurn: event.turn,
        blocked: blocked.slice(Math.max(0, blocked.length - event.blockedLimit)),
      };
      return event.type === "strike"
        ? // Reminders are counted per repeated call: a strike for the same call keeps the count.
          {
            ...base,
            strikes: event.strikes ?? (event.restart ? 1 : current.strikes + 1),
            streak: (current.streak ?? current.strikes) + 1,
            reminders: event.restart ? 0 : current.reminders,
          }
        : { ...base, reminders: current.reminders + 1 };
    }
    case "acknowledge":
      return current.pending || current.reminders > 0 ? { ...current, pending: false, reminders: 0 } : current;
    case "progress":
      return current.strikes > 0 || current.pending || current.reminders > 0 || (current.streak ?? 0) > 0
        ? { ...current, strikes: 0, streak: 0, pending: false, reminders: 0 }
        : current;
    case "forgive":
      return { ...emptyEscalationState(), blocked: current.blocked };
    case "end":
      return { ...current, endedBy: event.by };
  }
}

/** Another blocked call of a response already struck: kept with the strike's calls (once, bounded), no new strike. */
function keepStruck(current: EscalationState, event: Extract<EscalationEvent, { type: "strike" }>): EscalationState {
  const { call } = event;
  if (call.turn === undefined || current.blocked.some((b) => b.turn === call.turn && b.key === call.key)) {
    return current;
  }
  const blocked = [...current.blocked, call];
  return { ...current, blocked: blocked.slice(Math.max(0, blocked.length - event.blockedLimit)) };
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

/**
 * Whether a response's text acknowledges a block: it matches an acknowledgment pattern and no retry pattern.
 *
 * @example
 * ```ts
 * const o = resolveToolGuardOptions().escalation;
 * textAcknowledges("Let me try writing the file again", o);                  // false
 * textAcknowledges("Instead, I will check if pygame is installed first", o); // true
 * ```
 */
export function textAcknowledges(
  text: string,
  options: Pick<ResolvedEscalationOptions, "acknowledgmentPatterns" | "retryPatterns">,
): boolean {
  if (options.retryPatterns.some((p) => p.test(text))) return false;
  return options.acknowledgmentPatterns.some((p) => p.test(text));
}

const PATH_KEYS = ["path", "file_path", "filePath", "filename", "file"] as const;
const CONTENT_KEYS = ["content", "contents", "text", "data", "file_text"] as const;

// Arguments come from a model and may be anything, even objects whose getters throw: reading never throws here.
function field(args: unknown, names: readonly string[]): unknown {
  if (args === null || typeof args !== "object") return undefined;
  try {
    for (const name of names) if (Object.hasOwn(args, name)) return (args as Record<string, unknown>)[name];
  } catch {
    // unreadable: no such field
  }
  return undefined;
}

function pick(args: unknown, keys: readonly string[]): unknown {
  if (args === null || typeof args !== "object") return args;
  try {
    return Object.fromEntries(
      keys.filter((k) => Object.hasOwn(args, k)).map((k) => [k, (args as Record<string, unknown>)[k]]),
    );
  } catch {
    return args; // the signature reads what it can
  }
}

/**
 * The key of a call for the near-duplicate check: its tool and arguments (as `view` sees them; only the tool's
 * `keys` when given).
 *
 * @example
 * ```ts
 * substanceKey({ tool: "update", args: { id: 1, note: "x" } }, ["id"]) ===
 *   substanceKey({ tool: "update", args: { id: 1, note: "y" } }, ["id"]); // true
 * ```
 */
export function substanceKey(call: CallLike, keys?: readonly string[], view?: ArgsView): string {
  const args = view === undefined ? call.args : view(call);
  return digest(toolCallSignature(call.tool, keys ? pick(args, keys) : args));
}

/**
 * Whether two calls are the same in substance: the same tool and, for a file write (a path and a content), the
 * same path with content more than `contentThreshold` similar; otherwise the same arguments (only the
 * tool's `keys` when given), keys in any order. With `view`, the arguments as it sees them (a given `key` must be
 * of that view).
 *
 * @example
 * ```ts
 * sameInSubstance(
 *   { tool: "write_file", args: { path: "x.py", content: "print('a')\n" } },
 *   { tool: "write_file", args: { path: "./x.py", content: "print('a') \n" } },
 *   { contentThreshold: 0.9 },
 * ); // true
 * ```
 */
export function sameInSubstance(
  a: CallLike & { key?: string },
  b: CallLike & { key?: string },
  options: { contentThreshold: number; keys?: readonly string[] | undefined; view?: ArgsView | undefined },
): boolean {
  if (a.tool !== b.tool) return false;
  const args1 = options.view === undefined ? a.args : options.view(a);
  const args2 = options.view === undefined ? b.args : options.view(b);
  const path1 = field(args1, PATH_KEYS);
  const path2 = field(args2, PATH_KEYS);
  const content1 = field(args1, CONTENT_KEYS);
  const content2 = field(args2, CONTENT_KEYS);
  if (
    typeof path1 === "string" &&
    typeof path2 === "string" &&
    typeof content1 === "string" &&
    typeof content2 === "string"
  ) {
    if (normalizePath(path1, undefined) !== normalizePath(path2, undefined)) return false;
    if (content1 === content2) return true;
    return similarityRatio(content1, content2) > options.contentThreshold;
  }
  const key = (c: CallLike & { key?: string }, args: unknown) =>
    c.key ?? substanceKey({ tool: c.tool, args }, options.keys);
  return key(a, args1) === key(b, args2);
}

const MAX_KEPT_ARGS = 8_000;

/**
 * A blocked call as the escalation state keeps it: canonical JSON arguments as the model sent them (left out above
 * 8,000 characters), and the key of its substance (as `view` sees the arguments).
 *
 * @example
 * ```ts
 * blockedCall({ tool: "ls", args: {} }, 2, 1_700_000_000_000).level; // 2
 * ```
 */
export function blockedCall(
  call: CallLike,
  level: number,
  at: number,
  keys?: readonly string[],
  view?: ArgsView,
): BlockedCall {
  const json = canonicalJson(call.args);
  return {
    tool: call.tool,
    args: json.length <= MAX_KEPT_ARGS ? JSON.parse(json) : null,
    key: substanceKey(call, keys, view),
    at,
    level,
  };
}

/**
 * A model response as the escalation reviews it.
 *
 * @example
 * ```ts
 * const response: ResponseInput = { id: aiMessage.id ?? "", text: "Instead, I will…", calls: [] };
 * ```
 */
export interface ResponseInput {
  /** The AI message id (one strike per response). */
  id: string;
  /** Its text. */
  text: string;
  /** All its tool calls. */
  calls: readonly CallLike[];
}

/**
 * Whether a response acknowledges the pending block (true when nothing is pending): its text does (see
 * {@link textAcknowledges}), or it calls tools and every call differs in substance from every blocked call.
 *
 * @example
 * ```ts
 * responseAcknowledges(state.toolGuard.escalation, { id: "m1", text: "", calls: [{ tool: "ls", args: {} }] }, o);
 * ```
 */
export function responseAcknowledges(
  state: EscalationState,
  response: ResponseInput,
  options: Pick<ResolvedEscalationOptions, "acknowledgmentPatterns" | "retryPatterns" | "contentThreshold"> & {
    view?: ArgsView | undefined;
  },
  keysOf: (tool: string) => readonly string[] | undefined = () => undefined,
): boolean {
  if (!state.pending) return true;
  if (textAcknowledges(response.text, options)) return true;
  return response.calls.length > 0 && response.calls.every((c) => !repeatsBlocked(state, c, options, keysOf(c.tool)));
}

/**
 * Whether a call repeats (in substance) one of the blocked calls.
 *
 * @example
 * ```ts
 * repeatsBlocked(state.toolGuard.escalation, { tool: "read_file", args: { path: "a.py" } }, o); // true after a block
 * ```
 */
export function repeatsBlocked(
  state: EscalationState,
  call: CallLike,
  options: Pick<ResolvedEscalationOptions, "contentThreshold"> & { view?: ArgsView | undefined },
  keys?: readonly string[],
): boolean {
  if (state.blocked.length === 0) return false;
  const key = substanceKey(call, keys, options.view);
  return state.blocked.some((b) => matchesBlocked(b, { ...call, key }, options, keys));
}

/**
 * Whether a call repeats one blocked call in substance ({@link sameInSubstance}, both seen through `options.view`;
 * a blocked call kept without its arguments, because they were too long, matches by key only; a given `call.key`
 * must be of that view).
 *
 * @example
 * ```ts
 * matchesBlocked(state.toolGuard.escalation.blocked[0], { tool: "read_file", args: { path: "a.py" } }, o);
 * ```
 */
export function matchesBlocked(
  blocked: BlockedCall,
  call: CallLike & { key?: string },
  options: Pick<ResolvedEscalationOptions, "contentThreshold"> & { view?: ArgsView | undefined },
  keys?: readonly string[],
): boolean {
  const { view } = options;
  const key = call.key ?? substanceKey(call, keys, view);
  if (blocked.args === null) return blocked.key === key;
  // The blocked call's stored key is of the view it was blocked under: compared by its arguments, seen now.
  const other = view === undefined ? blocked : { tool: blocked.tool, args: blocked.args };
  return sameInSubstance({ ...call, key }, other, { contentThreshold: options.contentThreshold, keys, view });
}
