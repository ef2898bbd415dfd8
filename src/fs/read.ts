/** How `read_file` shows a file: line numbers, ranges, long lines cut, continuation hints. Pure functions. */
import { cutEnd } from "../common/texts/format.js";

/** Limits of one read (see the `limits` options). */
interface ReadLimits {
  defaultLineLimit: number;
  maxLineChars: number;
  maxReadChars?: number;
}

/** The default limits. */
export const DEFAULT_READ_LIMITS: Readonly<Required<ReadLimits>> = {
  defaultLineLimit: 2000,
  maxLineChars: 2000,
  maxReadChars: 100_000,
};

/** Whether bytes look binary (a NUL byte in the first 8 KB, as git decides). */
export function looksBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, 8192);
  for (let i = 0; i < end; i += 1) if (bytes[i] === 0) return true;
  return false;
}

/** The lines of a text: `\n`, `\r\n` and a final newline handled as editors do (no phantom last line). */
export function splitLines(content: string): string[] {
  if (content === "") return [];
  const lines = content.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** A numbered view of part of a file, and what the model needs to read on. */
export interface LineView {
  text: string;
  /** 1-based first and last line shown (`to` is from - 1 when nothing is shown). */
  from: number;
  to: number;
  totalLines: number;
  whole: boolean;
}

function numbered(n: number, line: string, maxChars: number): string {
  const end = cutEnd(line, maxChars);
  const cut = end < line.length ? `${line.slice(0, end)}… [line cut: ${line.length - end} more characters]` : line;
  return `${String(n).padStart(6)}\t${cut}`;
}

/**
 * Lines `offset` (1-based, default 1) to `offset + limit - 1` of `content`, numbered like `cat -n`, long lines cut,
 * at most `maxReadChars` characters in all (at least one line, cut to fit), with a "continue with offset N" hint.
 */
export function viewLines(
  content: string,
  range: { offset?: number | undefined; limit?: number | undefined } = {},
  limits: ReadLimits = DEFAULT_READ_LIMITS,
): LineView {
  const lines = splitLines(content);
  const total = lines.length;
  const from = Math.max(1, Math.floor(range.offset ?? 1));
  const limit = Math.max(1, Math.floor(range.limit ?? limits.defaultLineLimit));
  const cap = limits.maxReadChars ?? DEFAULT_READ_LIMITS.maxReadChars;
  const last = Math.min(total, from + limit - 1);
  const shown: string[] = [];
  let chars = 0;
  let to = from - 1;
  for (let n = from; n <= last; n += 1) {
    const line = lines[n - 1] as string;
    const separator = shown.length > 0 ? 1 : 0;
    let text = numbered(n, line, limits.maxLineChars);
    if (chars + separator + text.length > cap) {
      if (shown.length > 0) break; // the rest is left for the next read
      text = numbered(n, line, Math.max(1, cap - String(n).padStart(6).length - 1)); // one line, cut to fit
    }
    shown.push(text);
    chars += separator + text.length;
    to = n;
  }
  let text = shown.join("\n");
  if (total === 0) text = "(empty file)";
  else if (from > total) text = `(The file has ${total} lines; offset ${from} is past its end.)`;
  else if (to < last) {
    text += `\n\n(Showing lines ${from}-${to} of ${total}: the output is capped at ${cap} characters. Continue with offset ${to + 1}.)`;
  } else if (to < total) text += `\n\n(Showing lines ${from}-${to} of ${total}. Continue with offset ${to + 1}.)`;
  else if (from > 1) text += `\n\n(Showing lines ${from}-${to} of ${total}.)`;
  return { text, from, to: Math.max(from - 1, to), totalLines: total, whole: from === 1 && to >= total };
}
