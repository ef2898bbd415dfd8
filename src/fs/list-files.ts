/** `list_files`: a folder's entries from the directory tree in state, each listed folder checked first. */
import { lstatSync, readdirSync, type Stats } from "node:fs";
import { z } from "zod/v4";
import type { FileCacheWrite } from "./cache.js";
import { echo } from "./echo.js";
import { failed, kindOf } from "./io.js";
import type { Answer, AnswersNow, CallContext, FileToolKit } from "./kit.js";
import { cachedReaderMetadata, checkContext, fail, fileTool, quiet } from "./kit.js";
import { errorCode } from "./sandbox.js";
import { type DirNode, type DirTree, type RefreshOptions, refreshTree, renderListing, scanTree } from "./tree.js";

const schema = z.object({
  path: z.string().optional().describe("Folder relative to the project root; default the root"),
  /** List everything below the folder, not only its entries. Default false. */
  recursive: z.boolean().optional(),
});

interface CurrentTree {
  tree: DirTree;
  writes: FileCacheWrite[];
  fromCache: boolean;
}

/**
 * A fresh scan: of the whole root when the cache is on (then cached), else of the folder `rel` only; over the entry
 * cap only `rel`, uncached. A folder the root scan leaves out (an ignored one, asked for by name) is scanned alone.
 */
function scan(kit: FileToolKit, rel: string, scanOptions: RefreshOptions): CurrentTree {
  const scanned = scanTree(kit.root, kit.options.cache.enabled ? "" : rel, scanOptions);
  if (scanned === undefined) {
    const partial = scanTree(kit.root, rel, { ...scanOptions, entryCap: Number.MAX_SAFE_INTEGER });
    return { tree: partial ?? {}, writes: [], fromCache: false };
  }
  if (!kit.options.cache.enabled) return { tree: scanned, writes: [], fromCache: false };
  if (!(rel in scanned)) Object.assign(scanned, scanTree(kit.root, rel, scanOptions) ?? {});
  if (kit.options.feedback.logger !== undefined) {
    kit.log(`[DIR_CACHE] Initialized directory cache (${Object.keys(scanned).length} folders)`);
  }
  return { tree: scanned, writes: [{ op: "treeSet", dirs: scanned, complete: true }], fromCache: false };
}

/** The tree with the part a listing of `rel` needs brought up to date (the cached one when nothing changed). */
function currentTree(kit: FileToolKit, call: CallContext, rel: string, recursive: boolean): CurrentTree {
  const o = kit.options;
  const scanOptions: RefreshOptions = {
    ignored: o.ignored,
    entryCap: o.cache.scanEntryCap,
    now: kit.now(),
    racyWindowMs: o.cache.racyWindowMs,
    maxIgnoreFileBytes: o.limits.maxIgnoreFileBytes,
  };
  const cached = o.cache.enabled ? (call.cache?.tree ?? null) : null;
  if (cached === null) return scan(kit, rel, scanOptions);
  const changes = refreshTree(kit.root, cached, rel, recursive, scanOptions);
  const present = (k: string) => (k in changes ? changes[k] !== null : k in cached);
  // A folder the tree leaves out (an ignored one, asked for by name) is scanned on its own.
  if (!present(rel)) Object.assign(changes, scanTree(kit.root, rel, scanOptions) ?? {});
  if (Object.keys(changes).length === 0) return { tree: cached, writes: [], fromCache: true };
  const tree = { ...cached };
  for (const [k, v] of Object.entries(changes)) {
    if (v === null) delete tree[k];
    else tree[k] = v as DirNode;
  }
  return { tree, writes: [{ op: "treeSet", dirs: changes }], fromCache: false };
}

/** Why the folder `shown` (real path `path`) is not in the tree. */
function notListed(shown: string, path: string): string {
  const name = echo(shown);
  let stat: Stats;
  try {
    stat = lstatSync(path);
  } catch (error) {
    const problem = failed(error).problem;
    if (problem.kind === "denied")
      return `${name} cannot be reached: a folder on the way is not readable (permission denied).`;
    return problem.kind === "missing" || errorCode(error) === "ENOTDIR"
      ? `Folder not found: ${name}`
      : `${name} cannot be listed (${errorCode(error) ?? "error"}).`;
  }
  const kind = kindOf(stat);
  if (kind === "file") return `Not a folder: ${name} is a file (use read_file).`;
  if (kind !== "folder") return `Not a folder: ${name} is a ${kind}.`;
  try {
    readdirSync(path);
  } catch (error) {
    if (failed(error).problem.kind === "denied")
      return `${name} is a folder, but it is not readable (permission denied).`;
    return `${name} is a folder, but it cannot be read (${errorCode(error) ?? "error"}).`;
  }
  return `${name} could not be listed: it changed while it was being read (moved, or replaced by a symbolic link). List it again.`;
}

function listFilesAnswer(kit: FileToolKit, input: z.infer<typeof schema>, call: CallContext): Answer {
  const target = kit.sandbox.resolve(input.path ?? ".");
  if (!target.ok) return fail(target.message);
  const rel = target.relative === "." ? "" : target.relative;
  const recursive = input.recursive ?? false;
  const { tree, writes, fromCache } = currentTree(kit, call, rel, recursive);
  if (!(rel in tree)) return fail(notListed(input.path ?? ".", target.path));
  if (fromCache) writes.push({ op: "count", hits: 1 });
  return {
    content: renderListing(tree, rel, recursive, kit.options.limits.listLimit),
    ok: true,
    artifact: { path: target.relative, cached: fromCache },
    writes,
  };
}

/** The `list_files` tool of {@link createFileTools}. */
export function listFilesTool(kit: FileToolKit) {
  const description =
    "List the files and folders in a folder of the project (folders end with /). recursive lists everything below it.";
  // Its freshness check, for the guards: the listing as it would be now (the folders checked, nothing written).
  const answersNow: AnswersNow = (args, state) => {
    const parsed = schema.safeParse(args);
    if (!parsed.success) return undefined;
    const answer = listFilesAnswer(quiet(kit), parsed.data, checkContext(state));
    return [{ ok: answer.ok, text: answer.content }];
  };
  const fields = { name: "list_files", description, schema, metadata: cachedReaderMetadata(answersNow) } as const;
  return fileTool(kit, fields, (input, call) => listFilesAnswer(kit, input, call));
}
