/** What the file tools share: the kit of one `createFileTools` call, a call's context, and how an answer is sent. */
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import type { z } from "zod/v4";
import { type GuardStreamEvent, guardStreamEvent } from "../common/events/stream-events.js";
import { emitGuardEvents, type WriterHost } from "../common/events/writer.js";
import { digest } from "../common/identity/signature.js";
import type { CachedFile, FileCacheState, FileCacheWrite, FileStat } from "./cache.js";
import { type ReadResult, ROOT_GONE, readRegularFile, rootGone } from "./io.js";
import { type FileToolsOptions, type ResolvedFileToolsOptions, resolveFileToolsOptions } from "./options.js";
import { createSandbox, type ResolvedPath, type Sandbox } from "./sandbox.js";
import { cacheEventText } from "./texts.js";

/**
 * What a file tool's ToolMessage carries in `artifact` (never sent to the model).
 *
 * @example
 * ```ts
 * const artifact = toolMessage.artifact as FileToolArtifact | undefined;
 * if (artifact?.cached) console.log(`served from the cache: ${artifact.path}`);
 * ```
 */
export interface FileToolArtifact {
  /** The file or folder, relative to the root (`/`-separated; `.` for the root). */
  path: string;
  /** Answered from the cache: a read of unchanged content (same digest), or a listing from the tree. */
  cached: boolean;
  /** The tool call whose result holds the content this answer refers to. */
  content_ref?: string;
}

/** The context of one tool call, read from the tool runtime. */
export interface CallContext {
  toolCallId?: string | undefined;
  /** The file cache in state (only when the graph has the channel). */
  cache?: FileCacheState | undefined;
  messages: BaseMessage[];
  /** Whether the graph has the `fileCache` channel. */
  channel: boolean;
  logChannel?: boolean;
  writer?: WriterHost;
}

/** What a tool answers: text, success or failure, artifact, and cache writes. */
export interface Answer {
  content: string;
  ok: boolean;
  artifact?: FileToolArtifact;
  writes?: FileCacheWrite[];
}

/** A path the sandbox accepted. */
export type Target = Extract<ResolvedPath, { ok: true }>;

/** The state one `createFileTools` call shares between its tools. */
export interface FileToolKit {
  readonly options: ResolvedFileToolsOptions;
  readonly sandbox: Sandbox;
  /** The real path of the root (symlinks resolved). */
  readonly root: string;
  now(): number;
  /** Sends a `[TOOL_RUNNER]` line to the logger, if any. */
  log(line: string): void;
  /** A regular file inside the root, read under the size and time limits (see `readRegularFile`). */
  read(path: string): Promise<ReadResult>;
  /**
   * The cache entry of bytes just read or written (their digest: an edit that reads the same as UTF-8 is still a
   * change); `statAt`: the clock before the stat (the racy window's start); `known`: text and digest if worked out.
   */
  cacheEntry(bytes: Buffer, stat: FileStat, statAt?: number, known?: { text?: string; hash?: string }): CachedFile;
}

function contextOf(runtime: unknown): CallContext {
  const r = runtime as { toolCallId?: string; toolCall?: { id?: string }; state?: Record<string, unknown> } | undefined;
  const state = r?.state;
  const isState = state !== undefined && state !== null && typeof state === "object";
  const channel = isState && "fileCache" in state;
  return {
    toolCallId: r?.toolCallId || r?.toolCall?.id || undefined,
    cache: channel ? (state.fileCache as FileCacheState | undefined) : undefined,
    messages: Array.isArray(state?.messages) ? (state.messages as BaseMessage[]) : [],
    channel,
    logChannel: isState && "guardLog" in state,
    writer: r as WriterHost,
  };
}

function cacheEvents(name: string, call: CallContext, answer: Answer): GuardStreamEvent[] {
  if (!answer.artifact?.cached) return [];
  const saved = answer.writes?.reduce((n, w) => n + (w.op === "count" ? (w.bytesSaved ?? 0) : 0), 0);
  const event = guardStreamEvent({
    kind: "cache",
    guard: "file-cache",
    tool: name,
    callId: call.toolCallId,
    bytesSaved: saved,
    message: cacheEventText(answer.artifact.path, answer.artifact.content_ref),
  });
  return [event];
}

/** A failed answer: the message tells the model what went wrong and what to do instead. */
export function fail(content: string): Answer {
  return { content, ok: false };
}

/**
 * The tool's result for an answer: the text alone without a tool call id (a failure then throws), else the
 * ToolMessage, in a Command with the cache writes and guard events when the graph has their channels.
 */
function respond(name: string, call: CallContext, answer: Answer, kit: FileToolKit): string | ToolMessage | Command {
  const cacheOn = kit.options.cache.enabled;
  const log = emitGuardEvents(call.writer, cacheEvents(name, call, answer), kit.options.feedback.events);
  if (call.toolCallId === undefined) {
    if (!answer.ok) throw new Error(answer.content);
    return answer.content;
  }
  const message = new ToolMessage({
    content: answer.content,
    name,
    tool_call_id: call.toolCallId,
    status: answer.ok ? "success" : "error",
    ...(answer.artifact ? { artifact: answer.artifact } : {}),
  });
  const writes = cacheOn && call.channel && answer.writes?.length ? { fileCache: answer.writes } : {};
  const logged = call.logChannel && log.length > 0 ? { guardLog: log } : {};
  if (Object.keys(writes).length + Object.keys(logged).length === 0) return message;
  return new Command({ update: { messages: [message], ...writes, ...logged } });
}

/** Validates the options and makes the kit the tools of one `createFileTools` call share. */
export function createToolKit(options: FileToolsOptions): FileToolKit {
  const o = resolveFileToolsOptions(options);
  const sandbox = createSandbox({ root: o.root, denyWrites: o.denyWrites, allowGitWrites: o.allowGitWrites });
  const now = () => (o.clock ?? Date.now)();
  return {
    options: o,
    sandbox,
    root: sandbox.root,
    now,
    log: (line) => o.feedback.logger?.info?.(`[TOOL_RUNNER]${line}`),
    read: (path) => readRegularFile(path, sandbox.root, o.limits.maxFileBytes, o.limits.ioTimeoutMs),
    cacheEntry: (bytes, s, statAt, known = {}) => ({
      hash: known.hash ?? digest(bytes),
      chars: (known.text ?? bytes.toString("utf8")).length,
      mtimeMs: s.mtimeMs,
      ctimeMs: s.ctimeMs,
      size: s.size,
      ino: s.ino,
      cachedAt: statAt ?? now(),
    }),
  };
}

/** A file tool: `run`'s answer becomes its result (see {@link respond}); once the project root is gone, it says so. */
export function fileTool<S extends z.ZodObject, N extends string>(
  kit: FileToolKit,
  fields: { name: N; description: string; schema: S; metadata?: Record<string, unknown> },
  run: (input: z.output<S>, call: CallContext) => Answer | Promise<Answer>,
) {
  return tool(async (input: z.output<S>, runtime: unknown): Promise<string | ToolMessage | Command> => {
    const call = contextOf(runtime);
    const answer = rootGone(kit.root) ? fail(ROOT_GONE) : await run(input, call);
    return respond(fields.name, call, answer, kit);
  }, fields);
}

/** What a file tool's call would answer now, given the graph state; `undefined` when it cannot tell. */
export type AnswersNow = (args: unknown, state: unknown) => { ok: boolean; text: string }[] | undefined;

/**
 * Metadata of a read-only tool that answers repeats cheaply: `GuardedToolNode` leaves repeats to the threshold and
 * cycle rules and asks `answersNow` before blocking one, so a call whose answer changed (file edited outside) runs.
 */
export function cachedReaderMetadata(answersNow: AnswersNow) {
  return { readOnlyHint: true, langgraphGuards: { servesRepeats: true, answersNow } };
}

/** The kit as a freshness check uses it: nothing is logged. */
export function quiet(kit: FileToolKit): FileToolKit {
  return { ...kit, log: () => undefined };
}

/** The context a freshness check reads in a graph's `state`: the file cache when the graph has the channel. */
export function checkContext(state: unknown): CallContext {
  return contextOf({ state });
}
