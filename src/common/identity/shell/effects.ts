// What one simple command or redirection writes (rows of SHELL_COMMANDS, getopt's rules); the not understood: anything.
import { isAbsolute, posix } from "node:path";
import type { Word } from "./lexer.js";
import { programName, type Redirect, type SimpleCommand } from "./parse.js";
import { sedScript } from "./sed.js";
import { type CommandRow, REDIRECTIONS, ROWS, type WriteForm, words } from "./tables.js";

/** git options before the subcommand that change nothing we track (`-C <dir>` is handled apart). */
const GIT_GLOBAL_FLAGS = new Set(
  words("--no-pager -P -p --paginate --no-optional-locks --literal-pathspecs --glob-pathspecs --noglob-pathspecs"),
);

/** Environment settings that cannot make a known reader write (`LC_ALL=C sort`, `GIT_PAGER=cat git log`). */
const SAFE_ASSIGNMENT = /^(LC_[A-Z]+|LANG|LANGUAGE|TZ|COLUMNS|LINES|TERM|NO_COLOR|FORCE_COLOR|GREP_COLORS?)$/;
const PAGER_ASSIGNMENT = /^(PAGER|GIT_PAGER)$/;

/** Files a write to changes nothing we track. */
const DEVICE = /^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/;

/** What one simple command does: only reads, writes these paths (as written), or may change anything. */
type Effect = { kind: "read" } | { kind: "write"; paths: string[] } | { kind: "all" };

const ALL: Effect = { kind: "all" };

/** git subcommands that change the working tree's files (and nothing outside the repository). */
const TREE_MOVERS = new Set(
  words("bisect checkout switch reset stash merge rebase pull cherry-pick revert restore am apply"),
);

/** The long option `name` (`--out`) stands for in `row`: an exact one, a writing one it abbreviates, a unique one. */
function longOption(row: CommandRow, name: string): string | undefined {
  const names = [...optionNames(row)].filter((o) => o.startsWith("--"));
  if (names.includes(name)) return name;
  if (name.length < 3) return undefined;
  const candidates = names.filter((o) => o.startsWith(name));
  // An abbreviation that may stand for a writing option counts as it (getopt_long accepts unique abbreviations).
  return (
    candidates.find((o) => writeFormOf(row, o) !== undefined) ?? (candidates.length === 1 ? candidates[0] : undefined)
  );
}

function optionNames(row: CommandRow): Set<string> {
  const names = new Set([...(row.valueOptions ?? []), ...(row.flags ?? [])]);
  for (const form of row.writes ?? []) if ("option" in form) names.add(form.option);
  return names;
}

function writeFormOf(row: CommandRow, option: string): Extract<WriteForm, { option: string }> | undefined {
  for (const form of row.writes ?? []) if ("option" in form && form.option === option) return form;
  return undefined;
}

/** The arguments of a command, read with its row: the writing options used, the operands, option values. */
interface ParsedArgs {
  hits: { form: Extract<WriteForm, { option: string }>; value: Word | undefined }[];
  operands: Word[];
  /** How many operands came before `--`, when there was one. */
  dashes: number | undefined;
  values: { option: string; value: Word | undefined }[];
}

/** Reads a command's arguments with its row (getopt's rules); `undefined` when they are beyond the model. */
function parseArgs(row: CommandRow, args: readonly Word[]): ParsedArgs | undefined {
  const parsed: ParsedArgs = { hits: [], operands: [], dashes: undefined, values: [] };
  const takesValue = new Set(row.valueOptions ?? []);
  const strict = row.flags !== undefined;
  let optionsEnded = false;
  for (let i = 0; i < args.length; i += 1) {
    const w = args[i] as Word;
    const next = (): Word | undefined => {
      i += 1;
      return args[i];
    };
    if (optionsEnded) {
      parsed.operands.push(w);
      continue;
    }
    if (!w.exact && w.optionLike) return undefined; // it could be any option, a writing one included
    const t = w.text;
    if (!w.exact || t === "-" || !(t.startsWith("-") || (t.startsWith("+") && writeFormOf(row, "+")))) {
      parsed.operands.push(w);
      if (row.optionsFirst) optionsEnded = true;
      continue;
    }
    if (t === "--") {
      optionsEnded = true;
      parsed.dashes = parsed.operands.length;
      continue;
    }
    if (t.startsWith("+")) {
      parsed.hits.push({ form: writeFormOf(row, "+") as ParsedArgs["hits"][number]["form"], value: w });
      continue;
    }
    if (t.startsWith("--")) {
      const eq = t.indexOf("=");
      const name = longOption(row, eq < 0 ? t : t.slice(0, eq));
      const attached: Word | undefined = eq < 0 ? undefined : { ...w, text: t.slice(eq + 1), optionLike: false };
      if (name === undefined) {
        if (strict) return undefined;
        continue;
      }
      const form = writeFormOf(row, name);
      if (form !== undefined) {
        const v = attached ?? (form.writes === "value" ? next() : undefined);
        parsed.hits.push({ form, value: v });
      } else if (takesValue.has(name)) parsed.values.push({ option: name, value: attached ?? next() });
      continue;
    }
    if (row.singleDash) {
      const form = writeFormOf(row, t);
      if (form !== undefined) parsed.hits.push({ form, value: form.writes === "value" ? next() : undefined });
      else if (takesValue.has(t)) parsed.values.push({ option: t, value: next() });
      else if (takesValue.has(t.slice(0, 2)))
        parsed.values.push({ option: t.slice(0, 2), value: { ...w, text: t.slice(2) } });
      else if (strict && !(row.flags ?? []).includes(t)) return undefined;
      continue;
    }
    // A bundle of one-letter options: `-nr`, `-o out`, `-oout`, `-ni.bak`.
    for (let j = 1; j < t.length; j += 1) {
      const option = `-${t[j]}`;
      const rest = t.slice(j + 1);
      const restWord: Word | undefined = rest === "" ? undefined : { ...w, text: rest, optionLike: false };
      const form = writeFormOf(row, option);
      if (form !== undefined) {
        if (form.writes === "value") {
          parsed.hits.push({ form, value: restWord ?? next() });
          break;
        }
        if (form.writes === "operands" && form.value === "optional") {
          parsed.hits.push({ form, value: restWord });
          break;
        }
        parsed.hits.push({ form, value: undefined });
      } else if (takesValue.has(option)) {
        parsed.values.push({ option, value: restWord ?? next() });
        break;
      } else if (strict && !(row.flags ?? []).includes(option)) return undefined;
    }
  }
  return parsed;
}

/** A path as written, or `undefined` when it is not known before the shell runs. */
function pathOf(w: Word | undefined): string | undefined {
  return w?.exact && w.text !== "" ? w.text : undefined;
}

function pathsOf(list: readonly Word[]): string[] | undefined {
  const paths: string[] = [];
  for (const w of list) {
    const p = pathOf(w);
    if (p === undefined) return undefined;
    paths.push(p);
  }
  return paths;
}

/** The paths the operand forms of `row` write, or `undefined` when they are not known. */
function operandWrites(row: CommandRow, parsed: ParsedArgs): string[] | undefined {
  const { operands, dashes } = parsed;
  const counted = operands.some((w) => w.many);
  const out: string[] = [];
  for (const form of row.writes ?? []) {
    if (!("operand" in form)) continue;
    let written: Word[];
    if (form.operand === "all") written = operands;
    else if (form.operand === "afterDashes") {
      if (dashes === undefined || dashes === operands.length) return undefined;
      written = operands.slice(dashes);
    } else if (counted)
      return undefined; // how many operands there are is only known when the shell runs
    else if (form.operand === "last") written = operands.slice(-1);
    else written = operands.slice(form.operand - 1, form.operand);
    const paths = pathsOf(written.filter((w) => !(w.exact && w.text === "-")));
    if (paths === undefined) return undefined;
    out.push(...paths);
  }
  return out;
}

/** What a `sed` command writes: its `-i` files, its script's `w` files. */
function sedEffect(row: CommandRow, parsed: ParsedArgs): Effect {
  if (parsed.hits.some(({ form }) => form.writes === "all")) return ALL; // `-f script.sed`: a script we do not read
  const scripts = parsed.values.filter((v) => v.option === "-e" || v.option === "--expression").map((v) => v.value);
  const operands = [...parsed.operands];
  if (scripts.length === 0) scripts.push(operands.shift());
  const scriptText: string[] = [];
  for (const w of scripts) {
    if (w === undefined) return { kind: "read" }; // no script: sed only prints its usage
    if (!w.exact) return ALL;
    scriptText.push(w.text);
  }
  const paths = sedScript(scriptText.join("\n"))?.writes;
  if (paths === undefined) return ALL;
  if (parsed.hits.some(({ form }) => form.writes === "operands")) {
    const files = pathsOf(operands);
    if (files === undefined) return ALL;
    return { kind: "write", paths: [...paths, ...files] }; // in place, even when it names no file (an error)
  }
  return writeOrRead(row, paths);
}

/** What a `find` command writes: its `-fprint` files; `-delete` its starting points. */
function findEffect(row: CommandRow, args: readonly Word[], parsed: ParsedArgs): Effect {
  const paths: string[] = [];
  for (const { form, value: v } of parsed.hits) {
    if (form.writes === "all") return ALL;
    if (form.writes === "value") {
      const p = pathOf(v);
      if (p === undefined) return ALL;
      paths.push(p);
    } else {
      // The starting points: the words before the expression (after -H, -L, -P, -D x, -Olevel).
      let i = 0;
      while (i < args.length && /^-([HLP]|O\d*|D)$/.test(args[i]?.text ?? "")) i += args[i]?.text === "-D" ? 2 : 1;
      const starts: Word[] = [];
      for (; i < args.length; i += 1) {
        const w = args[i] as Word;
        if (w.optionLike || ["(", ")", "!", ","].includes(w.text)) break;
        starts.push(w);
      }
      if (starts.some((w) => w.many)) return ALL;
      const roots = pathsOf(starts);
      if (roots === undefined) return ALL;
      paths.push(...(roots.length > 0 ? roots : ["."]));
    }
  }
  return writeOrRead(row, paths);
}

/** Read when a read-only command writes nothing we track (`/dev/null` is not a file we track), else a write. */
function writeOrRead(row: CommandRow, paths: string[]): Effect {
  const tracked = paths.filter((p) => !DEVICE.test(p));
  return row.readOnly && tracked.length === 0 ? { kind: "read" } : { kind: "write", paths: tracked };
}

function rowEffect(row: CommandRow, args: readonly Word[]): Effect {
  if (row.writes === undefined && row.readOnly) return { kind: "read" }; // a plain reader: no argument makes it write
  const parsed = parseArgs(row, args);
  if (parsed === undefined) return ALL;
  if (row.command === "sed") return sedEffect(row, parsed);
  if (row.command === "find") return findEffect(row, args, parsed);
  const paths: string[] = [];
  for (const { form, value: v } of parsed.hits) {
    if (form.writes !== "value") return ALL;
    const p = pathOf(v);
    if (p === undefined) return ALL;
    paths.push(p);
  }
  const operands = operandWrites(row, parsed);
  if (operands === undefined) return ALL;
  paths.push(...operands);
  return writeOrRead(row, paths);
}

/** What a `git` command writes: its subcommand's row, with paths relative to `-C <dir>`. */
function gitEffect(args: readonly Word[]): Effect {
  let base: string | undefined;
  let i = 0;
  for (; i < args.length; i += 1) {
    const w = args[i] as Word;
    if (!w.exact) return ALL;
    if (w.text === "-C") {
      const dir = pathOf(args[i + 1]);
      if (dir === undefined || args[i + 1]?.many) return ALL;
      base = base === undefined || isAbsolute(dir) ? dir : posix.join(base, dir);
      i += 1;
    } else if (GIT_GLOBAL_FLAGS.has(w.text)) continue;
    // `-c name=value` can set a pager or an external diff; `--git-dir` and the rest are beyond the model.
    else if (w.text.startsWith("-")) return ALL;
    else break;
  }
  const sub = args[i]?.text;
  const row = ROWS.get(`git ${sub}`);
  const effect = row === undefined ? ALL : rowEffect(row, args.slice(i + 1));
  // A tree mover (`git checkout main`, `git stash`) writes the folder it runs in (under `-C`), not anything anywhere.
  if (effect.kind === "all" && sub !== undefined && TREE_MOVERS.has(sub))
    return { kind: "write", paths: [base ?? "."] };
  if (effect.kind !== "write" || base === undefined) return effect;
  const dir = base;
  return { kind: "write", paths: effect.paths.map((p) => (isAbsolute(p) ? p : posix.join(dir, p))) };
}

/** Whether a leading `NAME=value` cannot make a known reader write. */
function safeAssignment(w: Word): boolean {
  const eq = w.text.indexOf("=");
  const name = w.text.slice(0, eq).replace(/\+$/, "");
  if (SAFE_ASSIGNMENT.test(name)) return true;
  return PAGER_ASSIGNMENT.test(name) && w.exact && ["", "cat"].includes(w.text.slice(eq + 1));
}

/** What one simple command does, its redirections apart. */
export function commandEffect(command: SimpleCommand): Effect {
  if (!command.assignments.every(safeAssignment)) return ALL;
  const [program, ...args] = command.words;
  if (program === undefined) return { kind: "read" };
  const name = programName(program);
  if (name === undefined) return ALL;
  if (name === "git") return gitEffect(args);
  const row = ROWS.get(name);
  return row === undefined ? ALL : rowEffect(row, args);
}

/** The file a redirection writes, `null` for none (`2>&1`, `< in`, a heredoc), `undefined` when unknown. */
export function redirectWrites(redirect: Redirect): string | null | undefined {
  const { op, target } = redirect;
  const row = REDIRECTIONS.find((r) => r.op === op);
  if (row === undefined || row.writes === "nothing") return row === undefined ? undefined : null;
  if (row.writes === "target unless fd" && target.exact && /^(\d+|-)$/.test(target.text)) return null; // `2>&1`, `>&-`
  if (target.many) return undefined;
  const path = pathOf(target);
  if (path === undefined) return undefined;
  return DEVICE.test(path) ? null : path;
}
