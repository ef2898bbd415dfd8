/**
 * `read_file`: a text file with line numbers, always read from disk; a repeat read of content the cache's digest
 * still matches answers with a reference to the earlier result while that result is still in `messages`.
 */
import { type Stats, statSync } from "node:fs";
import { ToolMessage } from "@langchain/core/messages";
import { z } from "zod/v4";
import { digest } from "../common/identity/signature.js";
import { type CachedFile, type FileCacheWrite, freshness } from "./cache.js";
import { echo } from "./echo.js";
import { failed, problemMessage, readRegularFileSync, unfit } from "./io.js";
import {
  type Answer,
  type AnswersNow,
  type CallContext,
  cachedReaderMetadata,
  checkContext,
  type FileToolKit,
  fail,
  fileTool,
  type Target,
} from "./kit.js";
import { type LineView, looksBinary, viewLines } from "./read.js";
import { unchangedReadText } from "./texts.js";

const schema = z.object({
  path: z.string().describe("Path relative to the project root"),
  offset: z.number().int().min(1).optional().describe("First line to show (1-based)"),
  /** How many lines to show. Default: the `limits.defaultLineLimit` option (2000). */
  limit: z.number().int().min(1).optional().describe("How many lines to show"),
});

/** The stat of a file `read_file` may show, or why not; nothing is opened, so a FIFO is never waited on. */
function statReadable(kit: FileToolKit, shown: string, path: string): Stats | string {
  let s: Stats;
  try {
    s = statSync(path);
  } catch (e) {
    return problemMessage(shown, failed(e).problem, "read"); // missing, not readable (EACCES), or the error's code
  }
  const refused = unfit(s, kit.options.limits.maxFileBytes);
  return refused ? problemMessage(shown, refused.problem, "read") : s;
}

async function readBytes(
  kit: FileToolKit,
  shown: string,
  target: Target,
): Promise<{ bytes: Buffer; stat: Stats } | string> {
  const read = await kit.read(target.path);
  return read.ok ? read : problemMessage(shown, read.problem, "read");
}

interface Loaded {
  content: string;
  hit: boolean;
  writes: FileCacheWrite[];
}

/** A file's whole content from disk: a hit on the cached digest, else a stale refresh or a miss; why not if binary. */
async function loadContent(
  kit: FileToolKit,
  shown: string,
  target: Target,
  s: Stats,
  cached: CachedFile | undefined,
): Promise<Loaded | string> {
  const o = kit.options;
  // Bytes read to check a cached entry: a mismatch reuses them.
  let bytesRead: { bytes: Buffer; stat: Stats; hash: string } | undefined;
  let readAt = 0; // the clock before the file was opened (and its stat taken)
  if (cached !== undefined && freshness(cached, s, o.cache.racyWindowMs) !== "stale") {
    readAt = kit.now();
    const read = await readBytes(kit, shown, target);
    if (typeof read === "string") return read;
    bytesRead = { ...read, hash: digest(read.bytes) };
    if (bytesRead.hash === cached.hash) {
      const text = read.bytes.toString("utf8");
      kit.log(`[CACHE_HIT] Returned cached content for ${target.relative}`);
      return { content: text, hit: true, writes: [] };
    }
  }
  const stale = cached !== undefined;
  if (bytesRead === undefined) readAt = kit.now();
  const read = bytesRead ?? (await readBytes(kit, shown, target));
  if (typeof read === "string") return read;
  const { bytes } = read;
  if (looksBinary(bytes)) return binaryText(shown, bytes);
  const content = bytes.toString("utf8");
  const writes: FileCacheWrite[] = [];
  if (o.cache.enabled) {
    // The stat of the opened file, taken before its bytes were read: a change made since is seen by the next read.
    writes.push({
      op: "put",
      path: target.path,
      file: kit.cacheEntry(bytes, read.stat, readAt, { text: content, hash: bytesRead?.hash }),
      budget: o.cache.budgetChars,
      maxFiles: o.cache.maxFiles,
    });
    writes.push(stale ? { op: "count", staleRefreshes: 1 } : { op: "count", misses: 1 });
  }
  kit.log(
    stale
      ? `[CACHE_STALE] ${target.relative} changed on disk; read it again`
      : `[CACHE_MISS] Read ${target.relative} from disk`,
  );
  return { content, hit: false, writes };
}

function binaryText(shown: string, bytes: Buffer): string {
  return `${echo(shown)} is a binary file (${bytes.length} bytes); read_file shows text files only.`;
}

/** What `read_file` would answer now, nothing written or logged; also the reference answer the cache would allow. */
function readAnswersNow(kit: FileToolKit, args: unknown, state: unknown): { ok: boolean; text: string }[] | undefined {
  const parsed = schema.safeParse(args);
  if (!parsed.success) return undefined;
  const input = parsed.data;
  const target = kit.sandbox.resolve(input.path);
  if (!target.ok) return [{ ok: false, text: target.message }];
  const s = statReadable(kit, input.path, target.path);
  if (typeof s === "string") return [{ ok: false, text: s }];
  const read = readRegularFileSync(target.path, kit.root, kit.options.limits.maxFileBytes);
  if (!read.ok) return [{ ok: false, text: problemMessage(input.path, read.problem, "read") }];
  if (looksBinary(read.bytes)) return [{ ok: false, text: binaryText(input.path, read.bytes) }];
  const content = read.bytes.toString("utf8");
  const view = viewLines(content, { offset: input.offset, limit: input.limit }, kit.options.limits);
  const answers = [{ ok: true, text: view.text }];
  const cached = kit.options.cache.enabled ? checkContext(state).cache?.files[target.path] : undefined;
  if (cached?.ref !== undefined && digest(read.bytes) === cached.hash) {
    const range = view.whole ? undefined : { from: view.from, to: view.to };
    answers.push({ ok: true, text: unchangedReadText(target.relative, cached.ref, range) });
  }
  return answers;
}

/**
 * A reference to the earlier result, while it is in the messages holding exactly the whole content served now, and
 * the reference is shorter than it. The result is compared with the content, not only with the digest noted: the
 * note lands on the entry the cache holds when the step's writes apply (after a same-step write, the new content's).
 */
function referenceAnswer(
  kit: FileToolKit,
  target: Target,
  view: LineView,
  content: string,
  cached: CachedFile,
  call: CallContext,
): Answer | undefined {
  const { ref, refDigest } = cached;
  if (ref === undefined || refDigest === undefined) return undefined;
  const range = view.whole ? undefined : { from: view.from, to: view.to };
  const reference = unchangedReadText(target.relative, ref, range);
  if (reference.length >= view.text.length) return undefined;
  const candidates = call.messages.filter((m) => ToolMessage.isInstance(m) && m.tool_call_id === ref);
  if (candidates.length === 0) return undefined;
  const whole = view.whole
    ? view.text
    : viewLines(content, { limit: Number.MAX_SAFE_INTEGER }, kit.options.limits).text;
  if (!candidates.some((m) => String(m.content) === whole)) return undefined;
  return {
    content: reference,
    ok: true,
    artifact: { path: target.relative, cached: true, content_ref: ref },
    writes: [
      { op: "touch", path: target.path },
      { op: "count", hits: 1, bytesSaved: view.text.length - reference.length },
    ],
  };
}

async function readFileAnswer(kit: FileToolKit, input: z.infer<typeof schema>, call: CallContext): Promise<Answer> {
  const target = kit.sandbox.resolve(input.path);
  if (!target.ok) return fail(target.message);
  const s = statReadable(kit, input.path, target.path);
  if (typeof s === "string") return fail(s);
  const cached = kit.options.cache.enabled ? call.cache?.files[target.path] : undefined;
  const loaded = await loadContent(kit, input.path, target, s, cached);
  if (typeof loaded === "string") return fail(loaded);
  const { hit, writes } = loaded;
  const view = viewLines(loaded.content, { offset: input.offset, limit: input.limit }, kit.options.limits);
  const reference =
    hit && cached !== undefined ? referenceAnswer(kit, target, view, loaded.content, cached, call) : undefined;
  if (reference !== undefined) return { ...reference, writes: [...writes, ...(reference.writes ?? [])] };
  if (hit) writes.push({ op: "count", hits: 1 });
  if (kit.options.cache.enabled && view.whole && call.toolCallId !== undefined) {
    // This answer now holds the whole content: later reads of unchanged content can refer to it.
    writes.push({ op: "touch", path: target.path, ref: call.toolCallId, refDigest: digest(view.text) });
  } else if (hit) writes.push({ op: "touch", path: target.path });
  return { content: view.text, ok: true, artifact: { path: target.relative, cached: hit }, writes };
}

/** The `read_file` tool of {@link createFileTools}. */
export function readFileTool(kit: FileToolKit) {
  const description =
    "Read a text file of the project, with line numbers. Use offset (1-based line) and limit to read part of a long file.";
  const answersNow: AnswersNow = (args, state) => readAnswersNow(kit, args, state);
  const fields = { name: "read_file", description, schema, metadata: cachedReaderMetadata(answersNow) } as const;
  return fileTool(kit, fields, (input, call) => readFileAnswer(kit, input, call));
}
