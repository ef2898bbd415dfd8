/** The options of `createFileTools`, validated by one zod schema that also fills in the defaults. */
import { z } from "zod";
import { guardLoggerSchema, parseOptions } from "../core/options.js";
import { DEFAULT_CACHE_MAX_FILES } from "./cache.js";
import { DEFAULT_READ_LIMITS } from "./read.js";
import { DEFAULT_IGNORED } from "./tree.js";

const optionsSchema = z
  .object({
    /** The project root: every path is confined to it. */
    root: z.string().min(1),
    /** Keep the file cache (digests and stats, no contents) and the directory tree in state. Default true. */
    cache: z.boolean().default(true),
    /** Also create `execute_command` (runs `bash -c` in the root). Default false. */
    allowCommands: z.boolean().default(false),
    /** `execute_command` timeout in ms. Default 60 s. */
    commandTimeoutMs: z.number().int().positive().default(60_000),
    /** Characters of command output kept (the rest is cut with a note). Default 30,000. */
    maxCommandOutputChars: z.number().int().positive().default(30_000),
    /** Largest file `read_file` shows (and `apply_source_code_diff` changes), in bytes. Default 10 MB. */
    maxFileBytes: z.number().int().positive().default(10_000_000),
    /** Largest `.gitignore` applied, in bytes (a larger one is not applied, with a note in listings). Default 1 MB. */
    maxIgnoreFileBytes: z.number().int().positive().default(1_000_000),
    /** Time one read or write of a file may take, in ms (then the tool answers that it did not finish). Default 10 s. */
    ioTimeoutMs: z.number().int().positive().default(10_000),
    /**
     * Refuse writes to a file with more than one hard link (a hard link to a file outside the root cannot be told
     * from an ordinary file by its path). Default false.
     */
    refuseHardLinks: z.boolean().default(false),
    /**
     * Characters of file content the cache stands for (the sum of the cached files' lengths; least recently used
     * evicted first). The cache holds digests, not contents. Default 50 M.
     */
    cacheBudgetChars: z.number().int().min(0).default(50_000_000),
    /** Files the cache holds at most (least recently used evicted first; ~200 bytes of state each). Default 2,000. */
    cacheMaxFiles: z.number().int().min(0).default(DEFAULT_CACHE_MAX_FILES),
    /** A folder modified within this many ms of being listed is checked again (same-tick edits). Default 2 s. */
    racyWindowMs: z.number().int().min(0).default(2000),
    /** Lines shown when `read_file` gets no `limit`. Default 2000. */
    defaultLineLimit: z.number().int().positive().default(DEFAULT_READ_LIMITS.defaultLineLimit),
    /** Characters of one line shown. Default 2000. */
    maxLineChars: z.number().int().positive().default(DEFAULT_READ_LIMITS.maxLineChars),
    /** Lines of one listing. Default 500. */
    listLimit: z.number().int().positive().default(500),
    /** Entries beyond which the root scan is not cached. Default 100,000. */
    scanEntryCap: z.number().int().positive().default(100_000),
    /** Names never listed. Default `.git`, `node_modules`, `__pycache__`, `.venv`, ... */
    ignored: z.array(z.string()).default([...DEFAULT_IGNORED]),
    /**
     * Paths tools may read but not write, matched as in `.gitignore` (`.git/` is any `.git` folder, at any depth;
     * `/dist/` or `src/gen/` are anchored at the root). Default `[".git/"]`.
     */
    denyWrites: z.array(z.string()).default([".git/"]),
    /** Receives `[CACHE_HIT] ...` lines. Default: none. */
    logger: guardLoggerSchema.optional(),
    /** The clock (ms). Default `Date.now`. */
    clock: z.custom<() => number>((v) => typeof v === "function").optional(),
    /** Write a guard event for each answer from the cache (custom stream and `guardLog`). Default true. */
    events: z.boolean().default(true),
  })
  .strict();

/**
 * Options of {@link createFileTools}.
 *
 * @example
 * ```ts
 * const options: FileToolsOptions = { root: "/repo", allowCommands: true, commandTimeoutMs: 30_000 };
 * ```
 *
 * @interface
 */
export type FileToolsOptions = z.input<typeof optionsSchema>;

/**
 * {@link FileToolsOptions} validated, with every default filled in.
 *
 * @example
 * ```ts
 * resolveFileToolsOptions({ root: "/repo" }).listLimit; // 500
 * ```
 *
 * @interface
 */
export type ResolvedFileToolsOptions = z.output<typeof optionsSchema>;

/**
 * Validates file-tool options and fills in the defaults; throws `GuardOptionsError` naming every bad field.
 *
 * @example
 * ```ts
 * resolveFileToolsOptions({ root: "/repo" }).cache; // true
 * resolveFileToolsOptions({ root: "" });            // throws GuardOptionsError: root: ...
 * ```
 */
export function resolveFileToolsOptions(options: FileToolsOptions): ResolvedFileToolsOptions {
  return parseOptions(optionsSchema, options, "file-tool");
}
