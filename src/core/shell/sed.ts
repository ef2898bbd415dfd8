/**
 * `sed` scripts: the files a script writes and reads ({@link sedScript}), read with GNU sed's grammar. No shell
 * here: the script is one word of the command line, or several joined by newlines.
 */

/** sed commands without an argument. */
const SED_PLAIN = new Set(["{", "=", "d", "D", "g", "G", "h", "H", "n", "N", "p", "P", "x", "z", "F"]);

/**
 * The files a `sed` script writes (`w FILE`, `W FILE`, `s/a/b/w FILE`) and reads (`r FILE`, `R FILE`), or
 * `undefined` when it may change anything (`e`, `s///e`) or is not understood. GNU sed's grammar: addresses, `!`, a
 * command, its arguments.
 */
export function sedScript(script: string): { writes: string[]; reads: string[] } | undefined {
  const writes: string[] = [];
  const reads: string[] = [];
  let i = 0;
  const s = script;
  const toEndOfLine = (): string => {
    const nl = s.indexOf("\n", i);
    const end = nl < 0 ? s.length : nl;
    const text = s.slice(i, end);
    i = end;
    return text;
  };
  const skipSpace = () => {
    while (i < s.length && (s[i] === " " || s[i] === "\t")) i += 1;
  };
  /** Skips a delimited part (`/re/`, a replacement) from just after its opening delimiter. */
  const delimited = (delim: string): boolean => {
    while (i < s.length && s[i] !== delim) {
      if (s[i] === "\\") i += 1;
      i += 1;
    }
    if (i >= s.length) return false;
    i += 1;
    return true;
  };
  const address = (): boolean => {
    const c = s[i];
    if (c === undefined) return true;
    if (/[0-9]/.test(c)) {
      while (/[0-9~]/.test(s[i] ?? "")) i += 1;
    } else if (c === "$") i += 1;
    else if (c === "/" || c === "\\") {
      const delim = c === "/" ? "/" : s[i + 1];
      if (delim === undefined || delim === "\n" || delim === "\\") return false;
      i += c === "/" ? 1 : 2;
      if (!delimited(delim)) return false;
      while (s[i] === "I" || s[i] === "M") i += 1;
    } else if ((c === "+" || c === "~") && /[0-9]/.test(s[i + 1] ?? "")) {
      i += 1;
      while (/[0-9]/.test(s[i] ?? "")) i += 1;
    }
    return true;
  };
  const fileArgument = (): string => {
    skipSpace();
    return toEndOfLine();
  };
  while (i < s.length) {
    const c = s[i] as string;
    if (c === ";" || c === "\n" || c === " " || c === "\t" || c === "}") {
      i += 1;
      continue;
    }
    if (c === "#") {
      toEndOfLine();
      continue;
    }
    if (!address()) return undefined;
    skipSpace();
    if (s[i] === ",") {
      i += 1;
      skipSpace();
      if (!address()) return undefined;
      skipSpace();
    }
    while (s[i] === "!" || s[i] === " " || s[i] === "\t") i += 1;
    const command = s[i];
    i += 1;
    if (command === undefined) return undefined;
    if (SED_PLAIN.has(command)) continue;
    if ("lLqQ".includes(command)) {
      skipSpace();
      while (/[0-9]/.test(s[i] ?? "")) i += 1;
    } else if (":btTv".includes(command)) {
      while (i < s.length && s[i] !== "\n" && s[i] !== ";") i += 1; // a label
    } else if ("aic".includes(command)) {
      while (i < s.length && s[i] !== "\n") i += s[i] === "\\" ? 2 : 1; // text; a `\` at the end continues it
    } else if ("rR".includes(command)) {
      const file = fileArgument();
      if (file !== "") reads.push(file);
    } else if ("wW".includes(command)) {
      const file = fileArgument();
      if (file === "") return undefined;
      writes.push(file);
    } else if (command === "s" || command === "y") {
      const delim = s[i];
      if (delim === undefined || delim === "\n" || delim === "\\") return undefined;
      i += 1;
      if (!delimited(delim) || !delimited(delim)) return undefined;
      while (command === "s" && i < s.length) {
        const flag = s[i] as string;
        if (flag === "e") return undefined; // runs the pattern space as a command
        if (flag === "w") {
          i += 1;
          const file = fileArgument();
          if (file === "") return undefined;
          writes.push(file);
        } else if (/[gpiImM0-9]/.test(flag)) i += 1;
        else break;
      }
    } else return undefined; // `e` runs a command; anything else is not understood
  }
  return { writes, reads };
}
