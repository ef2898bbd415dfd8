// What one simple command of a read-only line reads: its arguments read with its row of SHELL_READS (getopt's rules).
import { isAbsolute, posix, resolve } from "node:path";
import type { Word } from "./lexer.js";
import { cdTarget, programName, type SimpleCommand } from "./parse.js";
import { sedScript } from "./sed.js";
import { type CommandRow, type ReadForm, type ReadOption, ROWS, SHELL_READS, words } from "./tables.js";

const READS = new Map(Object.entries(SHELL_READS));

/** Devices: reading one reads no file a write could change. */
const READ_DEVICE = /^\/dev\/(null|zero|u?random|full|stdin|stdout|stderr|tty|fd\/\d+)$/;

/** Option readings that take a value (the next word when none is attached). */
const TAKES_VALUE = new Set<ReadOption>(["value", "file", "pattern", "patternFile", "directories"]);

/** How an abbreviated long option that may stand for several is read: the widest reading first. */
const READ_PRIORITY = words(
  "unknown file patternFile pattern noPattern recursive directories optional value",
) as ReadOption[];

/**
 * Whether a glob's path part may stand for `..`: a leading dot is matched only by `.` (or, to be safe, `[...]`) and
 * the rest must match `.` (`.*`, `.?`); or a brace expansion with an alternative that may start with a dot.
 */
function mayClimb(part: string): boolean {
  if (part.includes("{")) return /(^|[{,])[.[]/.test(part);
  const first = /^(\.|\[[^\]]*\])/.exec(part)?.[0];
  if (first === undefined || first === part) return false;
  const rest = part.slice(first.length).replaceAll("*", "");
  return rest === "" || rest === "." || rest === "?" || /^\[[^\]]*\]$/.test(rest);
}

/** A glob's folder: that of its text before the first pattern (`src/a*.py`: `src`), one up per later `..`-like part. */
function globFolder(text: string, prefix: string): string {
  const slash = prefix.lastIndexOf("/");
  const folder = slash < 0 ? "." : slash === 0 ? "/" : prefix.slice(0, slash);
  const ups = text
    .slice(slash + 1)
    .split("/")
    .filter(mayClimb).length;
  return posix.join(folder, ...Array<string>(ups).fill(".."));
}

/** The path a word names, as written (a glob: its folder); `null` for none (`""`); `undefined` when unknown. */
function readPath(w: Word | undefined): string | null | undefined {
  if (w === undefined) return null;
  if (w.exact) return w.text === "" ? null : w.text;
  return w.glob === undefined ? undefined : globFolder(w.text, w.glob);
}

/** The part of `w` from `start` on (an option's attached value). */
function wordFrom(w: Word, start: number): Word {
  const glob = w.glob !== undefined && w.glob.length >= start ? w.glob.slice(start) : undefined;
  return { text: w.text.slice(start), exact: w.exact, many: w.many, optionLike: false, glob };
}

/** What a reader's arguments name (getopt's rules): paths as written, pattern words; `undefined` when not known. */
function argReads(
  row: CommandRow,
  form: ReadForm,
  args: readonly Word[],
  fed: boolean,
): { paths: string[]; patterns: Word[] } | undefined {
  if (form.operands === "none") return { paths: [], patterns: [] };
  const reading = new ArgReading(row, form);
  for (let i = 0; i < args.length; i += 1) {
    const next = (): Word | undefined => {
      i += 1;
      return args[i];
    };
    if (!reading.word(args[i] as Word, next)) return undefined;
  }
  return reading.result(args, fed);
}

/** The reading of one read-only command's arguments ({@link argReads}), word by word. */
class ArgReading {
  readonly paths: string[] = [];
  readonly patterns: Word[] = [];
  private readonly operands: Word[] = [];
  /** How each option is read: the row's value options and writing options' values, then the form's options. */
  private readonly options: Map<string, ReadOption>;
  private patternGiven = false;
  private recursive = false;
  /** Options have ended (`--`, or the first operand of a command whose options come first). */
  private ended = false;

  constructor(
    private readonly row: CommandRow,
    private readonly form: ReadForm,
  ) {
    const options = new Map<string, ReadOption>((row.valueOptions ?? []).map((o) => [o, "value"]));
    for (const f of row.writes ?? []) if ("option" in f && f.writes === "value") options.set(f.option, "value");
    for (const [o, kind] of Object.entries(form.options ?? {})) options.set(o, kind);
    this.options = options;
  }

  /** How the long option `name` is read: exactly, or as the widest of the options it abbreviates. */
  private longKind(name: string): ReadOption | undefined {
    const exact = this.options.get(name);
    if (exact !== undefined) return exact;
    const found = new Set(
      [...this.options].filter(([o]) => o.startsWith("--") && o.startsWith(name)).map(([, k]) => k),
    );
    return READ_PRIORITY.find((k) => found.has(k)); // getopt_long takes abbreviations
  }

  /** Reads an option used with its value; `false` when what it reads is not known. */
  private take(kind: ReadOption, v: Word | undefined): boolean {
    if (kind === "unknown") return false;
    if (kind === "recursive") this.recursive = true;
    if (kind === "noPattern" || kind === "pattern" || kind === "patternFile") this.patternGiven = true;
    if (v === undefined) return true; // no value: an error
    if (kind === "pattern") this.patterns.push(v);
    if (kind === "directories" && !(v.exact && ["read", "skip"].includes(v.text))) this.recursive = true;
    if (kind !== "file" && kind !== "patternFile") return true;
    const p = readPath(v);
    if (p !== null && p !== undefined) this.paths.push(p);
    return p !== undefined;
  }

  /** Reads a word (and with `next` an option's value after it); `false` when what it reads is not known. */
  word(w: Word, next: () => Word | undefined): boolean {
    const t = w.text;
    const known = w.exact ? t : (w.glob ?? ""); // the text before the first pattern
    if (this.ended || t === "-" || !known.startsWith("-")) {
      this.operands.push(w); // a glob that may become options too: see result
      if (this.row.optionsFirst) this.ended = true;
      return true;
    }
    if (t === "--") {
      this.ended = true;
      return true;
    }
    if (t.startsWith("--")) return this.longOption(w, known, next);
    if (this.row.singleDash) return this.singleDashOption(w, next);
    return this.bundle(w, known, next);
  }

  /** A long option: `--lines 5`, `--lines=5`, `--li=5`. */
  private longOption(w: Word, known: string, next: () => Word | undefined): boolean {
    const t = w.text;
    const eq = t.indexOf("=");
    if (!w.exact && (eq < 0 || eq >= known.length)) return false; // an option only known when the shell runs
    const kind = this.longKind(eq < 0 ? t : t.slice(0, eq));
    const attached = eq < 0 ? undefined : wordFrom(w, eq + 1);
    if (kind === undefined) {
      const p = readPath(attached); // an option it may not know: its value may be a file
      if (p === undefined) return false;
      if (p !== null) this.paths.push(p);
      return true;
    }
    return this.take(kind, attached ?? (TAKES_VALUE.has(kind) ? next() : undefined));
  }

  /** An option of a command whose options are whole words after one dash (`find -newer x`). */
  private singleDashOption(w: Word, next: () => Word | undefined): boolean {
    if (!w.exact) return false;
    const t = w.text;
    const whole = this.options.get(t);
    const short = this.options.get(t.slice(0, 2));
    if (whole !== undefined && !this.take(whole, TAKES_VALUE.has(whole) ? next() : undefined)) return false;
    if (whole === undefined && short !== undefined && t.length > 2 && !this.take(short, wordFrom(w, 2))) return false;
    return true;
  }

  /** A bundle of one-letter options: `-rn`, `-A3`, `-fpats.txt`. */
  private bundle(w: Word, known: string, next: () => Word | undefined): boolean {
    const t = w.text;
    for (let j = 1; j < t.length; j += 1) {
      if (j >= known.length) return false; // an option only known when the shell runs
      const kind = this.options.get(`-${t[j]}`);
      if (kind === undefined) continue;
      if (!TAKES_VALUE.has(kind) && kind !== "optional") {
        if (!this.take(kind, undefined)) return false;
        continue;
      }
      const attached = j + 1 < t.length ? wordFrom(w, j + 1) : undefined;
      return this.take(kind, attached ?? (kind === "optional" ? undefined : next()));
    }
    return true;
  }

  /** What the arguments `args`, all read, name (see {@link argReads}). */
  result(args: readonly Word[], fed: boolean): { paths: string[]; patterns: Word[] } | undefined {
    const { form, paths, patterns } = this;
    let files = this.operands;
    if (form.operands === "afterPattern" && !this.patternGiven) {
      const [pattern, ...rest] = files;
      if (pattern !== undefined) patterns.push(pattern);
      files = rest;
    }
    if (form.responseFiles && files.some((f) => f.text.startsWith("@"))) return undefined;
    for (const f of files) {
      if (f.exact && f.text === "-") continue; // its standard input
      const p = readPath(f);
      if (p === undefined) return undefined;
      if (p !== null) paths.push(p);
    }
    if (files.length === 0 && (form.bare === "cwd" || this.recursive || (form.bare === "search" && !fed)))
      paths.push(".");
    // A glob may become several words, options among them: then a pattern or an option's value may be a file.
    if (args.some((a) => !a.exact))
      paths.push(...args.filter((a) => a.exact && /^[^-]/.test(a.text)).map((a) => a.text));
    return { paths, patterns };
  }
}

/** The paths a `find` command reads, as written: its starting points (`.` without one), the files its tests name. */
function findReads(args: readonly Word[]): string[] | undefined {
  let i = 0;
  while (i < args.length && /^-([HLP]|O\d*|D)$/.test(args[i]?.text ?? "")) i += args[i]?.text === "-D" ? 2 : 1;
  const paths: string[] = [];
  let starts = 0;
  for (; i < args.length; i += 1) {
    const w = args[i] as Word;
    if (w.optionLike || ["(", ")", "!", ","].includes(w.text)) break;
    const p = readPath(w);
    if (p === undefined) return undefined;
    if (p !== null) paths.push(p);
    starts += 1;
  }
  if (starts === 0) paths.push(".");
  for (; i < args.length; i += 1) {
    const t = args[i]?.text;
    if (t === "-files0-from") return undefined; // its starting points are in a file
    // Every word is looked at (a value that looks like a test only adds a path).
    if (!/^-([ac]?newer|newer[aBcm][aBcmt]|samefile)$/.test(t ?? "")) continue;
    const p = readPath(args[i + 1]);
    if (p === undefined) return undefined;
    if (p !== null) paths.push(p);
  }
  return paths;
}

/** The paths a command named `name` reads, from its arguments, as written; `undefined` when not known. */
function namedReads(
  name: string,
  row: CommandRow,
  form: ReadForm,
  args: readonly Word[],
  fed: boolean,
): string[] | undefined {
  if (name === "find") return findReads(args);
  const found = argReads(row, form, args, fed);
  if (found === undefined || name !== "sed") return found?.paths;
  if (found.patterns.some((w) => !w.exact)) return undefined;
  const reads = sedScript(found.patterns.map((w) => w.text).join("\n"))?.reads; // `r FILE`, `R FILE`
  return reads === undefined ? undefined : [...found.paths, ...reads];
}

/** The folders above `path`, nearest first, up to `/`. */
function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let dir = posix.dirname(path); ; dir = posix.dirname(dir)) {
    out.push(dir);
    if (dir === posix.dirname(dir)) return out;
  }
}

/**
 * The absolute paths one simple command of a read-only line reads in `cwd` (`null`: unknown); `undefined` when not
 * known. `piped`: its input is the previous command's output; `cd`: where a `cd` moves (whether it exists is read).
 */
export function commandReads(
  command: SimpleCommand,
  piped: boolean,
  cwd: string | null,
): { paths: string[]; cd?: string } | undefined {
  const named: string[] = [];
  let fed = piped;
  for (const { op, fd, target } of command.redirects) {
    if (["<", "<<", "<<-", "<<<"].includes(op) && (fd === undefined || fd === "0")) fed = true;
    if (op !== "<") continue; // a heredoc is no file; the targets of a read-only line's other redirections are devices
    const p = readPath(target);
    if (p === undefined) return undefined;
    if (p !== null) named.push(p);
  }
  const redirected = named.length;
  const [program, ...args] = command.words;
  let cd: string | undefined;
  let ignores: readonly string[] = [];
  if (program !== undefined) {
    const name = programName(program);
    const row = name === undefined ? undefined : ROWS.get(name);
    const form = name === undefined ? undefined : READS.get(name);
    if (name === undefined || row === undefined || form === undefined) return undefined; // `git`, `which`, ...
    if (args.some((w) => !w.exact && w.glob === undefined)) return undefined; // `$X`, `~`: only the shell knows
    for (const w of args) if (!w.exact && w.glob !== undefined) named.push(globFolder(w.text, w.glob)); // it lists
    ignores = form.ignoreFiles ?? [];
    if (name === "cd") {
      const target = cdTarget(args, cwd);
      if (target === null) return undefined;
      cd = target;
    } else {
      const found = namedReads(name, row, form, args, fed);
      if (found === undefined) return undefined;
      named.push(...found);
    }
  }
  const paths: string[] = [];
  for (const [i, p] of named.entries()) {
    let path: string;
    if (isAbsolute(p)) path = resolve(p);
    else if (cwd === null) return undefined;
    else path = resolve(cwd, p);
    if (READ_DEVICE.test(path)) continue;
    paths.push(path);
    if (i < redirected) continue; // ignore files count for what it searches, not for its input
    for (const dir of ancestors(path)) for (const file of ignores) paths.push(posix.join(dir, file));
  }
  return cd === undefined ? { paths } : { paths, cd };
}
