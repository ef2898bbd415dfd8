/**
 * What the write tools check before changing a file: edits of one file run one at a time; with the cache on, the file
 * must still have the digest the thread saw, or one the tools wrote since for the same model response.
 */
import type { Stats } from "node:fs";
import { AIMessage } from "@langchain/core/messages";
import { digest } from "../common/identity/signature.js";
import type { FileCacheWrite } from "./cache.js";
import { echo } from "./echo.js";
import { problemMessage } from "./io.js";
import { type Answer, type CallContext, type FileToolKit, fail, type Target } from "./kit.js";
import { looksBinary, viewLines } from "./read.js";

/** The end of the queue of edits of each path. */
const queues = new Map<string, Promise<void>>();

/** Runs `work` when every edit of `path` queued before it in this process has finished, and answers its result. */
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
 * The writes the tools made for the calls of each model response, by its AI message object: tool-call ids, message
 * ids and positions repeat across responses, threads and runs; the object does not, and its writes go with it.
 */
const writesOf = new WeakMap<AIMessage, ToolWrite[]>();

/** The model response this call belongs to: its AI message in the state. */
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

/** The file as an edit found it (null: none; undefined: not read) and its digest, or the answer refusing the edit. */
export type Baseline =
  | { ok: true; current: { bytes: Buffer; stat: Stats } | null | undefined; hash: string | null }
  | { ok: false; answer: Answer };

/**
 * The refusal of an edit of a file that changed since the model saw it: removed (null), grown past what the tools
 * read (a size), or with other content, which the answer shows and the cache notes.
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
  const o = kit.options;
  const file = kit.cacheEntry(current.bytes, current.stat, readAt);
  const writes: FileCacheWrite[] = [
    { op: "put", path: target.path, file, budget: o.cache.budgetChars, maxFiles: o.cache.maxFiles },
    { op: "count", staleRefreshes: 1 },
  ];
  return { ...fail(shown), writes };
}

/**
 * Checks the file against what the thread last saw of it: `current` is the file as read now (null when missing;
 * `readAt` the clock before it was read), or undefined to read it here (only when the cache has an entry).
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
    const read = await kit.read(target.path);
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
