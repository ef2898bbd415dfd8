/** Recorded runs read from a regular file as a stream (gunzipped, a line at a time), with caps on sizes. */
import { constants as fs, type ReadStream, type Stats } from "node:fs";
import { type FileHandle, lstat, open, realpath, stat } from "node:fs/promises";
import { basename } from "node:path";
import { pipeline, type Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { type ReplayFormat, ReplayInputError } from "./formats.js";
import { formatBytes, type InputItem, LineSplitter, type ReplayInputItem, RunAssembler } from "./lines.js";

/**
 * The default caps of {@link readRunsFromFile} and of the `langgraph-guards replay` command.
 *
 * @example
 * ```ts
 * const items = readRunsFromFile("runs.jsonl", { maxBytes: 4 * REPLAY_INPUT_CAPS.maxBytes });
 * ```
 */
export const REPLAY_INPUT_CAPS: Readonly<{
  /** The most bytes of text read from one file, after gunzip: 1 GiB. */
  maxBytes: number;
  /** The longest line in bytes (one run of JSON Lines): 64 MiB. */
  maxLineBytes: number;
  /** The largest file that is one JSON document, read whole: 128 MiB. */
  maxDocumentBytes: number;
}> = {
  maxBytes: 1024 ** 3,
  maxLineBytes: 64 * 1024 ** 2,
  maxDocumentBytes: 128 * 1024 ** 2,
};

/**
 * The options of {@link readRunsFromFile}.
 *
 * @example
 * ```ts
 * const options: ReadRunsFromFileOptions = { format: "langchain", maxLineBytes: 256 * 1024 ** 2 };
 * ```
 */
export interface ReadRunsFromFileOptions {
  /** The name in messages (`runs.jsonl:7: not JSON …`); default: the file's base name. */
  file?: string;
  /** The input format; default `"auto"` (as {@link readRuns}). */
  format?: ReplayFormat | "auto";
  /** Gunzip the file; default: when its name ends in `.gz`. */
  gzip?: boolean;
  /** The most bytes of text read from the file, after gunzip; beyond it, an error and the file is not read further. */
  maxBytes?: number;
  /** The longest line in bytes (one run of JSON Lines); a longer line is an error and skipped. */
  maxLineBytes?: number;
  /** The largest input that is one JSON document (not JSON Lines, which is read a line at a time); larger: an error. */
  maxDocumentBytes?: number;
  /** Called as the file is read: the bytes read of the file (compressed, for a `.gz`) and the file's size. */
  onProgress?: (read: number, size: number) => void;
}

const KINDS: [(stats: Stats) => boolean, string][] = [
  [(s) => s.isDirectory(), "a directory"],
  [(s) => s.isCharacterDevice(), "a character device"],
  [(s) => s.isBlockDevice(), "a block device"],
  [(s) => s.isFIFO(), "a FIFO"],
  [(s) => s.isSocket(), "a socket"],
];

/** "a character device", "a symlink to /dev/zero, a character device", … */
async function whatItIs(path: string, stats: Stats): Promise<string> {
  const kind = KINDS.find(([is]) => is(stats))?.[1] ?? "not a file";
  const link = await lstat(path).catch(() => undefined);
  if (link?.isSymbolicLink() !== true) return kind;
  const target = await realpath(path).catch(() => "?");
  return `a symlink to ${target}, ${kind}`;
}

/** The file opened if regular, else why not; non-blocking (a FIFO would hang), re-checked on the handle (renames). */
async function openRegular(path: string): Promise<{ handle: FileHandle; size: number } | ReplayInputError> {
  const refuse = async (stats: Stats) =>
    new ReplayInputError(path, `not a regular file (${await whatItIs(path, stats)}): replay reads regular files only`);
  try {
    const before = await stat(path);
    if (!before.isFile()) return await refuse(before);
    const handle = await open(path, fs.O_RDONLY | fs.O_NONBLOCK);
    const stats = await handle.stat();
    if (stats.isFile()) return { handle, size: stats.size };
    await handle.close();
    return await refuse(stats);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const plain =
      code === "ENOENT" ? "file not found" : code === "EACCES" ? "not readable (permission denied)" : undefined;
    return new ReplayInputError(path, plain ?? (e as Error).message);
  }
}

/** The file's bytes (`source`), gunzipped when `gzip`; `file`, the file's own stream, counts the bytes read. */
function bytesOf(handle: FileHandle, gzip: boolean): { source: Readable; file: ReadStream } {
  const file = handle.createReadStream({ highWaterMark: 64 * 1024 });
  if (!gzip) return { source: file, file };
  return { source: pipeline(file, createGunzip({ chunkSize: 256 * 1024 }), () => {}), file };
}

type Ending = { kind: "end" } | { kind: "cap" } | { kind: "error"; error: Error & { code?: unknown } };

/** The item for a broken read: where a `.gz` was cut or damaged after its first line (incomplete), else the error. */
function brokenItem(
  file: string,
  error: Error & { code?: unknown },
  splitter: LineSplitter,
  runs: number,
): ReplayInputItem {
  const early = error.code === "Z_BUF_ERROR";
  const gzip = typeof error.code === "string" && error.code.startsWith("Z_");
  if (!gzip || (splitter.lines === 0 && !early)) {
    return { error: new ReplayInputError(file, error.message), incomplete: false };
  }
  const complete = `${runs} complete run${runs === 1 ? "" : "s"} read`;
  const where = `${early ? "truncated" : "damaged"} after line ${splitter.lines} (byte ${splitter.bytes})`;
  return { error: new ReplayInputError(file, `${where}: ${complete} (gzip: ${error.message})`), incomplete: true };
}

/**
 * Reads the runs of one file a line at a time (JSON Lines, `.gz` too; a file that is one JSON document is read whole
 * up to `maxDocumentBytes`). Yields each run and, as {@link readRuns} does, an error for each part that cannot be
 * read; also for a file that is not a regular file (never read), a line over `maxLineBytes` (skipped), a file over
 * `maxBytes`, and, marked `incomplete`, a `.gz` that ends early or is damaged. It never throws for bad input.
 *
 * @example
 * ```ts
 * import { addTotals, emptyTotals, readRunsFromFile, replayGuards } from "langgraph-guards/replay";
 *
 * let totals = emptyTotals();
 * for await (const item of readRunsFromFile("runs.jsonl.gz", { maxBytes: 4 * 1024 ** 3 })) {
 *   if ("run" in item) totals = addTotals(totals, replayGuards(item.run).totals);
 *   else console.error(item.error.message); // e.g. "runs.jsonl.gz:7: not JSON (Unexpected token …)"
 * }
 * ```
 */
export function readRunsFromFile(
  path: string,
  options: ReadRunsFromFileOptions = {},
): AsyncGenerator<ReplayInputItem, void, undefined> {
  return readItems(path, options) as AsyncGenerator<ReplayInputItem, void, undefined>;
}

/** {@link readRunsFromFile}, whose lines of JSON Lines are given unread while `defer()` says so (worker threads). */
export async function* readItems(
  path: string,
  options: ReadRunsFromFileOptions = {},
  defer?: () => boolean,
): AsyncGenerator<InputItem, void, undefined> {
  const file = options.file ?? basename(path);
  const caps = { ...REPLAY_INPUT_CAPS, ...definedCaps(options) };
  const opened = await openRegular(path);
  if (opened instanceof ReplayInputError) {
    yield { error: opened, incomplete: false };
    return;
  }
  const { source, file: bytes } = bytesOf(opened.handle, options.gzip ?? path.endsWith(".gz"));
  const splitter = new LineSplitter(caps.maxLineBytes);
  const runs = new RunAssembler(file, options.format ?? "auto", caps, defer);
  let ending: Ending = { kind: "end" };
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      const room = caps.maxBytes - splitter.total;
      for (const event of splitter.push(chunk.length > room ? chunk.subarray(0, room) : chunk)) {
        yield* runs.take(event);
        if (runs.refused) return;
      }
      if (chunk.length > room) {
        ending = { kind: "cap" };
        break;
      }
      options.onProgress?.(bytes.bytesRead, opened.size);
    }
  } catch (e) {
    ending = { kind: "error", error: e as Error };
  } finally {
    source.destroy();
  }
  if (ending.kind === "end") for (const event of splitter.finish()) yield* runs.take(event);
  yield* runs.end(ending.kind === "end" ? "complete" : ending.kind === "cap" ? "cap" : "broken");
  if (ending.kind === "error") yield brokenItem(file, ending.error, splitter, runs.runs);
  if (ending.kind === "cap") {
    const cap = `${formatBytes(caps.maxBytes)} of text (the cap on one file: --max-bytes, option maxBytes)`;
    const read = `stopped after line ${splitter.lines}, ${runs.runs} run${runs.runs === 1 ? "" : "s"} read`;
    yield { error: new ReplayInputError(file, `more than ${cap}: ${read}`), incomplete: false };
  }
}

/** The caps set in `options` (an `undefined` one keeps its default); a cap that is not a positive integer throws. */
function definedCaps(options: ReadRunsFromFileOptions): Partial<typeof REPLAY_INPUT_CAPS> {
  const caps: { -readonly [K in keyof typeof REPLAY_INPUT_CAPS]?: number } = {};
  for (const key of ["maxBytes", "maxLineBytes", "maxDocumentBytes"] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value <= 0)
      throw new RangeError(`${key}: expected a positive integer, got ${value}`);
    caps[key] = value;
  }
  return caps;
}
