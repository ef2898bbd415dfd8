// Spacing that changes nothing a line runs, taken out so that `ls -la src` and `ls  -la src ` are one call.

/** The index after the closing `quote` of a part that starts at `from` (after the opening one), or -1 when unclosed. */
function closing(s: string, from: number, quote: string, escapes: boolean): number {
  for (let j = from; j < s.length; j += 1) {
    const c = s[j];
    if (escapes && c === "\\") j += 1;
    else if (c === quote) return j + 1;
  }
  return -1;
}

/** The index after a double-quoted part; -1 when unclosed or holding a substitution (whose own quotes nest). */
function afterDoubleQuoted(s: string, from: number): number {
  for (let j = from; j < s.length; j += 1) {
    const c = s[j];
    if (c === "\\") j += 1;
    else if (c === '"') return j + 1;
    else if (c === "`" || (c === "$" && (s[j + 1] === "(" || s[j + 1] === "{"))) return -1;
  }
  return -1;
}

/** The index after a plain `${NAME…}` starting at `from` (at the `$`); -1 when it holds quotes or nested parts. */
function afterBraces(s: string, from: number): number {
  const end = s.indexOf("}", from + 2);
  if (end < 0 || /['"`$\\{]/.test(s.slice(from + 2, end))) return -1;
  return end + 1;
}

/** Characters after which a `#` starts a comment (with a blank, or at a line's start). */
const COMMENT_AFTER = new Set([";", "&", "|", "(", ")"]);

/**
 * The command line with runs of blanks outside quotes squeezed to one space, and blanks at line ends and empty lines
 * dropped; quotes, escapes, substitutions, comments and all from a heredoc's body on are kept as written.
 */
export function squeezeCommand(command: string): string {
  let out = "";
  let blank = false; // blanks seen since the last character kept
  let lineStart = true; // nothing kept on this line yet
  let newline = false; // a line ended: a newline goes before the next part kept
  let heredoc = false; // a `<<` on this line: its body starts at the next newline
  let i = 0;
  while (i < command.length) {
    const c = command[i] as string;
    if (c === " " || c === "\t") {
      blank = true;
      i += 1;
      continue;
    }
    if (c === "\n") {
      if (heredoc) return out + command.slice(i);
      if (!lineStart) newline = true;
      blank = false;
      lineStart = true;
      i += 1;
      continue;
    }
    const start = i;
    let end: number;
    if (c === "\\") end = i + 2;
    else if (c === "'") end = closing(command, i + 1, "'", false);
    else if (c === "`") end = closing(command, i + 1, "`", true);
    else if (c === '"') end = afterDoubleQuoted(command, i + 1);
    else if (c === "$" && command[i + 1] === "'") end = closing(command, i + 2, "'", true);
    else if (c === "$" && command[i + 1] === "{") end = afterBraces(command, i);
    else if (c === "#" && (blank || lineStart || COMMENT_AFTER.has(out[out.length - 1] as string))) {
      // A comment, to the end of its line, kept as written (without the blanks that end it).
      const nl = command.indexOf("\n", i);
      end = nl < 0 ? command.length : nl;
      while (end > i + 1 && (command[end - 1] === " " || command[end - 1] === "\t")) end -= 1;
    } else if (command.startsWith("<<<", i)) end = i + 3;
    else if (command.startsWith("<<", i)) {
      heredoc = true;
      end = i + 2;
    } else end = i + 1;
    // Not followed for sure (unclosed, a nested substitution): the rest as written.
    const rest = end < 0;
    const part = command.slice(start, rest ? command.length : Math.min(end, command.length));
    if (newline) out += "\n";
    else if (blank && !lineStart) out += " ";
    out += part;
    newline = false;
    if (rest) return out;
    blank = false;
    lineStart = false;
    i = Math.min(end, command.length);
  }
  return out;
}
