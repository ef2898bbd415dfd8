/**
 * `execute_command` (only with `allowCommands: true`): runs `bash -c` in the root, then drops from the cache what
 * the command may have changed (everything, when the command is not understood: see `changedPaths`).
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { z } from "zod/v4";
import { changedPaths } from "../core/identity/shell/index.js";
import { cutEnd } from "../core/text.js";
import type { FileCacheState, FileCacheWrite } from "./cache.js";
import { type Answer, type CallContext, type FileToolKit, fileTool } from "./kit.js";
import { parentOf } from "./tree-paths.js";

const schema = z.object({
  /** The command line, run with `bash -c` in the project root. */
  command: z.string(),
});

/** How a command ended: its exit code (null when killed), its output (cut to the limit), whether it timed out. */
interface CommandResult {
  code: number | null;
  output: string;
  timedOut: boolean;
}

/**
 * Runs `bash -c command` in `cwd`, stdout and stderr interleaved in one output of at most `maxChars` characters
 * (the rest is cut with a note), killed after `timeoutMs`.
 */
function runCommand(command: string, cwd: string, timeoutMs: number, maxChars: number): Promise<CommandResult> {
  return new Promise((done) => {
    // Its own process group, so a timeout ends the whole command (pipelines, background children), not just bash.
    const child = spawn("bash", ["-c", command], { cwd, env: process.env, detached: true });
    let output = "";
    let cut = 0;
    // Once anything is cut, the rest is counted only: the output shown is a start of what the command printed.
    const take = (text: string) => {
      const end = cut > 0 ? 0 : cutEnd(text, maxChars - output.length);
      output += text.slice(0, end);
      cut += text.length - end;
    };
    // Decoded per stream, so a character whose bytes arrive in two chunks stays one character.
    child.stdout.setEncoding("utf8").on("data", take);
    child.stderr.setEncoding("utf8").on("data", take);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, output: cut > 0 ? `${output}\n... [${cut} more characters cut]` : output, timedOut });
    });
    child.on("error", (e) => {
      clearTimeout(timer);
      done({ code: null, output: String(e), timedOut });
    });
  });
}

/** The folders of the tree a change of `paths` (absolute) makes stale: each path's parent, and itself with every folder below. */
function staleFolders(root: string, paths: string[], tree: FileCacheState["tree"]): Record<string, null> {
  const dirs: Record<string, null> = {};
  for (const p of paths) {
    if (!(p === root || p.startsWith(`${root}/`))) continue;
    const rel = p.slice(root.length + 1);
    dirs[parentOf(rel)] = null;
    for (const d of Object.keys(tree ?? {})) if (d === rel || d.startsWith(`${rel}/`)) dirs[d] = null;
  }
  return dirs;
}

/** The cache writes after `command` ran: drop the files and folders it may have changed. */
function invalidations(kit: FileToolKit, cache: FileCacheState, command: string): FileCacheWrite[] {
  const changed = changedPaths(command, kit.root);
  if (changed === undefined) {
    kit.log("[DIR_CACHE] Invalidating directory cache due to execute_command");
    return [{ op: "dropAll" }, { op: "treeDrop" }];
  }
  const abs = changed.map((p) => {
    const r = kit.sandbox.resolve(p);
    return r.ok ? r.path : resolve(kit.root, p);
  });
  const writes: FileCacheWrite[] = [];
  const files = Object.keys(cache.files).filter((f) => abs.some((p) => f === p || f.startsWith(`${p}/`)));
  if (files.length) writes.push({ op: "drop", paths: files });
  const dirs = staleFolders(kit.root, abs, cache.tree);
  if (Object.keys(dirs).length) writes.push({ op: "treeSet", dirs });
  return writes;
}

async function executeCommandAnswer(
  kit: FileToolKit,
  input: z.infer<typeof schema>,
  call: CallContext,
): Promise<Answer> {
  const o = kit.options;
  const result = await runCommand(input.command, kit.root, o.commands.timeoutMs, o.commands.maxOutputChars);
  const writes = o.cache.enabled && call.cache !== undefined ? invalidations(kit, call.cache, input.command) : [];
  const status = result.timedOut
    ? `Timed out after ${o.commands.timeoutMs} ms.`
    : `Exit code ${result.code ?? "unknown"}.`;
  return { content: `${status}\n${result.output}`.trimEnd(), ok: !result.timedOut && result.code === 0, writes };
}

/**
 * The `execute_command` tool of {@link createFileTools}.
 *
 * @example
 * ```ts
 * await executeCommandTool(createToolKit({ root: "/repo", allowCommands: true })).invoke({ command: "npm test" });
 * ```
 */
export function executeCommandTool(kit: FileToolKit) {
  const description = "Run a shell command (bash) in the project root and return its exit code and output.";
  const fields = { name: "execute_command", description, schema } as const;
  return fileTool(kit, fields, (input, call) => executeCommandAnswer(kit, input, call));
}
