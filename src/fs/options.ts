/** The options of `createFileTools`: one zod schema that validates them and fills in the defaults. */
import { z } from "zod/v4";
import { guardLoggerSchema, parseOptions } from "../common/options.js";
import { DEFAULT_CACHE_MAX_FILES } from "./cache.js";
import { denyWritesProblem } from "./deny-writes.js";
import { DEFAULT_READ_LIMITS } from "./read.js";
import { DEFAULT_IGNORED } from "./tree.js";

/** The settings of the file cache (`cache: { ... }` also turns it on). */
const cacheSettingsSchema = z.strictObject({
  /**
   * Characters of file content the cache stands for (the sum of the cached files' lengths; least recently used
   * evicted first). The cache holds digests, not contents. Default 50 M.
   */
  budgetChars: z.number().int().min(0).default(50_000_000),
  /** Files the cache holds at most (least recently used evicted first; ~200 bytes of state each). Default 2,000. */
  maxFiles: z.number().int().min(0).default(DEFAULT_CACHE_MAX_FILES),
  /** A folder modified within this many ms of being listed is checked again (same-tick edits). Default 2 s. */
  racyWindowMs: z.number().int().min(0).default(2000),
  /** Entries beyond which the scan of the root is not cached (listings then scan the folder asked for). Default 100,000. */
  scanEntryCap: z.number().int().positive().default(100_000),
});

/** An error inside `cache: { ... }` is reported as that field's; any other value as what `cache` takes. */
function cacheError(issue: { input?: unknown; errors?: readonly (readonly z.core.$ZodIssue[])[] }): string {
  const inObject = typeof issue.input === "object" && issue.input !== null ? (issue.errors?.[1] ?? []) : [];
  if (inObject.length === 0) return "expected true, false or { budgetChars, maxFiles, racyWindowMs, scanEntryCap }";
  return inObject.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
}

const optionsSchema = z.strictObject({
  /** The project root: every path is confined to it. */
  root: z.string().min(1),
  /** Also create `execute_command` (runs `bash -c` in the root). Default false. */
  allowCommands: z.boolean().default(false),
  /**
   * Paths tools may read but not write, matched as git matches a root `.gitignore` (`*.pem`, `.env*` at any depth;
   * `secrets/**`, `/dist/` anchored at the root). Added to the built-in protection of `.git`, which this list cannot
   * drop (see `allowGitWrites`). Default: none.
   */
  denyWrites: z
    .array(
      z.string().superRefine((entry, ctx) => {
        const problem = denyWritesProblem(entry);
        if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
      }),
    )
    .default([]),
  /**
   * Let the tools write inside `.git` folders and files (hooks, config: code that git runs), which they never do
   * otherwise, whatever `denyWrites` says. Default false.
   */
  allowGitWrites: z.boolean().default(false),
  /** Names never listed. Default `.git`, `node_modules`, `__pycache__`, `.venv`, ... */
  ignored: z.array(z.string()).default([...DEFAULT_IGNORED]),
  /**
   * Refuse writes to a file with more than one hard link (a hard link to a file outside the root cannot be told
   * from an ordinary file by its path). Default false.
   */
  refuseHardLinks: z.boolean().default(false),
  /**
   * Keep the file cache (digests and stats, no contents) and the directory tree in state: `true` (default),
   * `false`, or its settings (which turn it on).
   */
  cache: z
    .union([z.boolean(), cacheSettingsSchema], { error: cacheError })
    .default(true)
    .transform((c) => ({ enabled: c !== false, ...cacheSettingsSchema.parse(typeof c === "object" ? c : {}) })),
  /** The settings of `execute_command` (with `allowCommands: true`). */
  commands: z
    .strictObject({
      /** Time a command may run, in ms (then it is killed). Default 60 s. */
      timeoutMs: z.number().int().positive().default(60_000),
      /** Characters of command output kept (the rest is cut with a note). Default 30,000. */
      maxOutputChars: z.number().int().positive().default(30_000),
    })
    .prefault({}),
  /** What one call may read and show. */
  limits: z
    .strictObject({
      /** Largest file `read_file` shows (and `apply_source_code_diff` changes), in bytes. Default 10 MB. */
      maxFileBytes: z.number().int().positive().default(10_000_000),
      /** Largest `.gitignore` applied, in bytes (a larger one is not applied, with a note in listings). Default 1 MB. */
      maxIgnoreFileBytes: z.number().int().positive().default(1_000_000),
      /** Time one read or write of a file may take, in ms (then the tool answers that it did not finish). Default 10 s. */
      ioTimeoutMs: z.number().int().positive().default(10_000),
      /** Lines shown when `read_file` gets no `limit`. Default 2000. */
      defaultLineLimit: z.number().int().positive().default(DEFAULT_READ_LIMITS.defaultLineLimit),
      /** Characters of one line shown. Default 2000. */
      maxLineChars: z.number().int().positive().default(DEFAULT_READ_LIMITS.maxLineChars),
      /**
       * Characters of one `read_file` answer: the lines beyond are left for a read from the next offset, which the
       * answer names. Default 100,000.
       */
      maxReadChars: z.number().int().positive().default(DEFAULT_READ_LIMITS.maxReadChars),
      /** Lines of one listing. Default 500. */
      listLimit: z.number().int().positive().default(500),
    })
    .prefault({}),
  /** Where the tools report. */
  feedback: z
    .strictObject({
      /** A `GuardLogger`: its `info` receives `[TOOL_RUNNER][CACHE_HIT] ...` lines. Default: none. */
      logger: guardLoggerSchema.optional(),
      /** Write a guard event for each answer from the cache (custom stream and `guardLog`). Default true. */
      events: z.boolean().default(true),
    })
    .prefault({}),
  /** The clock (ms since the epoch) the cache's times are read from. Default `Date.now`. */
  clock: z.custom<() => number>((v) => typeof v === "function", "expected a function").optional(),
});

/**
 * Options of {@link createFileTools}.
 *
 * @example
 * ```ts
 * const options: FileToolsOptions = { root: "/repo", allowCommands: true, commands: { timeoutMs: 30_000 } };
 * ```
 *
 * @interface
 */
export type FileToolsOptions = z.input<typeof optionsSchema>;

/** {@link FileToolsOptions} validated, every default filled in (`cache` always an object, with `enabled`). */
export type ResolvedFileToolsOptions = z.output<typeof optionsSchema>;

/** Fills in the defaults; throws `GuardOptionsError` naming every bad field (and where a moved option lives now). */
export function resolveFileToolsOptions(options: FileToolsOptions): ResolvedFileToolsOptions {
  return parseOptions(optionsSchema, options, "file-tool");
}
