// The whole command line: one analysis ({@link analyze}) that every export here reads, so they always agree.
import { isAbsolute, resolve } from "node:path";
import { commandEffect, redirectWrites } from "./effects.js";
import { lex } from "./lexer.js";
import { cdTarget, parse, programName, type SimpleCommand } from "./parse.js";
import { commandReads } from "./reads.js";

function within(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith("/") ? folder : `${folder}/`);
}

/** The analysis of a line (see {@link commandPaths}). */
interface LineEffect {
  readOnly: boolean;
  changed: string[] | undefined;
  reads: string[] | undefined;
  rewritten: string[];
}

/** Redirections that truncate their target: what follows replaces the file's whole content. */
const TRUNCATING = new Set([">", ">|", "&>"]);

/**
 * The files a simple command replaces whole (`written`: its writes, redirections apart): `>`, `>|` and `&>` targets,
 * `cp`'s destination, `tee`'s files without `-a`; not `sed -i`, `>>`, a move or a removal.
 */
function rewrites(simple: SimpleCommand, written: readonly string[]): string[] {
  const out: string[] = [];
  for (const redirect of simple.redirects) {
    const target = TRUNCATING.has(redirect.op) ? redirectWrites(redirect) : null;
    if (typeof target === "string") out.push(target);
  }
  const [program, ...args] = simple.words;
  const name = program === undefined ? undefined : programName(program);
  const appends = args.some((w) => /^(-[a-zA-Z]*a[a-zA-Z]*|--append)$/.test(w.text));
  if (name === "cp" || (name === "tee" && !appends)) out.push(...written);
  return out;
}

/**
 * Follows a line through the folders it may be in (`root`: the start, `null`: unknown). A state is a folder and whether
 * the last pipeline succeeded: `&&` runs the next in those that succeeded, `||` in those that failed, `;` in all; `cd`
 * moves the states where it succeeds, but not in a pipeline (a subshell). Reads are taken in every folder possible.
 */
function analyze(command: string, root: string | null): LineEffect {
  const anything: LineEffect = { readOnly: false, changed: undefined, reads: undefined, rewritten: [] };
  if (command.trim() === "") return anything;
  const tokens = lex(command);
  const line = tokens === undefined ? undefined : parse(tokens);
  if (line === undefined) return anything;
  let readOnly = true;
  const paths = new Set<string>();
  const rewritten = new Set<string>();
  let reads: Set<string> | undefined = new Set<string>();
  const cds: string[] = []; // the folders a cd moved to: whether they exist is read
  let states: { cwd: string | null; ok: boolean }[] = [{ cwd: root, ok: true }];
  for (const { op, pipeline } of line) {
    const runs = (s: { ok: boolean }) => (op === "&&" ? s.ok : op === "||" ? !s.ok : true);
    const cwds = [...new Set(states.filter(runs).map((s) => s.cwd))];
    const next = states.filter((s) => !runs(s));
    for (const [index, simple] of pipeline.entries()) {
      const written: string[] = [];
      for (const redirect of simple.redirects) {
        const target = redirectWrites(redirect);
        if (target === undefined) return anything;
        if (target !== null) written.push(target);
      }
      const effect = commandEffect(simple);
      if (effect.kind === "all") return anything;
      if (effect.kind === "write") written.push(...effect.paths);
      if (effect.kind === "write" || written.length > 0) readOnly = false;
      const whole = new Set(rewrites(simple, effect.kind === "write" ? effect.paths : []));
      for (const p of written) {
        for (const cwd of cwds) {
          if (!isAbsolute(p) && cwd === null) return anything;
          const path = isAbsolute(p) ? resolve(p) : resolve(cwd as string, p);
          paths.add(path);
          if (whole.has(p)) rewritten.add(path);
        }
      }
      for (const cwd of readOnly ? cwds : []) {
        if (reads === undefined) break;
        const read = commandReads(simple, index > 0, cwd);
        if (read === undefined) reads = undefined;
        else {
          for (const p of read.paths) reads.add(p);
          if (read.cd !== undefined) cds.push(read.cd);
        }
      }
    }
    const [program, ...args] = pipeline.length === 1 ? (pipeline[0]?.words ?? []) : [];
    const cd = program !== undefined && programName(program) === "cd";
    for (const cwd of cwds) {
      next.push({ cwd: cd ? cdTarget(args, cwd) : cwd, ok: true });
      next.push({ cwd, ok: false });
    }
    states = [...new Map(next.map((s) => [`${s.ok}\u0000${s.cwd}`, s])).values()];
  }
  if (!readOnly) return { readOnly, changed: [...paths], reads: undefined, rewritten: [...rewritten] };
  if (reads === undefined) return { readOnly, changed: [], reads: undefined, rewritten: [] };
  // A write that creates or removes a folder is at it or above it: a read below the folder stands for it too.
  const read = [...reads];
  for (const dir of cds) if (!read.some((p) => within(p, dir))) read.push(dir);
  return { readOnly, changed: [], reads: read, rewritten: [] };
}

/**
 * Whether a shell command line only reads: every command in it (split at `|`, `&&`, `||`, `;`, newlines) is a
 * known reader used in none of its writing forms (`SHELL_COMMANDS`) and nothing is redirected into a file
 * (`2>/dev/null` is fine). Command substitution, subshells, background jobs and anything not understood count as
 * mutating: a wrong "read-only" could block real progress, a wrong "mutating" only lets a call through.
 *
 * @example
 * ```ts
 * isReadOnlyCommand("sed -n '10,40p' src/app.py | grep -n TODO"); // true
 * isReadOnlyCommand("sed -n '1w out.txt' src/app.py");            // false
 * isReadOnlyCommand("python reproduce.py");                        // false (unknown)
 * ```
 */
export function isReadOnlyCommand(command: string): boolean {
  return analyze(command, "/").readOnly;
}

/**
 * The absolute paths a command line may change, each with everything below it (relative ones resolved in `cwd` or
 * where a `cd` moved; `cwd` null: not known); `[]` when it only reads; `undefined` when it may change anything.
 */
export function changedPaths(command: string, cwd: string | null): string[] | undefined {
  return commandPaths(command, cwd).changed;
}

/**
 * One analysis of a command line: whether it only reads, the paths it may change ({@link changedPaths}), those it
 * replaces whole (`rewritten`), and for a read-only line a superset of what it reads, each path with all below it
 * (`reads`; `undefined` when not known: `$X`, any `git` subcommand, a relative path with `cwd` null).
 */
export function commandPaths(command: string, cwd: string | null): LineEffect {
  return analyze(command, cwd === null ? null : resolve(cwd));
}
