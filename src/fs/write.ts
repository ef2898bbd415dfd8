/** `write_to_file` and `apply_source_code_diff`: write a file inside the sandbox and cache what was written. */
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { applyPatch } from "diff";
import { z } from "zod";
import type { FileCacheWrite } from "./cache.js";
import { type Answer, type FileToolKit, fail, fileTool, type Target } from "./kit.js";
import { splitLines } from "./read.js";
import { errorCode } from "./sandbox.js";

const writeSchema = z.object({ path: z.string(), content: z.string() });
const diffSchema = z.object({ path: z.string(), diff: z.string().describe("A unified diff against the current file") });

/**
 * Writes `content` to the target (creating its folders) and answers `summary`. With the cache on, the written
 * content is cached, and a created file is added to the directory tree.
 */
async function save(
  kit: FileToolKit,
  target: Target,
  content: string,
  created: boolean,
  summary: string,
): Promise<Answer> {
  await mkdir(dirname(target.path), { recursive: true });
  await writeFile(target.path, content, "utf8");
  const writes: FileCacheWrite[] = [];
  if (kit.options.cache) {
    const file = kit.cacheEntry(content, await stat(target.path));
    writes.push({ op: "put", path: target.path, file, budget: kit.options.cacheBudgetChars });
    if (created) {
      writes.push({ op: "treeAdd", rel: target.relative });
      kit.log(`[DIR_CACHE] Updated directory cache for created file: ${target.relative}`);
    }
  }
  return { content: summary, ok: true, artifact: { path: target.relative, cached: false }, writes };
}

async function writeToFileAnswer(kit: FileToolKit, input: z.infer<typeof writeSchema>): Promise<Answer> {
  const target = kit.sandbox.resolve(input.path, { write: true });
  if (!target.ok) return fail(target.message);
  let existed = true;
  try {
    if ((await stat(target.path)).isDirectory()) return fail(`${input.path} is a folder, not a file.`);
  } catch {
    existed = false;
  }
  const lines = splitLines(input.content).length;
  const summary = `Wrote ${lines} lines (${input.content.length} characters) to ${target.relative}.`;
  return save(kit, target, input.content, !existed, summary);
}

async function applyDiffAnswer(kit: FileToolKit, input: z.infer<typeof diffSchema>): Promise<Answer> {
  const target = kit.sandbox.resolve(input.path, { write: true });
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
  const summary = `Applied the diff to ${target.relative} (now ${splitLines(patched).length} lines).`;
  return save(kit, target, patched, false, summary);
}

/**
 * The `write_to_file` tool of {@link createFileTools}.
 *
 * @example
 * ```ts
 * await writeToFileTool(createToolKit({ root: "/repo" })).invoke({ path: "notes.md", content: "# Notes\n" });
 * ```
 */
export function writeToFileTool(kit: FileToolKit) {
  const description = "Create a file, or replace its whole content.";
  return fileTool(kit, { name: "write_to_file", description, schema: writeSchema }, (input) =>
    writeToFileAnswer(kit, input),
  );
}

/**
 * The `apply_source_code_diff` tool of {@link createFileTools}.
 *
 * @example
 * ```ts
 * const diff = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n";
 * await applyDiffTool(createToolKit({ root: "/repo" })).invoke({ path: "a.py", diff });
 * ```
 */
export function applyDiffTool(kit: FileToolKit) {
  const description = "Apply a unified diff (--- a/file, +++ b/file, @@ hunks) to one file of the project.";
  return fileTool(kit, { name: "apply_source_code_diff", description, schema: diffSchema }, (input) =>
    applyDiffAnswer(kit, input),
  );
}
