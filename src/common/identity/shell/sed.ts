// `sed` scripts (one word of the command line, or several joined by newlines), read with GNU sed's grammar.

/** sed commands without an argument. */
const SED_PLAIN = new Set(["{", "=", "d", "D", "g", "G", "h", "H", "n", "N", "p", "P", "x", "z", "F"]);

/**
 * The files a `sed` script writes (`w FILE`, `s/a/b/w FILE`) and reads (`r FILE`), read with GNU sed's grammar;
 * `undefined` when it may change anything (`e`, `s///e`) or is not understood.
 */
export function sedScript(script: string): SedFiles | undefined {
  const files: SedFiles = { writes: [], reads: [] };
  const reader = new SedReader(script);
  const s = script;
  while (reader.i < s.length) {
    const c = s[reader.i] as string;
    if (c === ";" || c === "\n" || c === " " || c === "\t" || c === "}") {
      reader.i += 1;
      continue;
    }
    if (c === "#") {
      reader.toEndOfLine();
      continue;
    }
    if (!reader.addresses()) return undefined;
    const command = s[reader.i];
    reader.i += 1;
    if (command === undefined) return undefined;
    if (SED_PLAIN.has(command)) continue;
    if (!reader.commandArguments(command, files)) return undefined;
  }
  return files;
}

interface SedFiles {
  writes: string[];
  reads: string[];
}

/** A `sed` script read from its start: `i` is where the reading is. */
class SedReader {
  i = 0;

  constructor(private readonly s: string) {}

  /** Reads to the end of the line (not past its newline); returns what it read. */
  toEndOfLine(): string {
    const { s } = this;
    const nl = s.indexOf("\n", this.i);
    const end = nl < 0 ? s.length : nl;
    const text = s.slice(this.i, end);
    this.i = end;
    return text;
  }

  private skipSpace(): void {
    const { s } = this;
    while (this.i < s.length && (s[this.i] === " " || s[this.i] === "\t")) this.i += 1;
  }

  /** Skips a delimited part (`/re/`, a replacement) from just after its opening delimiter. */
  private delimited(delim: string): boolean {
    const { s } = this;
    while (this.i < s.length && s[this.i] !== delim) {
      if (s[this.i] === "\\") this.i += 1;
      this.i += 1;
    }
    if (this.i >= s.length) return false;
    this.i += 1;
    return true;
  }

  /** Skips one address (a line number, `$`, a regular expression, `+N`, `~N`); `false` when not understood. */
  private address(): boolean {
    const { s } = this;
    const c = s[this.i];
    if (c === undefined) return true;
    if (/[0-9]/.test(c)) {
      while (/[0-9~]/.test(s[this.i] ?? "")) this.i += 1;
    } else if (c === "$") this.i += 1;
    else if (c === "/" || c === "\\") {
      const delim = c === "/" ? "/" : s[this.i + 1];
      if (delim === undefined || delim === "\n" || delim === "\\") return false;
      this.i += c === "/" ? 1 : 2;
      if (!this.delimited(delim)) return false;
      while (s[this.i] === "I" || s[this.i] === "M") this.i += 1;
    } else if ((c === "+" || c === "~") && /[0-9]/.test(s[this.i + 1] ?? "")) {
      this.i += 1;
      while (/[0-9]/.test(s[this.i] ?? "")) this.i += 1;
    }
    return true;
  }

  /** Skips a command's addresses (one, or a range `a,b`) and its `!`s; `false` when not understood. */
  addresses(): boolean {
    const { s } = this;
    if (!this.address()) return false;
    this.skipSpace();
    if (s[this.i] === ",") {
      this.i += 1;
      this.skipSpace();
      if (!this.address()) return false;
      this.skipSpace();
    }
    while (s[this.i] === "!" || s[this.i] === " " || s[this.i] === "\t") this.i += 1;
    return true;
  }

  private fileArgument(): string {
    this.skipSpace();
    return this.toEndOfLine();
  }

  /** Reads `command`'s arguments, adding the files it writes or reads; `false` when it may change anything. */
  commandArguments(command: string, files: SedFiles): boolean {
    const { s } = this;
    if ("lLqQ".includes(command)) {
      this.skipSpace();
      while (/[0-9]/.test(s[this.i] ?? "")) this.i += 1;
    } else if (":btTv".includes(command)) {
      while (this.i < s.length && s[this.i] !== "\n" && s[this.i] !== ";") this.i += 1; // a label
    } else if ("aic".includes(command)) {
      while (this.i < s.length && s[this.i] !== "\n") this.i += s[this.i] === "\\" ? 2 : 1; // text; a `\` at the end continues it
    } else if ("rR".includes(command)) {
      const file = this.fileArgument();
      if (file !== "") files.reads.push(file);
    } else if ("wW".includes(command)) {
      const file = this.fileArgument();
      if (file === "") return false;
      files.writes.push(file);
    } else if (command === "s" || command === "y") return this.substitution(command, files);
    else return false; // `e` runs a command; anything else is not understood
    return true;
  }

  /** Reads the arguments of `s` or `y` (the two delimited parts, then `s`'s flags); `false` as above. */
  private substitution(command: "s" | "y", files: SedFiles): boolean {
    const { s } = this;
    const delim = s[this.i];
    if (delim === undefined || delim === "\n" || delim === "\\") return false;
    this.i += 1;
    if (!this.delimited(delim) || !this.delimited(delim)) return false;
    while (command === "s" && this.i < s.length) {
      const flag = s[this.i] as string;
      if (flag === "e") return false; // runs the pattern space as a command
      if (flag === "w") {
        this.i += 1;
        const file = this.fileArgument();
        if (file === "") return false;
        files.writes.push(file);
      } else if (/[gpiImM0-9]/.test(flag)) this.i += 1;
      else break;
    }
    return true;
  }
}
