/**
 * Unified diffs applied to bytes (one character per byte): what lies outside the hunks is kept byte for byte. Lines
 * match when their bytes are equal or read the same as UTF-8 (invalid bytes as U+FFFD, as the model saw them).
 */
import { applyPatch, parsePatch, type StructuredPatch } from "diff";

/** The result of applying a diff to a file's bytes. */
export type PatchResult =
  | { ok: true; bytes: Buffer }
  | {
      ok: false;
      /**
       * `no-hunks`: prose, an empty diff or headers only; `mismatch`: a hunk's context or removed lines are not in the
       * file; `unchanged`: it applies and changes nothing.
       */
      reason: "invalid" | "several-files" | "no-hunks" | "mismatch" | "unchanged";
      /** The parser's message, for `invalid`. */
      detail?: string;
    };

/** Text with one character per byte (Latin-1). */
const asText = (bytes: Buffer) => bytes.toString("latin1");
const NON_ASCII = /[\u0080-\u00ff]/;
const BOM = "\u00ef\u00bb\u00bf";

/** How a byte-per-character line reads as UTF-8 (invalid bytes as U+FFFD, as `read_file` shows them). */
const asUtf8 = (line: string) => Buffer.from(line, "latin1").toString("utf8");

function sameLine(line: string | undefined, patchLine: string): boolean {
  if (line === undefined) return false;
  if (line === patchLine) return true;
  if (!NON_ASCII.test(line) && !NON_ASCII.test(patchLine)) return false;
  return asUtf8(line) === asUtf8(patchLine);
}

function onePatch(diff: string): StructuredPatch | Extract<PatchResult, { ok: false }> {
  let patches: StructuredPatch[];
  try {
    patches = parsePatch(asText(Buffer.from(diff, "utf8")));
  } catch (error) {
    return { ok: false, reason: "invalid", detail: (error as Error).message };
  }
  const withHunks = patches.filter((p) => p.hunks.length > 0);
  if (withHunks.length === 0) return { ok: false, reason: "no-hunks" };
  if (patches.length > 1) return { ok: false, reason: "several-files" };
  return withHunks[0] as StructuredPatch;
}

/** Applies a one-file unified diff to a file's bytes; a diff without hunks, or changing nothing, is not a success. */
export function applyDiffToBytes(source: Buffer, diff: string): PatchResult {
  const patch = onePatch(diff);
  if ("reason" in patch) return patch;
  // A UTF-8 byte order mark is not part of line 1 as read_file shows it: kept aside, and kept.
  const bom = source[0] === 0xef && source[1] === 0xbb && source[2] === 0xbf ? BOM : "";
  const text = asText(source).slice(bom.length);
  let patched: string | false;
  try {
    patched = applyPatch(text, patch, { compareLine: (_n, line, _op, content) => sameLine(line, content) });
  } catch (error) {
    return { ok: false, reason: "invalid", detail: (error as Error).message };
  }
  if (patched === false) return { ok: false, reason: "mismatch" };
  if (patched === text) return { ok: false, reason: "unchanged" };
  return { ok: true, bytes: Buffer.from(bom + patched, "latin1") };
}
