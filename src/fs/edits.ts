/**
 * What the write tools check before they change a file:
 *
 * - **One edit of a path at a time.** Edits of one file (by its real path) run one after the other within the
 *   process, in the order they were called ({@link serialized}), so two diffs of one model response both apply, the
 *   second to the first's result.
 * - **The file is what the model last saw.** With the cache on, a file the thread has read or written through the
 *   tools has an entry in `fileCache` (the digest of its content). Before a write or a diff, the file on disk is
 *   read and its digest compared with that entry; a file changed since (or removed) is not written: the answer says
 *   so and shows the new content. Content the tools themselves wrote for another call of the same model response
 *   (not yet in state, which is updated when the step ends) counts as seen ({@link recordToolWrite}). Without an
 *   entry — the cache off, a file never read, or one evicted from the cache — nothing is compared.
 */
import type { Stats } from "node:fs";
import { AIMessage } from "@langchain/core/messages";
import { digest } from "../common/identity/signature.js";
import type { FileCacheWrite } from "./cache.js";
import { echo } from "./echo.js";
import { problemMessage, readRegularFile } from "./io.js";
import { type Answer, type CallContext, type FileToolKit, fail, type Target } from "./kit.js";
import { looksBinary, viewLines } from "./read.js";

/** The end of the queue of edits of each path: a promise that settles when the last edit queued has finished. */
const queues = new Map<string, Promise<void>>();

/**
 * Runs `work` when every edit of `path` queued before it has finished (within this process), and answers its
 * result: edits of one file never overlap, and run in the order they were queued.
 *
 * @example
 * ```ts
 * await Promise.all([serialized("/repo/a.py", () => edit(1)), serialized("/repo/a.py", () => edit(2))]); // 1, then 2
 * ```
 */
export async function serialized<T>(path: string, work: () => Promise<T>): Promise<T> {
  const before = queues.get(path) ?? Promise.resolve();
  const run = before.then(work);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  queues.set(path, settled);
  try {
    return await run;
  } finally {
    if (queues.get(path) === settled) queues.delete(path);
  }
}

/** A write the tools made: the file's real path, the digests of what it replaced (null: not read) and wrote. */
interface ToolWrite {
  path: string;
  before: string | null;
  after: string;
}

/**
 * The writes the tools made for the calls of each model response, by its AI message: the object in the state of
 * the thread that holds it. Tool-call ids (`call_0`), message ids and positions in the history repeat across
 * responses, threads and runs without one; the object does not, and its writes go with it.
 */
const writesOf = new WeakMap<AIMessage, ToolWrite[]>();

/**
 * The model response this call belongs to: its AI message in the state (none without a tool call id or state).
 *
 * @example
 * ```ts
 * recordToolWrite(responseOf(call), { path: "/repo/a.py", before: oldDigest, after: newDigest });
 * ```
 */
export function responseOf(call: CallContext): AIMessage | undefined {
  const id = call.toolCallId;
  if (id === undefined) return undefined;
  return call.messages.findLast(
    (m): m is AIMessage => AIMessage.isInstance(m) && (m.tool_calls ?? []).some((c) => c.id === id),
  );
}

/** Notes a write the tools made, for the check of the next edit of the same file in the same model `response`. */
export function recordToolWrite(response: AIMessage | undefined, write: ToolWrite): void {
  if (response !== undefined) writesOf.set(response, [...(writesOf.get(response) ?? []), write]);
}

/** Whether content `now` of `path` came from content `seen` through the latest writes of the tools for `response`. */
function writtenSince(path: string, seen: string, now: string, response: AIMessage | undefined): boolean {
  const list = (response === undefined ? undefined : writesOf.get(response)) ?? [];
  let current = now;
  for (const write of list.filter((w) => w.path === path).reverse()) {
    if (write.after !== current || write.before === null) return false;
    if (write.before === seen) return true;
    current = write.before;
  }
  return false;
}

/**
 * The file as an edit found it: its bytes and stat (null when there is none; undefined when it was not read) and
 * the digest of its content (what the cache compares), or the answer refusing the edit.
 *
 * @example
 * ```ts
 * const seen: Baseline = { ok: true, current: null, hash: null };
 * ```
 */
export type Baseline =
  | { ok: true; current: { bytes: Buffer; stat: Stats } | null | undefined; hash: string | null }
  | { ok: false; answer: Answer };

/**
 * The refusal of an edit of a file that changed since the model saw it: removed (null), grown past what the tools
 * read (a size), or with other content, which the answer shows (and the cache notes, so the next edit is checked
 * against it).
 */
function refusal(
  kit: FileToolKit,
  target: Target,
  current: { bytes: Buffer; stat: Stats } | null | number,
  readAt: number,
): Answer {
  const name = echo(target.relative);
  const head = `${name} changed on disk since you last read or wrote it through the tools; nothing was written.`;
  const drop: FileCacheWrite[] = [{ op: "drop", paths: [target.path] }];
  if (current === null) {
    const text = `${name} was removed on disk since you last read or wrote it through the tools; nothing was written. Write it again to create it anew.`;
    return { ...fail(text), writes: drop };
  }
  if (typeof current === "number") {
    const limit = kit.options.limits.maxFileBytes;
    return { ...fail(`${head} It is now ${current} bytes, more than the tools read (${limit}).`), writes: drop };
  }
  const shown = looksBinary(current.bytes)
    ? `${head} It is now a binary file (${current.bytes.length} bytes).`
    : `${head} Its current content is below: make your change against it.\n\n${viewLines(current.bytes.toString("utf8"), {}, kit.options.limits).text}`;
  // The answer shows the new content: the next edit is checked against it.
  const o = kit.options;
  const file = kit.cacheEntry(current.bytes, current.stat, readAt);
  const writes: FileCacheWrite[] = [
    { op: "put", path: target.path, file, budget: o.cache.budgetChars, maxFiles: o.cache.maxFiles },
    { op: "count", staleRefreshes: 1 },
  ];
  return { ...fail(shown), writes };
}

/**
 * Checks the file against what the thread last saw of it (see the module's comment): `current` is the file as read
 * now (null when missing; `readAt` the clock's time before it was read), or undefined to read it here (only when
 * the cache has an entry to compare with).
 *
 * @example
 * ```ts
 * const seen = await checkBaseline(kit, call, target, undefined);
 * if (!seen.ok) return seen.answer;
 * ```
 */
export async function checkBaseline(
  kit: FileToolKit,
  call: CallContext,
  target: Target,
  current: { bytes: Buffer; stat: Stats } | null | undefined,
  readAt: number = kit.now(),
): Promise<Baseline> {
  const entry = kit.options.cache.enabled ? call.cache?.files[target.path] : undefined;
  if (entry === undefined) {
    return { ok: true, current, hash: current ? digest(current.bytes) : null };
  }
  let now = current;
  if (now === undefined) {
    const o = kit.options;
    const read = await readRegularFile(target.path, {
      root: kit.root,
      maxBytes: o.limits.maxFileBytes,
      timeoutMs: o.limits.ioTimeoutMs,
    });
    if (!read.ok && read.problem.kind === "too-large") {
      return { ok: false, answer: refusal(kit, target, read.problem.size, readAt) };
    }
    if (!read.ok && read.problem.kind !== "missing") {
      return { ok: false, answer: fail(problemMessage(target.relative, read.problem, "written")) };
    }
    now = read.ok ? read : null;
  }
  const hash = now === null ? null : digest(now.bytes);
  if (hash === entry.hash) return { ok: true, current: now, hash };
  if (hash !== null && writtenSince(target.path, entry.hash, hash, responseOf(call))) {
    return { ok: true, current: now, hash };
  }
  return { ok: false, answer: refusal(kit, target, now, readAt) };
}
