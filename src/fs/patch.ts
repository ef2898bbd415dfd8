/**
 * Unified diffs applied to bytes (the `diff` package, on text where each byte is one character): what lies outside
 * the hunks — Latin-1 text, invalid UTF-8, a binary tail, CRLF line ends — is copied byte for byte, and the lines a
 * hunk adds are written as UTF-8. A line of the file matches a line of the diff when their bytes are equal, or when
 * both read the same as UTF-8 (so a line holding invalid bytes, shown by `read_file` with U+FFFD, still matches as
 * the model copied it; the file's own bytes are kept for context lines).
 */
import { applyPatch, parsePatch, type StructuredPatch } from "diff";

/**
 * The result of applying a diff to a file's bytes.
 *
 * @example
 * ```ts
 * const r: PatchResult = applyDiffToBytes(Buffer.from("x = 1\n"), diff);
 * if (r.ok) writeFileSync("a.py", r.bytes);
 * ```
 */
export type PatchResult =
  | { ok: true; bytes: Buffer }
  | {
      ok: false;
      /**
       * `invalid`: not a unified diff; `several-files`: it patches more than one file; `no-hunks`: no `@@` hunk
       * (prose, an empty diff, headers only); `mismatch`: a hunk's context or removed lines are not in the file;
       * `unchanged`: it applies, and leaves the file as it was.
       */
      reason: "invalid" | "several-files" | "no-hunks" | "mismatch" | "unchanged";
      /** The parser's message, for `invalid`. */
      detail?: string;
    };

/** Text with one character per byte (Latin-1), and back. */
const asText = (bytes: Buffer) => bytes.toString("latin1");
const NON_ASCII = /[\u0080-\u00ff]/;
/** The UTF-8 byte order mark, one character per byte. */
const BOM = "\u00ef\u00bb\u00bf";

/** How a byte-per-character line reads as UTF-8 (invalid bytes as U+FFFD, as `read_file` shows them). */
const asUtf8 = (line: string) => Buffer.from(line, "latin1").toString("utf8");

/** Whether a line of the file matches a line of the diff (both one character per byte). */
function sameLine(line: string | undefined, patchLine: string): boolean {
  if (line === undefined) return false;
  if (line === patchLine) return true;
  if (!NON_ASCII.test(line) && !NON_ASCII.test(patchLine)) return false;
  return asUtf8(line) === asUtf8(patchLine);
}

/** The one file patch of a diff, or why there is none to apply. */
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

/**
 * Applies a unified diff (one file) to a file's bytes: every byte outside the hunks is kept; see the module's
 * comment. A diff without hunks, or one that changes nothing, is not a success.
 *
 * @example
 * ```ts
 * const before = Buffer.from("caf\xe9\nx = 1\n", "latin1");
 * const r = applyDiffToBytes(before, "--- a/f\n+++ b/f\n@@ -2 +2 @@\n-x = 1\n+x = 2\n");
 * // r.ok && r.bytes.equals(Buffer.from("caf\xe9\nx = 2\n", "latin1"))
 * ```
 */
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
