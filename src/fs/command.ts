/** `execute_command`: runs `bash -c` in the root, then drops from the cache what the command may have changed. */
import { resolve } from "node:path";
import { z } from "zod/v4";
import { changedPaths } from "../common/identity/shell/index.js";
import type { FileCacheState, FileCacheWrite } from "./cache.js";
import { type Answer, type CallContext, type FileToolKit, fileTool } from "./kit.js";
import { type CommandResult, runCommand } from "./run-command.js";
import { parentOf } from "./tree-paths.js";

const schema = z.object({
  /** The command line, run with `bash -c` in the project root. */
  command: z.string(),
});

/** The folders of the tree a change of `paths` (absolute) makes stale: each one's parent, itself and all below. */
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

function commandText(result: CommandResult, timeoutMs: number): string {
  if (result.startError !== undefined)
    return `The command could not be started: bash failed to start (${result.startError}).`;
  const status = result.timedOut
    ? `Timed out after ${timeoutMs} ms. The command and everything it started were stopped.`
    : result.code !== null
      ? `Exit code ${result.code}.`
      : `Ended by ${result.signal ?? "an unknown cause"}.`;
  const note = result.heldOpen
    ? "(The shell exited, but processes it started in the background still held its output; they were stopped, and their output after the shell exited is not shown.)"
    : "";
  return [status, result.output.trimEnd(), note].filter((part) => part !== "").join("\n");
}

async function executeCommandAnswer(
  kit: FileToolKit,
  input: z.infer<typeof schema>,
  call: CallContext,
): Promise<Answer> {
  const o = kit.options;
  const result = await runCommand(input.command, kit.root, o.commands.timeoutMs, o.commands.maxOutputChars);
  const writes = o.cache.enabled && call.cache !== undefined ? invalidations(kit, call.cache, input.command) : [];
  const ok = !result.timedOut && result.code === 0;
  return { content: commandText(result, o.commands.timeoutMs), ok, writes };
}

/** The `execute_command` tool of {@link createFileTools}. */
export function executeCommandTool(kit: FileToolKit) {
  const description = "Run a shell command (bash) in the project root and return its exit code and output.";
  const fields = { name: "execute_command", description, schema } as const;
  return fileTool(kit, fields, (input, call) => executeCommandAnswer(kit, input, call));
}
