import { z } from "zod/v4";
import { parseOptions } from "../../common/options.js";
import { escalationOptionsSchema } from "./escalation.js";
import type { BlockContext } from "./texts.js";

const template = z.union([z.string(), z.custom<(ctx: BlockContext) => string>((v) => typeof v === "function")]);
const positiveInt = z.number().int().min(1);

/**
 * A replacement for the default normalizer: gets a result's text and the tool's name, returns the text the rules
 * compare (never shown to the model).
 *
 * @example
 * ```ts
 * const dropNonce: ResultNormalizer = (text) => text.replace(/nonce=\w+/g, "nonce=…");
 * ```
 */
export type ResultNormalizer = (text: string, tool: string) => string;

const normalizeResultOption = z.custom<boolean | ResultNormalizer>(
  (v) => typeof v === "boolean" || typeof v === "function",
  "expected true, false or a function (text, tool) => string",
);

/** Checks a `{ remindAt, blockAt }` pair: integers ≥ 1, `remindAt` (or `false`) below `blockAt`. */
function checkLimits<T extends { remindAt: number | false; blockAt: number }>(
  { remindAt, blockAt }: T,
  ctx: z.RefinementCtx<T>,
): void {
  const count = (n: number) => Number.isInteger(n) && n >= 1;
  if (!count(blockAt)) ctx.addIssue({ code: "custom", path: ["blockAt"], message: "expected an integer ≥ 1" });
  if (remindAt === false) return;
  if (!count(remindAt)) {
    ctx.addIssue({ code: "custom", path: ["remindAt"], message: "expected an integer ≥ 1, or false" });
  } else if (count(blockAt) && remindAt >= blockAt) {
    ctx.addIssue({
      code: "custom",
      path: ["remindAt"],
      message: `remindAt (${remindAt}) must be below blockAt (${blockAt}), or false`,
    });
  }
}

/** The repeat ceiling's defaults for a read-only tool or a search. */
const REPEAT_CEILING_DEFAULTS = { remindAt: 6, blockAt: 10 } as const;

/** The defaults for a call whose answers can change by themselves: OpenClaw's generic repeat (warn 10, block 20). */
const CHANGING_CEILING_DEFAULTS = { remindAt: 10, blockAt: 20 } as const;

const limitFields = (defaults: { remindAt: number; blockAt: number }) => ({
  /** The identical call whose answer gets a reminder (and every one after it). `false`: none. */
  remindAt: z.union([z.literal(false), z.number()]).default(defaults.remindAt),
  /** The identical call that is blocked (and every one after it, until the count restarts). */
  blockAt: z.number().default(defaults.blockAt),
});

/** The repeat ceiling's limits for one tool (`tools.<name>.repeatCeiling`): identical calls in one run. */
const repeatCeilingSchema = z.object(limitFields(REPEAT_CEILING_DEFAULTS)).strict().superRefine(checkLimits);

/** `rules.repeatCeiling`: limits for a read-only tool or a search; `changing` ones default to them when given. */
const rulesRepeatCeilingSchema = z
  .object({
    /** The identical call whose answer gets a reminder (and every one after it). `false`: none. Default 6. */
    remindAt: z.union([z.literal(false), z.number()]).optional(),
    /** The identical call that is blocked (and every one after it, until the count restarts). Default 10. */
    blockAt: z.number().optional(),
    /**
     * The limits for a call whose answers can change by themselves (a poll, a shell command, an unknown tool that is
     * not a search). Default `{ remindAt: 10, blockAt: 20 }`, or the limits above when they are given.
     */
    changing: z.object(limitFields(CHANGING_CEILING_DEFAULTS)).strict().superRefine(checkLimits).optional(),
  })
  .strict()
  .transform(
    ({
      remindAt,
      blockAt,
      changing,
    }): {
      /** The identical call whose answer gets a reminder (and every one after it). `false`: none. */
      remindAt: number | false;
      /** The identical call that is blocked (and every one after it, until the count restarts). */
      blockAt: number;
      /** The limits for a call whose answers can change by themselves (a poll, a shell command, an unknown tool). */
      changing: {
        /** The identical call whose answer gets a reminder (and every one after it). `false`: none. */
        remindAt: number | false;
        /** The identical call that is blocked (and every one after it, until the count restarts). */
        blockAt: number;
      };
    } => {
      const own = {
        remindAt: remindAt ?? REPEAT_CEILING_DEFAULTS.remindAt,
        blockAt: blockAt ?? REPEAT_CEILING_DEFAULTS.blockAt,
      };
      const given = remindAt !== undefined || blockAt !== undefined;
      return { ...own, changing: changing ?? (given ? { ...own } : { ...CHANGING_CEILING_DEFAULTS }) };
    },
  )
  .superRefine(checkLimits);

const repeatCeilingOption = z.union([z.literal(false), repeatCeilingSchema], {
  error: "expected { remindAt, blockAt } or false",
});

/** Per-tool settings. */
const toolGuardConfigSchema = z
  .object({
    /** Never block this tool (its calls are still recorded). */
    exempt: z.boolean().optional(),
    /** The threshold rule's threshold for this tool (overrides `repetitionThreshold`). */
    repetitionThreshold: positiveInt.optional(),
    /** Argument fields of this tool to ignore when comparing calls (added to the global `ignoreArgs`). */
    ignoreArgs: z.array(z.string()).optional(),
    /** Whether the tool only reads (overrides metadata, name and command parsing). */
    readOnly: z.boolean().optional(),
    /** For a tool that changes something: what its calls make stale (see `ToolTraits.invalidates`). */
    invalidates: z.enum(["all", "paths", "none"]).optional(),
    /** Argument names that hold paths for this tool. */
    pathArgs: z.array(z.string()).optional(),
    /** `false`: its search question is compared as written, not as words in any order (see `ToolTraits.queryWords`). */
    queryWords: z.boolean().optional(),
    /**
     * The consecutive rule for this tool (default: on; off for a tool whose repeats a cache serves: the file tools,
     * and a tool the result cache serves, see `cache`).
     */
    consecutive: z.boolean().optional(),
    /**
     * The redundant rule for this tool (default: on; off for a tool whose repeats a cache serves: the file tools, and
     * a tool the result cache serves, see `cache`).
     */
    redundancy: z.boolean().optional(),
    /**
     * Calling it again after it succeeded does something again (a second booking): such a repeat is never blocked.
     * Default by name: `book_`, `send_`, `create_`, `cancel_`, `toggle_`, `add_`, `submit_`, … .
     */
    repeatable: z.boolean().optional(),
    /**
     * It changes something, but calling it again with the same arguments with nothing changed since does nothing
     * new: the redundant rule blocks such a repeat. Default by name: `update_`, `set_`, `transfer_`.
     */
    idempotent: z.boolean().optional(),
    /**
     * Identical calls may legitimately return something new each time (scrolling, paging, polling, waiting, a
     * screenshot, running code): a repeat is blocked only once identical calls keep returning the same result.
     * Default by name and arguments (`scroll`, `next`, `poll`, `status`, `wait`, `screenshot`, `run`, …).
     */
    stateful: z.boolean().optional(),
    /**
     * The file-edits rule for this tool (default: on). `false`: its writes are not counted, and it gets neither the
     * reminder nor the block of `rules.fileEdits`.
     */
    fileEdits: z.boolean().optional(),
    /**
     * The repeat ceiling for this tool: `false` never reminds or blocks its calls, `{ remindAt, blockAt }` replaces
     * `rules.repeatCeiling` for it (a field left out takes its default).
     */
    repeatCeiling: repeatCeilingOption.optional(),
    /**
     * How this tool's results are compared (replaces `rules.normalizeResult` for it): `true` the default normalizer,
     * `false` the exact text, or a function `(text, tool) => string`.
     */
    normalizeResult: normalizeResultOption.optional(),
    /**
     * Serve an identical repeat of a successful call from the result cache (see `memory.cache`): `true` or
     * `{ ttlSeconds }` for this tool, `false` never. Default: on for a tool that is read-only and idempotent by its
     * metadata (MCP's `readOnlyHint` and `idempotentHint`) or by `readOnly` and `idempotent` here, unless its calls
     * poll, scroll or wait (`stateful`).
     */
    cache: z
      .union(
        [
          z.boolean(),
          z
            .object({
              /** Seconds a successful result of this tool is served (replaces `memory.cache.ttlSeconds` for it). */
              ttlSeconds: z.number().positive(),
            })
            .strict(),
        ],
        {
          error: "expected true, false or { ttlSeconds }",
        },
      )
      .optional(),
    /**
     * The argument fields that decide whether a call repeats a blocked call in substance (per tool
     * key; others are ignored). Default: all arguments, and for a file write the path plus similar content.
     */
    keys: z.array(z.string()).optional(),
  })
  .strict();

/**
 * The counting rules of the consecutive and threshold rules, shared by {@link ToolRepetitionDetector} and the tool
 * node: one set of defaults. The result-aware defaults were chosen by replaying recorded runs (`npm run eval`):
 * counting changed results, or calls across another tool's changes, blocks test re-runs after edits.
 */
export const repetitionRulesSchema = z.object({
  /** Threshold rule: block when the window already holds this many identical calls. Default 3 (the 4th is blocked). */
  repetitionThreshold: positiveInt.default(3),
  /** Threshold rule: how many recorded calls the sliding window keeps. Default 10. */
  windowSize: positiveInt.default(10),
  /** Consecutive rule: block a call identical to the previous one. Default true. */
  consecutive: z.boolean().default(true),
  /**
   * The threshold rule counts earlier identical calls whose result differed from the latest one. Default false:
   * only calls that kept producing the same result count (`true` blocks a test re-run after each edit).
   */
  countChangedResults: z.boolean().default(false),
  /**
   * The threshold rule counts identical calls made before a later successful change: `true` always, `"same-tool"`
   * (default) only when every change since was made by the same tool (other than a write of known files by another
   * of its calls) or changed nothing the call depends on (rewriting a file again and again adds up; a check re-run
   * after another tool changed something does not, nor after a `sed -i` edit or a `git bisect` step through the same
   * shell tool; a read of one file after another tool wrote another file does), `false` never.
   */
  countAcrossMutations: z.union([z.boolean(), z.literal("same-tool")]).default("same-tool"),
});

/** The bounds of the redundant rule's memory, shared by {@link OperationContext} and the tool node. */
export const operationLimitsSchema = z.object({
  /** The redundant rule: successful read-only operations remembered (an evicted one is allowed again). Default 10. */
  operationsHistoryLimit: z.number().int().min(0).default(10),
  /** File operations remembered for the summary. Default 10. */
  fileHistoryLimit: z.number().int().min(0).default(10),
});

/** The file-edits defaults: deepagents' reminder at the 8th write, LangChain's block at the 12th whole rewrite. */
const FILE_EDITS_DEFAULTS = { remindAt: 8, blockAt: 25, blockRewritesAt: 12 } as const;

/** The file-edits rule's limits (`rules.fileEdits`): writes of one file in one run, counted per successful call. */
const fileEditsSchema = z
  .object({
    /** The write of a file that gets a reminder after its result (and every write after it). `false`: none. Default 8. */
    remindAt: z.union([z.literal(false), z.number()]).default(FILE_EDITS_DEFAULTS.remindAt),
    /** The write of a file that is blocked (and every write after it, in the run). Default 25. */
    blockAt: z.number().default(FILE_EDITS_DEFAULTS.blockAt),
    /**
     * The rewrite of a file's whole content that is blocked (and every rewrite after it, in the run): a write tool
     * given the whole content, `cat > f`, `cp x f`; an edit of one part (a diff, `sed -i`) is not one. `false`:
     * rewrites are only counted as writes. Default 12.
     */
    blockRewritesAt: z.union([z.literal(false), z.number()]).default(FILE_EDITS_DEFAULTS.blockRewritesAt),
  })
  .strict()
  // Checked here rather than by the fields' own types, so that a bad value is named by its field (not a union).
  .superRefine((limits, ctx) => {
    checkLimits(limits, ctx);
    const { blockRewritesAt } = limits;
    if (blockRewritesAt !== false && !(Number.isInteger(blockRewritesAt) && blockRewritesAt >= 1)) {
      ctx.addIssue({ code: "custom", path: ["blockRewritesAt"], message: "expected an integer ≥ 1, or false" });
    }
  });

/** The `rules` group of {@link ToolGuardOptions}: the rules' switches, how calls and results compare, the root. */
const guardRulesSchema = z
  .object({
    ...repetitionRulesSchema.omit({ repetitionThreshold: true, windowSize: true }).shape,
    /** Project root: relative and absolute forms of one path are the same call. */
    root: z.string().min(1).optional(),
    /** Redundant rule: block a read-only call that already succeeded and is still valid. Default true. */
    redundancy: z.boolean().default(true),
    /**
     * Cycle rule: block a call of a cycle of 2 to 5 calls that went round twice in a row with the same result at
     * every step (A, B, A, B, then A again; the window must hold both rounds). Default true.
     */
    cycles: z.boolean().default(true),
    /**
     * File-edits rule: writes of one file in one run (calls that ran and succeeded, each counting once per file it
     * writes). From the `remindAt`-th write on, the call runs and its answer carries a reminder after the tool's
     * result; the `blockAt`-th write is blocked (a strike), and so is every later write of that file in the run.
     * `false`: off. Default `{ remindAt: 8, blockAt: 25 }` (the block chosen on the recorded runs: the busiest file
     * of a run there is written 22 times).
     */
    fileEdits: z
      .union([z.literal(false), fileEditsSchema], { error: "expected { remindAt, blockAt, blockRewritesAt } or false" })
      .default({ ...FILE_EDITS_DEFAULTS }),
    /**
     * Repeat ceiling: identical calls in one run. From the `remindAt`-th the call runs with a reminder after its
     * result; the `blockAt`-th is blocked (a strike; a call but a search or a delegation only after that many equal
     * answers in a row), and so is every later one until the count restarts: after a change by a call new in the run, a
     * call that lets time pass, and a poll whose normalized answer moved; a call whose arguments wait is not
     * counted. `false`: off. Default `{ remindAt: 6, blockAt: 10 }` for a read-only tool or a search, and
     * `changing: { remindAt: 10, blockAt: 20 }` for a call whose answers can change by themselves (a poll, a shell
     * command, an unknown tool: OpenClaw's warn at 10 and block at 20); limits given without `changing` apply to both.
     */
    repeatCeiling: z
      .union([z.literal(false), rulesRepeatCeilingSchema], {
        error: "expected { remindAt, blockAt, changing } or false",
      })
      .prefault({}),
    /**
     * How the rules compare results (the consecutive rule for stateful and unknown tools, the threshold count,
     * cycles, same-error runs, the repeat ceiling's progress): `true` (default) after the default normalizer, which
     * drops volatile parts (timestamps, request ids, durations, execution counters, long ids); `false` the exact
     * text; a function `(text, tool) => string` instead of it. Result dedupe always compares the exact text.
     */
    normalizeResult: normalizeResultOption.default(true),
  })
  .strict();

/** The result cache (`memory.cache`): how long a served result stays good, and how many calls' results are kept. */
const guardCacheSchema = z
  .object({
    /** Seconds a successful result is served to an identical call (after it, the call runs again). Default 300. */
    ttlSeconds: z.number().positive().default(300),
    /** Calls whose results are kept (the oldest dropped beyond it). Default 50. */
    maxEntries: z.number().int().min(1).default(50),
  })
  .strict();

/** What the guards say, the `feedback` group of {@link ToolGuardOptions}: to the model and to observers. */
const guardFeedbackSchema = z
  .object({
    /** Replacements for the rules' block messages (a text or a builder). */
    messages: z
      .object({
        /** The consecutive rule's message. */
        consecutive: template.optional(),
        /** The threshold rule's message. */
        threshold: template.optional(),
        /** The redundant rule's message. */
        redundant: template.optional(),
        /** The message for a repeat of a blocked call in substance, without saying what will be different. */
        near_duplicate: template.optional(),
        /** The message for a tool that keeps failing with the same error under changing arguments. */
        repeat_failure: template.optional(),
        /** The cycle rule's message. */
        cycle: template.optional(),
        /** The file-edits rule's block message (`path` names the file, `count` its writes with this one). */
        file_edits: template.optional(),
        /** The repeat ceiling's block message (`count`: the identical calls in the run with this one). */
        repeat_ceiling: template.optional(),
      })
      .strict()
      .default({}),
    /** Characters of the blocked call's arguments shown to the model. Default 500. */
    maxArgsChars: positiveInt.default(500),
    /** Characters of the previous result kept in state and shown to the model. Default 1000. */
    maxResultChars: positiveInt.default(1000),
    /**
     * Result dedupe: when a call that ran returns exactly the result of an earlier identical call whose ToolMessage
     * is still in the conversation, the model is sent a short note pointing at that message instead of the result
     * again (only when the note is shorter). Default true.
     */
    dedupeResults: z.boolean().default(true),
    /**
     * Write a guard event for each block, near miss and escalation to LangGraph's custom stream and count it in the
     * `guardLog` channel. Default true.
     */
    events: z.boolean().default(true),
  })
  .strict();

/** What the guards remember and for how long, the `memory` group of {@link ToolGuardOptions}. */
const guardMemorySchema = z
  .object({
    ...operationLimitsSchema.shape,
    /** Observe-mode records kept. Default 50. */
    observedLimit: z.number().int().min(0).default(50),
    /**
     * What starts a new run of a thread: `"human-message"` (default) a new person's message (a summary is not one),
     * `"none"` nothing (the whole thread is one run). A new run starts the repetition windows, the file-edits
     * counts, strikes and acknowledgment afresh; the thread's counters, observed blocks and the file caches stay.
     */
    runBoundary: z.enum(["human-message", "none"]).default("human-message"),
    /**
     * Whether a read recorded as still valid (the redundant rule) stays valid into the next run: `"fresh"` (default)
     * forgets it, since the world may have changed between a person's messages; `"keep"` keeps it until a change
     * the guards see.
     */
    acrossRuns: z.enum(["fresh", "keep"]).default("fresh"),
    /**
     * The result cache: an identical call (ignored arguments aside) of a read-only, idempotent tool (by its
     * metadata's MCP hints `readOnlyHint` and `idempotentHint`, or `tools.<name>.cache: true`) whose earlier
     * successful answer is still in the conversation is answered with that result again, as a normal tool answer,
     * without running the tool: no block, no strike. Until `ttlSeconds` have passed, a change the guards see (a
     * write, a command, an unknown tool) or a new run (unless `acrossRuns` is `"keep"`). The repeat ceiling still
     * counts such calls. `false`: off for every tool. Default `{ ttlSeconds: 300, maxEntries: 50 }`.
     */
    cache: z
      .union([z.literal(false), guardCacheSchema], { error: "expected { ttlSeconds, maxEntries } or false" })
      .prefault({}),
  })
  .strict();

/** The tool-call guards' options, all optional: the common ones on top, the rare ones in groups. */
const toolGuardOptionsSchema = z
  .object({
    /**
     * Threshold rule: block when the rule's window already holds this many identical calls. Default 3 (the 4th is
     * blocked). Per tool: `tools.<name>.repetitionThreshold`.
     */
    repetitionThreshold: repetitionRulesSchema.shape.repetitionThreshold,
    /** Threshold rule: how many recorded calls the sliding window keeps. Default 10. */
    windowSize: repetitionRulesSchema.shape.windowSize,
    /** Per-tool settings, by tool name. */
    tools: z.record(z.string(), toolGuardConfigSchema).default({}),
    /** `"enforce"` blocks; `"observe"` blocks nothing and records what it would have blocked. Default "enforce". */
    mode: z.enum(["enforce", "observe"]).default("enforce"),
    /** Argument fields ignored when comparing calls, for every tool (dotted names reach nested fields). */
    ignoreArgs: z.array(z.string()).default([]),
    /**
     * Which rules block and how calls are compared: consecutive, redundant, cycle and file-edits rules, counting,
     * the root.
     */
    rules: guardRulesSchema.prefault({}),
    /** What the guards say: block messages, how much of a call and a result they quote, result dedupe, events. */
    feedback: guardFeedbackSchema.prefault({}),
    /** What the guards remember: history bounds, observe-mode records, what starts a run, what outlives it. */
    memory: guardMemorySchema.prefault({}),
    /** What follows a block: strikes, escalation levels, reminders, near-duplicates, repeated errors. */
    escalation: escalationOptionsSchema.prefault({}),
  })
  .strict();

/**
 * Options of the tool-call guards, as the user writes them.
 *
 * @example
 * ```ts
 * const options: ToolGuardOptions = { repetitionThreshold: 4, tools: { bash: { repetitionThreshold: 8 } } };
 * ```
 *
 * @interface
 */
export type ToolGuardOptions = z.input<typeof toolGuardOptionsSchema>;
/**
 * Options with every default filled in.
 *
 * @example
 * ```ts
 * const resolved: ResolvedToolGuardOptions = resolveToolGuardOptions({ windowSize: 20 });
 * ```
 *
 * @interface
 */
export type ResolvedToolGuardOptions = z.output<typeof toolGuardOptionsSchema>;
/**
 * Per-tool settings, as the user writes them.
 *
 * @example
 * ```ts
 * const sendEmail: ToolGuardConfig = { invalidates: "none", repetitionThreshold: 1 };
 * ```
 *
 * @interface
 */
export type ToolGuardConfig = z.input<typeof toolGuardConfigSchema>;

/**
 * Validates options and fills in the defaults. Throws {@link GuardOptionsError} naming every bad field.
 *
 * @example
 * ```ts
 * resolveToolGuardOptions({ windowSize: 5 }).repetitionThreshold; // 3
 * resolveToolGuardOptions({ rules: { cycles: "no" } }); // throws GuardOptionsError: rules.cycles: ...
 * ```
 */
export function resolveToolGuardOptions(options: ToolGuardOptions = {}): ResolvedToolGuardOptions {
  return parseOptions(toolGuardOptionsSchema, options, "langgraph-guards");
}
