/**
 * `write_to_file` and `apply_source_code_diff`: checked against what the thread last saw (`edits.ts`), written
 * atomically (`atomic-write.ts`), the written content cached.
 */
import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { sep } from "node:path";
import { z } from "zod/v4";
import { writeFileAtomic } from "./atomic-write.js";
import type { FileCacheWrite } from "./cache.js";
import { echo } from "./echo.js";
import { type Baseline, checkBaseline, recordToolWrite, responseOf, serialized } from "./edits.js";
import { problemMessage } from "./io.js";
import { type Answer, type CallContext, type FileToolKit, fail, fileTool, type Target } from "./kit.js";
import { applyDiffToBytes, type PatchResult } from "./patch.js";
import { splitLines } from "./read.js";

const writeSchema = z.object({
  /** The file, relative to the project root (created with its folders when missing). */
  path: z.string(),
  content: z.string(),
});
const diffSchema = z.object({
  /** The file, relative to the project root. */
  path: z.string(),
  diff: z.string().describe("A unified diff against the current file"),
});

interface Edit {
  shown: string;
  target: Target;
  bytes: Buffer;
  seen: Extract<Baseline, { ok: true }>;
  summary: (created: boolean) => string;
}

/**
 * Writes the edit's bytes (see `writeFileAtomic`) and answers `summary(created)`. With the cache on, the written
 * content is cached, a created file added to the tree, and the write noted for the next edit of the same response.
 */
async function save(kit: FileToolKit, call: CallContext, edit: Edit): Promise<Answer> {
  const { shown, target, seen } = edit;
  const o = kit.options;
  // The replace needs only the folder to be writable: a file its user may not write (someone else's, or made
  // read-only) is refused as `echo >> file` would be, before any temp file.
  if (seen.current !== null && !(await writable(target.path))) {
    return fail(problemMessage(shown, { kind: "denied" }, "written"));
  }
  const writtenAt = kit.now(); // before the stat of what is written: the racy window is measured from it
  const written = await writeFileAtomic(target.path, edit.bytes, {
    root: kit.root,
    timeoutMs: o.limits.ioTimeoutMs,
    refuseHardLinks: o.refuseHardLinks,
    expected: seen.current?.stat,
    createFolders: true,
  });
  if (!written.ok) return fail(problemMessage(shown, written.problem, "written"));
  const writes: FileCacheWrite[] = [];
  if (o.cache.enabled) {
    const file = kit.cacheEntry(edit.bytes, written.stat, writtenAt);
    writes.push({ op: "put", path: target.path, file, budget: o.cache.budgetChars, maxFiles: o.cache.maxFiles });
    recordToolWrite(responseOf(call), { path: target.path, before: seen.hash, after: file.hash });
    if (written.created) {
      writes.push({ op: "treeAdd", rel: target.relative });
      kit.log(`[DIR_CACHE] Updated directory cache for created file: ${echo(target.relative)}`);
    }
  }
  const artifact = { path: target.relative, cached: false };
  return { content: edit.summary(written.created), ok: true, artifact, writes };
}

/** Whether the process may write the existing file at `path` (a missing file: yes). */
async function writable(path: string): Promise<boolean> {
  try {
    await access(path, constants.W_OK);
    return true;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return code !== "EACCES" && code !== "EPERM" && code !== "EROFS";
  }
}

/** `write` on the file `path` names, resolved for writing (a refused path answered), one write of a file at a time. */
async function writing(kit: FileToolKit, path: string, write: (target: Target) => Promise<Answer>): Promise<Answer> {
  const target = kit.sandbox.resolve(path, { write: true });
  if (!target.ok) return fail(target.message);
  // The root, or a path ending in "/" (which the path functions would take for the name before it), is a folder.
  if (target.relative === ".") return fail(problemMessage(path, { kind: "folder" }, "written"));
  if (path.endsWith("/") || path.endsWith(sep))
    return fail(`${echo(path)} names a folder (it ends in "/"), not a file. Nothing was written.`);
  return serialized(target.path, () => write(target));
}

function writeToFileAnswer(kit: FileToolKit, input: z.infer<typeof writeSchema>, call: CallContext): Promise<Answer> {
  const lines = splitLines(input.content).length;
  return writing(kit, input.path, async (target) => {
    const summary = () => `Wrote ${lines} lines (${input.content.length} characters) to ${echo(target.relative)}.`;
    const seen = await checkBaseline(kit, call, target, undefined);
    if (!seen.ok) return seen.answer;
    const bytes = Buffer.from(input.content, "utf8");
    return save(kit, call, { shown: input.path, target, bytes, seen, summary });
  });
}

function patchFailure(relative: string, failure: Extract<PatchResult, { ok: false }>): string {
  const name = echo(relative);
  switch (failure.reason) {
    case "invalid":
      return `The diff is not a valid unified diff: ${echo(failure.detail ?? "")}. Nothing was changed.`;
    case "several-files":
      return `The diff changes more than one file: apply_source_code_diff takes the diff of ${name} alone. Nothing was changed.`;
    case "no-hunks":
      return `The diff has no hunks (no @@ lines), so there is nothing to apply to ${name}. Nothing was changed; send a unified diff: --- a/file, +++ b/file, then @@ -start,count +start,count @@ and the lines.`;
    case "mismatch":
      return `The diff does not apply to ${name}: the context of a hunk does not match the file. Nothing was changed; read the file again and make the diff against its current content.`;
    case "unchanged":
      return `The diff changes nothing in ${name}: its hunks leave the file as it is. Nothing was written.`;
  }
}

function applyDiffAnswer(kit: FileToolKit, input: z.infer<typeof diffSchema>, call: CallContext): Promise<Answer> {
  return writing(kit, input.path, async (target) => {
    const readAt = kit.now();
    const read = await kit.read(target.path);
    if (!read.ok && read.problem.kind !== "missing") return fail(problemMessage(input.path, read.problem, "changed"));
    const seen = await checkBaseline(kit, call, target, read.ok ? read : null, readAt); // read, then removed: said so
    if (!seen.ok) return seen.answer;
    if (!read.ok) {
      return fail(`${problemMessage(input.path, read.problem, "changed")} (use write_to_file to create it).`);
    }
    const patched = applyDiffToBytes(read.bytes, input.diff);
    if (!patched.ok) return fail(patchFailure(target.relative, patched));
    const lines = splitLines(patched.bytes.toString("latin1")).length;
    const summary = () => `Applied the diff to ${echo(target.relative)} (now ${lines} lines).`;
    return save(kit, call, { shown: input.path, target, bytes: patched.bytes, seen, summary });
  });
}

/** The `write_to_file` tool of {@link createFileTools}. */
export function writeToFileTool(kit: FileToolKit) {
  const description = "Create a file, or replace its whole content.";
  return fileTool(kit, { name: "write_to_file", description, schema: writeSchema }, (input, call) =>
    writeToFileAnswer(kit, input, call),
  );
}

/** The `apply_source_code_diff` tool of {@link createFileTools}. */
export function applyDiffTool(kit: FileToolKit) {
  const description = "Apply a unified diff (--- a/file, +++ b/file, @@ hunks) to one file of the project.";
  return fileTool(kit, { name: "apply_source_code_diff", description, schema: diffSchema }, (input, call) =>
    applyDiffAnswer(kit, input, call),
  );
}
