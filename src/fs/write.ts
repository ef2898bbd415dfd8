/** `write_to_file` and `apply_source_code_diff`: write a file inside the sandbox and cache what was written. */
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { applyPatch } from "diff";
import { z } from "zod";
import type { FileCacheWrite } from "./cache.js";
import { echo } from "./echo.js";
import { errorSummary, problemMessage, readRegularFile, writeRegularFile } from "./io.js";
import { type Answer, type FileToolKit, fail, fileTool, type Target } from "./kit.js";
import { splitLines } from "./read.js";
import { realPathInside } from "./sandbox.js";

const writeSchema = z.object({
  /** The file, relative to the project root (created with its folders when missing). */
  path: z.string(),
  /** The file's whole new content. */
  content: z.string(),
});
const diffSchema = z.object({
  /** The file, relative to the project root. */
  path: z.string(),
  /** A unified diff against the current file (`--- a/file`, `+++ b/file`, `@@` hunks). */
  diff: z.string().describe("A unified diff against the current file"),
});

/**
 * Writes `content` to the target (creating its folders) and answers `summary(created)`. Only a regular file is
 * written (see `writeRegularFile`: never a FIFO or a device, never through a symlink, with `refuseHardLinks` never
 * a file with other hard links). With the cache on, the written content is cached with the stat of what was
 * written, and a created file is added to the directory tree.
 */
async function save(
  kit: FileToolKit,
  shown: string,
  target: Target,
  content: string,
  summary: (created: boolean) => string,
): Promise<Answer> {
  const o = kit.options;
  const folder = dirname(target.path);
  try {
    await mkdir(folder, { recursive: true });
  } catch (e) {
    return fail(`Cannot create the folder of ${echo(shown)} (${errorSummary(e)}). Nothing was changed.`);
  }
  // The folders just made must still be inside the root (none swapped for a symlink meanwhile).
  if (realPathInside(kit.root, folder) !== folder) return fail(problemMessage(shown, { kind: "outside" }, "written"));
  const writtenAt = kit.now(); // before the stat of what is written: the racy window is measured from it
  const written = await writeRegularFile(target.path, content, {
    root: kit.root,
    timeoutMs: o.limits.ioTimeoutMs,
    refuseHardLinks: o.refuseHardLinks,
  });
  if (!written.ok) return fail(problemMessage(shown, written.problem, "written"));
  const writes: FileCacheWrite[] = [];
  if (o.cache.enabled) {
    const file = kit.cacheEntry(content, written.stat, writtenAt);
    writes.push({ op: "put", path: target.path, file, budget: o.cache.budgetChars, maxFiles: o.cache.maxFiles });
    if (written.created) {
      writes.push({ op: "treeAdd", rel: target.relative });
      kit.log(`[DIR_CACHE] Updated directory cache for created file: ${echo(target.relative)}`);
    }
  }
  return { content: summary(written.created), ok: true, artifact: { path: target.relative, cached: false }, writes };
}

async function writeToFileAnswer(kit: FileToolKit, input: z.infer<typeof writeSchema>): Promise<Answer> {
  const target = kit.sandbox.resolve(input.path, { write: true });
  if (!target.ok) return fail(target.message);
  const lines = splitLines(input.content).length;
  const summary = () => `Wrote ${lines} lines (${input.content.length} characters) to ${echo(target.relative)}.`;
  return save(kit, input.path, target, input.content, summary);
}

async function applyDiffAnswer(kit: FileToolKit, input: z.infer<typeof diffSchema>): Promise<Answer> {
  const target = kit.sandbox.resolve(input.path, { write: true });
  if (!target.ok) return fail(target.message);
  const o = kit.options;
  const read = await readRegularFile(target.path, {
    root: kit.root,
    maxBytes: o.limits.maxFileBytes,
    timeoutMs: o.limits.ioTimeoutMs,
  });
  if (!read.ok) {
    const message = problemMessage(input.path, read.problem, "changed");
    return fail(read.problem.kind === "missing" ? `${message} (use write_to_file to create it).` : message);
  }
  const source = read.bytes.toString("utf8");
  let patched: string | false;
  try {
    patched = applyPatch(source, input.diff);
  } catch (e) {
    return fail(`The diff is not a valid unified diff: ${echo((e as Error).message)}. Nothing was changed.`);
  }
  if (patched === false) {
    return fail(
      `The diff does not apply to ${echo(target.relative)}: the context of a hunk does not match the file. Nothing was changed; read the file again and make the diff against its current content.`,
    );
  }
  const after = patched;
  const summary = () => `Applied the diff to ${echo(target.relative)} (now ${splitLines(after).length} lines).`;
  return save(kit, input.path, target, patched, summary);
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
