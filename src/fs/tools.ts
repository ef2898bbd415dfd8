import { spawn } from "node:child_process";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { applyPatch } from "diff";
import { parse } from "shell-quote";
import { z } from "zod";
import { parseOptions } from "../core/options.js";
import { isReadOnlyCommand } from "../core/shell.js";
import { digest } from "../core/signature.js";
import { type CachedFile, type FileCacheState, type FileCacheWrite, freshness } from "./cache.js";
import { DEFAULT_READ_LIMITS, looksBinary, splitLines, viewLines } from "./read.js";
import { createSandbox, errorCode, type Sandbox } from "./sandbox.js";
import { DEFAULT_IGNORED, type DirNode, type DirTree, parentOf, refreshTree, renderListing, scanTree } from "./tree.js";

/**
 * Receives the cache log lines, in the seed's format (`[CACHE_HIT] ...`).
 *
 * @example
 * ```ts
 * createFileTools({ root: "/repo", logger: { info: (line) => console.info(line) } satisfies FileToolsLogger });
 * ```
 */
export interface FileToolsLogger {
  info(message: string): void;
}

const optionsSchema = z
  .object({
    /** The project root: every path is confined to it. */
    root: z.string().min(1),
    /** Keep the content cache and the directory tree in state. Default true. */
    cache: z.boolean().default(true),
    /** Also create `execute_command` (runs `bash -c` in the root). Default false. */
    allowCommands: z.boolean().default(false),
    /** `execute_command` timeout in ms. Default 60 s. */
    commandTimeoutMs: z.number().int().positive().default(60_000),
    /** Characters of command output kept (the rest is cut with a note). Default 30,000. */
    maxCommandOutputChars: z.number().int().positive().default(30_000),
    /** Largest file `read_file` shows, in bytes. Default 10 MB. */
    maxFileBytes: z.number().int().positive().default(10_000_000),
    /** Characters of file contents the cache keeps (least recently used evicted first). Default 50 M. */
    cacheBudgetChars: z.number().int().min(0).default(50_000_000),
    /** A file or folder modified within this many ms of being cached is verified (same-tick edits). Default 2 s. */
    racyWindowMs: z.number().int().min(0).default(2000),
    /** `"stat"` trusts a matching stat outside the racy window; `"hash"` always compares the content. */
    verify: z.enum(["stat", "hash"]).default("stat"),
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
    /** Paths tools may read but not write. Default `[".git/"]`. */
    denyWrites: z.array(z.string()).default([".git/"]),
    /** Receives `[CACHE_HIT] ...` lines. Default: none. */
    logger: z.custom<FileToolsLogger>((v) => typeof (v as FileToolsLogger)?.info === "function").optional(),
    /** The clock (ms). Default `Date.now`. */
    clock: z.custom<() => number>((v) => typeof v === "function").optional(),
  })
  .strict();

/**
 * Options of {@link createFileTools}.
 *
 * @example
 * ```ts
 * const options: FileToolsOptions = { root: "/repo", allowCommands: true, commandTimeoutMs: 30_000 };
 * ```
 */
export type FileToolsOptions = z.input<typeof optionsSchema>;

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
  path: string;
  /** Served without touching the file's bytes (content cache, or listing from the tree). */
  cached: boolean;
  /** The tool call whose result holds the content this answer refers to. */
  content_ref?: string;
}

interface Context {
  toolCallId?: string;
  cache?: FileCacheState;
  messages: BaseMessage[];
  /** Whether the graph has the `fileCache` channel (so the tool can write to it). */
  channel: boolean;
}

function contextOf(runtime: unknown): Context {
  const r = runtime as { toolCallId?: string; toolCall?: { id?: string }; state?: Record<string, unknown> } | undefined;
  const state = r?.state;
  const channel = state !== undefined && state !== null && typeof state === "object" && "fileCache" in state;
  return {
    toolCallId: r?.toolCallId || r?.toolCall?.id || undefined,
    cache: channel ? (state.fileCache as FileCacheState | undefined) : undefined,
    messages: Array.isArray(state?.messages) ? (state.messages as BaseMessage[]) : [],
    channel,
  };
}

/** What a tool answers: text, success or failure, artifact, and cache writes. */
interface Answer {
  content: string;
  ok: boolean;
  artifact?: FileToolArtifact;
  writes?: FileCacheWrite[];
}

function respond(name: string, ctx: Context, answer: Answer, cacheOn: boolean): string | ToolMessage | Command {
  if (ctx.toolCallId === undefined) {
    if (!answer.ok) throw new Error(answer.content);
    return answer.content;
  }
  const message = new ToolMessage({
    content: answer.content,
    name,
    tool_call_id: ctx.toolCallId,
    status: answer.ok ? "success" : "error",
    ...(answer.artifact ? { artifact: answer.artifact } : {}),
  });
  if (!cacheOn || !ctx.channel || !answer.writes?.length) return message;
  return new Command({ update: { messages: [message], fileCache: answer.writes } });
}

/** Paths a shell command may change, when the command is understood; `undefined` when anything may change. */
export function changedPaths(command: string, cwd: string): string[] | undefined {
  if (isReadOnlyCommand(command)) return [];
  if (/[`$]|<\(|>\(/.test(command)) return undefined;
  let tokens: ReturnType<typeof parse>;
  try {
    tokens = parse(command);
  } catch {
    return undefined;
  }
  const paths: string[] = [];
  let words: string[] = [];
  const flush = (): boolean => {
    const [program, ...args] = words;
    words = [];
    if (program === undefined) return true;
    const operands = args.filter((a) => !a.startsWith("-"));
    switch (program) {
      case "rm":
      case "rmdir":
      case "mkdir":
      case "touch":
      case "mv":
      case "tee":
        paths.push(...operands);
        return true;
      case "cp":
        if (operands.length > 0) paths.push(operands[operands.length - 1] as string);
        return true;
      case "git": {
        // `git checkout -- <paths>` and `git restore <paths>` touch those paths; other forms may touch anything.
        const [sub, ...rest] = args;
        const dashes = rest.indexOf("--");
        if (sub === "checkout" && dashes >= 0 && dashes < rest.length - 1) {
          paths.push(...rest.slice(dashes + 1));
          return true;
        }
        if (sub === "restore" && rest.some((a) => !a.startsWith("-"))) {
          paths.push(...rest.filter((a) => !a.startsWith("-") && a !== "--"));
          return true;
        }
        return isReadOnlyCommand(["git", ...args].join(" "));
      }
      case "sed":
        if (!args.some((a) => /^-[a-zA-Z]*i/.test(a) || a.startsWith("--in-place")))
          return isReadOnlyCommand(words.join(" "));
        paths.push(...operands.slice(1));
        return true;
      default:
        return isReadOnlyCommand([program, ...args].join(" ") || "true");
    }
  };
  for (let i = 0; i < tokens.length; i += 1) {
    const t = tokens[i];
    if (typeof t === "string") {
      words.push(t);
      continue;
    }
    if (typeof t === "object" && t !== null && "op" in t) {
      if (t.op === ">" || t.op === ">>") {
        const target = tokens[i + 1];
        if (typeof target !== "string") return undefined;
        if (target !== "/dev/null") paths.push(target);
        i += 1;
        continue;
      }
      if (t.op === ">&") {
        i += 1;
        continue;
      }
      if (t.op === "|" || t.op === "&&" || t.op === "||" || t.op === ";") {
        if (!flush()) return undefined;
        continue;
      }
      return undefined;
    }
    return undefined;
  }
  if (!flush()) return undefined;
  return paths.map((p) => (isAbsolute(p) ? p : resolve(cwd, p)));
}

/**
 * Creates the file tools of seed 001 over a sandboxed project root: `read_file`, `list_files`, `write_to_file`,
 * `apply_source_code_diff`, and `execute_command` with `allowCommands: true`. In a graph whose state has the
 * `fileCache` channel (`GuardState`), file contents and the directory tree are cached in state, per thread, and
 * stored by the checkpointer as changes only. A cached file is served only while its stat (taken before reading)
 * still matches; a repeat read of unchanged content answers with a reference to the earlier result while that
 * result is still in `messages`. Paths are confined to `root` after resolving symlinks.
 *
 * @example
 * ```ts
 * const tools = createFileTools({ root: "/repo" });
 * const agent = createReactAgent({ llm, tools: new GuardedToolNode(tools), stateSchema: GuardMessagesState });
 * ```
 */
export function createFileTools(options: FileToolsOptions) {
  const o = parseOptions(optionsSchema, options, "file-tool");
  const sandbox: Sandbox = createSandbox({ root: o.root, denyWrites: o.denyWrites });
  const root = sandbox.root;
  const now = () => (o.clock ?? Date.now)();
  const log = (line: string) => o.logger?.info(`[TOOL_RUNNER]${line}`);
  const limits = { defaultLineLimit: o.defaultLineLimit, maxLineChars: o.maxLineChars };
  const fail = (content: string): Answer => ({ content, ok: false });
  const metadata = { readOnlyHint: true, langgraphGuards: { servesRepeats: true } };

  const toCached = (content: string, s: { mtimeMs: number; size: number; ino: number }): CachedFile => ({
    content,
    hash: digest(content),
    mtimeMs: s.mtimeMs,
    size: s.size,
    ino: s.ino,
    cachedAt: now(),
  });

  const readFileTool = tool(
    async (input, runtime) => {
      const ctx = contextOf(runtime);
      const answer = await (async (): Promise<Answer> => {
        const target = sandbox.resolve(input.path);
        if (!target.ok) return fail(target.message);
        let s: Awaited<ReturnType<typeof stat>>;
        try {
          s = await stat(target.path);
        } catch (e) {
          return fail(
            errorCode(e) === "ENOENT"
              ? `File not found: ${input.path}`
              : `Cannot read ${input.path}: ${(e as Error).message}`,
          );
        }
        if (s.isDirectory()) return fail(`${input.path} is a folder: use list_files to see its entries.`);
        if (s.size > o.maxFileBytes) {
          return fail(`${input.path} is too large to read (${s.size} bytes; the limit is ${o.maxFileBytes}).`);
        }
        const writes: FileCacheWrite[] = [];
        const cached = o.cache ? ctx.cache?.files[target.path] : undefined;
        let content: string | undefined;
        let hit = false;
        let stale = false;
        /** Bytes already read to verify a racy entry: a mismatch reuses them instead of reading the file again. */
        let bytesRead: Buffer | undefined;
        if (cached !== undefined) {
          const state = freshness(cached, s, o.racyWindowMs);
          if (state === "fresh" && o.verify === "stat") {
            content = cached.content;
            hit = true;
          } else if (state !== "stale") {
            bytesRead = await readFile(target.path);
            const text = bytesRead.toString("utf8");
            if (digest(text) === cached.hash) {
              content = text;
              hit = true;
            } else stale = true;
          } else stale = true;
        }
        if (!hit) {
          const bytes = bytesRead ?? (await readFile(target.path));
          if (looksBinary(bytes)) {
            return fail(`${input.path} is a binary file (${bytes.length} bytes); read_file shows text files only.`);
          }
          content = bytes.toString("utf8");
          if (o.cache) {
            writes.push({ op: "put", path: target.path, file: toCached(content, s), budget: o.cacheBudgetChars });
            writes.push(stale ? { op: "count", staleRefreshes: 1 } : { op: "count", misses: 1 });
          }
          log(
            stale
              ? `[CACHE_STALE] ${target.relative} changed on disk; read it again`
              : `[CACHE_MISS] Read ${target.relative} from disk`,
          );
        }
        const view = viewLines(content as string, { offset: input.offset, limit: input.limit }, limits);
        const ref = cached?.ref;
        const refDigest = cached?.refDigest;
        const earlier =
          hit && ref !== undefined && refDigest !== undefined
            ? ctx.messages.find(
                (m) => ToolMessage.isInstance(m) && m.tool_call_id === ref && digest(String(m.content)) === refDigest,
              )
            : undefined;
        const range = view.whole ? "" : ` Lines ${view.from}-${view.to} are among them.`;
        const reference = `${target.relative} is unchanged since your earlier read: its full content is in the result of tool call ${ref} above.${range}`;
        // A reference is only worth it when it is shorter than what it stands for (a few lines, a tiny file).
        if (earlier !== undefined && reference.length < view.text.length) {
          log(`[CACHE_HIT] Returned cached content for ${target.relative}`);
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
        if (hit) {
          log(`[CACHE_HIT] Returned cached content for ${target.relative}`);
          writes.push({ op: "count", hits: 1 });
        }
        if (o.cache && view.whole && ctx.toolCallId !== undefined) {
          // This answer now holds the whole content: later reads of unchanged content can refer to it.
          writes.push({
            op: "touch",
            path: target.path,
            ref: ctx.toolCallId,
            refDigest: digest(view.text),
          });
        } else if (hit) writes.push({ op: "touch", path: target.path });
        return { content: view.text, ok: true, artifact: { path: target.relative, cached: hit }, writes };
      })();
      return respond("read_file", ctx, answer, o.cache);
    },
    {
      name: "read_file",
      description:
        "Read a text file of the project, with line numbers. Use offset (1-based line) and limit to read part of a long file.",
      schema: z.object({
        path: z.string().describe("Path relative to the project root"),
        offset: z.number().int().min(1).optional().describe("First line to show (1-based)"),
        limit: z.number().int().min(1).optional().describe("How many lines to show"),
      }),
      metadata,
    },
  );

  const listFilesTool = tool(
    async (input, runtime) => {
      const ctx = contextOf(runtime);
      const answer = ((): Answer => {
        const target = sandbox.resolve(input.path ?? ".");
        if (!target.ok) return fail(target.message);
        const rel = target.relative === "." ? "" : target.relative;
        const recursive = input.recursive ?? false;
        const scanOptions = { ignored: o.ignored, entryCap: o.scanEntryCap, now: now(), racyWindowMs: o.racyWindowMs };
        let tree: DirTree | null | undefined = o.cache ? (ctx.cache?.tree ?? null) : null;
        const writes: FileCacheWrite[] = [];
        let fromCache = false;
        if (tree === null) {
          const scanned = scanTree(root, o.cache ? "" : rel, scanOptions);
          if (scanned === undefined) {
            const partial = scanTree(root, rel, { ...scanOptions, entryCap: Number.MAX_SAFE_INTEGER });
            tree = partial ?? {};
          } else {
            tree = scanned;
            if (o.cache) {
              writes.push({ op: "treeSet", dirs: scanned, complete: true });
              log(`[DIR_CACHE] Initialized directory cache (${Object.keys(scanned).length} folders)`);
            }
          }
        } else {
          const changes = refreshTree(root, tree, rel, recursive, scanOptions);
          if (!(rel in tree) && !(rel in changes)) Object.assign(changes, scanTree(root, rel, scanOptions) ?? {});
          fromCache = Object.keys(changes).length === 0;
          if (!fromCache) {
            tree = { ...tree };
            for (const [k, v] of Object.entries(changes)) {
              if (v === null) delete tree[k];
              else tree[k] = v as DirNode;
            }
            writes.push({ op: "treeSet", dirs: changes });
          }
        }
        if (!(rel in tree)) return fail(`Not a folder: ${input.path ?? "."}`);
        if (fromCache) writes.push({ op: "count", hits: 1 });
        return {
          content: renderListing(tree, rel, recursive, o.listLimit),
          ok: true,
          artifact: { path: target.relative, cached: fromCache },
          writes,
        };
      })();
      return respond("list_files", ctx, answer, o.cache);
    },
    {
      name: "list_files",
      description:
        "List the files and folders in a folder of the project (folders end with /). recursive lists everything below it.",
      schema: z.object({
        path: z.string().optional().describe("Folder relative to the project root; default the root"),
        recursive: z.boolean().optional(),
      }),
      metadata,
    },
  );

  async function writeAndCache(
    path: string,
    rel: string,
    content: string,
    created: boolean,
  ): Promise<FileCacheWrite[]> {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content, "utf8");
    if (!o.cache) return [];
    const s = await stat(path);
    const writes: FileCacheWrite[] = [{ op: "put", path, file: toCached(content, s), budget: o.cacheBudgetChars }];
    if (created) {
      writes.push({ op: "treeAdd", rel });
      log(`[DIR_CACHE] Updated directory cache for created file: ${rel}`);
    }
    return writes;
  }

  const writeToFileTool = tool(
    async (input, runtime) => {
      const ctx = contextOf(runtime);
      const answer = await (async (): Promise<Answer> => {
        const target = sandbox.resolve(input.path, { write: true });
        if (!target.ok) return fail(target.message);
        let existed = true;
        try {
          if ((await stat(target.path)).isDirectory()) return fail(`${input.path} is a folder, not a file.`);
        } catch {
          existed = false;
        }
        const writes = await writeAndCache(target.path, target.relative, input.content, !existed);
        const lines = splitLines(input.content).length;
        return {
          content: `Wrote ${lines} lines (${input.content.length} characters) to ${target.relative}.`,
          ok: true,
          artifact: { path: target.relative, cached: false },
          writes,
        };
      })();
      return respond("write_to_file", ctx, answer, o.cache);
    },
    {
      name: "write_to_file",
      description: "Create a file, or replace its whole content.",
      schema: z.object({ path: z.string(), content: z.string() }),
    },
  );

  const applyDiffTool = tool(
    async (input, runtime) => {
      const ctx = contextOf(runtime);
      const answer = await (async (): Promise<Answer> => {
        const target = sandbox.resolve(input.path, { write: true });
        if (!target.ok) return fail(target.message);
        let source: string;
        try {
          source = await readFile(target.path, "utf8");
        } catch (e) {
          return fail(
            errorCode(e) === "ENOENT" ? `File not found: ${input.path} (use write_to_file to create it).` : String(e),
          );
        }
        let patched: string | false;
        try {
          patched = applyPatch(source, input.diff);
        } catch (e) {
          return fail(`The diff is not a valid unified diff: ${(e as Error).message}. Nothing was changed.`);
        }
        if (patched === false) {
          return fail(
            `The diff does not apply to ${target.relative}: the context of a hunk does not match the file. Nothing was changed; read the file again and make the diff against its current content.`,
          );
        }
        const writes = await writeAndCache(target.path, target.relative, patched, false);
        return {
          content: `Applied the diff to ${target.relative} (now ${splitLines(patched).length} lines).`,
          ok: true,
          artifact: { path: target.relative, cached: false },
          writes,
        };
      })();
      return respond("apply_source_code_diff", ctx, answer, o.cache);
    },
    {
      name: "apply_source_code_diff",
      description: "Apply a unified diff (--- a/file, +++ b/file, @@ hunks) to one file of the project.",
      schema: z.object({ path: z.string(), diff: z.string().describe("A unified diff against the current file") }),
    },
  );

  const executeCommandTool = tool(
    async (input, runtime) => {
      const ctx = contextOf(runtime);
      const result = await new Promise<{ code: number | null; output: string; timedOut: boolean }>((done) => {
        // Its own process group, so a timeout ends the whole command (pipelines, background children), not just bash.
        const child = spawn("bash", ["-c", input.command], { cwd: root, env: process.env, detached: true });
        let output = "";
        let cut = 0;
        const take = (chunk: Buffer) => {
          const text = chunk.toString("utf8");
          const room = o.maxCommandOutputChars - output.length;
          if (room > 0) output += text.slice(0, room);
          cut += Math.max(0, text.length - Math.max(0, room));
        };
        child.stdout.on("data", take);
        child.stderr.on("data", take);
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          try {
            if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
          } catch {
            child.kill("SIGKILL");
          }
        }, o.commandTimeoutMs);
        child.on("close", (code) => {
          clearTimeout(timer);
          done({ code, output: cut > 0 ? `${output}\n... [${cut} more characters cut]` : output, timedOut });
        });
        child.on("error", (e) => {
          clearTimeout(timer);
          done({ code: null, output: String(e), timedOut });
        });
      });
      const writes: FileCacheWrite[] = [];
      if (o.cache && ctx.cache !== undefined) {
        const changed = changedPaths(input.command, root);
        if (changed === undefined) {
          writes.push({ op: "dropAll" }, { op: "treeDrop" });
          log("[DIR_CACHE] Invalidating directory cache due to execute_command");
        } else if (changed.length > 0) {
          const abs = changed.map((p) => {
            const r = sandbox.resolve(p);
            return r.ok ? r.path : resolve(root, p);
          });
          const files = Object.keys(ctx.cache.files).filter((f) => abs.some((p) => f === p || f.startsWith(`${p}/`)));
          if (files.length) writes.push({ op: "drop", paths: files });
          const dirs: Record<string, null> = {};
          for (const p of abs) {
            if (!(p === root || p.startsWith(`${root}/`))) continue;
            const rel = p.slice(root.length + 1);
            dirs[parentOf(rel)] = null;
            for (const d of Object.keys(ctx.cache.tree ?? {})) if (d === rel || d.startsWith(`${rel}/`)) dirs[d] = null;
          }
          if (Object.keys(dirs).length) writes.push({ op: "treeSet", dirs });
        }
      }
      const status = result.timedOut
        ? `Timed out after ${o.commandTimeoutMs} ms.`
        : `Exit code ${result.code ?? "unknown"}.`;
      return respond(
        "execute_command",
        ctx,
        { content: `${status}\n${result.output}`.trimEnd(), ok: !result.timedOut && result.code === 0, writes },
        o.cache,
      );
    },
    {
      name: "execute_command",
      description: "Run a shell command (bash) in the project root and return its exit code and output.",
      schema: z.object({ command: z.string() }),
    },
  );

  const tools = [readFileTool, listFilesTool, writeToFileTool, applyDiffTool];
  return o.allowCommands ? [...tools, executeCommandTool] : tools;
}
