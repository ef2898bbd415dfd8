/**
 * The whole command line: one analysis ({@link analyze}) follows it through the folders it may run in and gathers
 * what its commands write and read; {@link isReadOnlyCommand}, {@link changedPaths}, {@link commandPaths} and
 * {@link readPaths} all read it, so they always agree.
 */
import { isAbsolute, resolve } from "node:path";
import { commandEffect, redirectWrites } from "./effects.js";
import { lex } from "./lexer.js";
import { cdTarget, parse, programName, type SimpleCommand } from "./parse.js";
import { commandReads } from "./reads.js";

/** Whether `path` is `folder` or below it. */
function within(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith("/") ? folder : `${folder}/`);
}

/**
 * The analysis of a line: whether it only reads, the absolute paths it may change (`undefined`: anything), and for
 * a line that only reads, the absolute paths it may read (`undefined`: not known, or a line that writes).
 */
interface LineEffect {
  readOnly: boolean;
  paths: string[] | undefined;
  reads: string[] | undefined;
  /** Among `paths`, the files whose whole content the line replaces ({@link rewrites}). */
  rewrites?: string[];
}

/** Redirections that truncate their target: what follows replaces the file's whole content. */
const TRUNCATING = new Set([">", ">|", "&>"]);

/**
 * The files a simple command replaces whole (`written`: what it writes, redirections apart): the targets of `>`,
 * `>|` and `&>`, `cp`'s destination, `tee`'s files without `-a`. An edit in place (`sed -i`), an append (`>>`,
 * `tee -a`), a move or a removal is not a rewrite.
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
 * Follows a command line through the folders it may be in (`root`: where it starts, `null` when not known). A state
 * is a folder and whether the last pipeline succeeded: `&&` runs the next pipeline only in the states that
 * succeeded, `||` in those that failed, `;` in all; `cd` moves the states where it succeeds; a pipeline runs each
 * command in a subshell, so a `cd` in one moves nothing. Each command's reads are taken in every folder it may run in.
 */
function analyze(command: string, root: string | null): LineEffect {
  const anything: LineEffect = { readOnly: false, paths: undefined, reads: undefined };
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
  if (!readOnly) return { readOnly, paths: [...paths], reads: undefined, rewrites: [...rewritten] };
  if (reads === undefined) return { readOnly, paths: [], reads: undefined };
  // A write that creates or removes a folder is at it or above it: a read below the folder stands for it too.
  const read = [...reads];
  for (const dir of cds) if (!read.some((p) => within(p, dir))) read.push(dir);
  return { readOnly, paths: [], reads: read };
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
 * The paths a shell command line may change, absolute (relative ones resolved against `cwd`, or against the folder
 * an earlier `cd` of the line moved to; `cwd` null: relative paths are not known); `[]` for a line that only reads; `undefined` when it may change anything
 * (an unknown program, a path only known when the shell runs). The file tools use it to drop only what
 * `execute_command` may have touched from their cache; a path stands for itself and everything below it.
 *
 * @example
 * ```ts
 * changedPaths("rm -f a.txt && echo x > b.txt", "/repo"); // ["/repo/a.txt", "/repo/b.txt"]
 * changedPaths("cd sub && sort -o out.txt in.txt", "/repo"); // ["/repo/sub/out.txt"]
 * changedPaths("cat a.txt | grep x", "/repo");            // []
 * changedPaths("python build.py", "/repo");               // undefined
 * ```
 */
export function changedPaths(command: string, cwd: string | null): string[] | undefined {
  return analyze(command, cwd === null ? null : resolve(cwd)).paths;
}

/**
 * One analysis of a command line: whether it only reads, the paths it may change ({@link changedPaths}), the
 * paths it may read ({@link readPaths}), and among the changed ones the files whose whole content it replaces
 * (`rewritten`: `>` redirections, `cp`'s destination, `tee` without `-a`; not `sed -i` or `>>`); `cwd` null when the working folder is not known (a relative path is then
 * beyond the model).
 *
 * @example
 * ```ts
 * commandPaths("sed -i 's/a/b/' x.py", "/repo"); // { readOnly: false, changed: ["/repo/x.py"], reads: undefined, rewritten: [] }
 * commandPaths("cat > x.py <<EOF\nx\nEOF", "/repo"); // { readOnly: false, changed: ["/repo/x.py"], reads: undefined, rewritten: ["/repo/x.py"] }
 * commandPaths("cat x.py", "/repo");             // { readOnly: true, changed: [], reads: ["/repo/x.py"], rewritten: [] }
 * ```
 */
export function commandPaths(
  command: string,
  cwd: string | null,
): { readOnly: boolean; changed: string[] | undefined; reads: string[] | undefined; rewritten: string[] } {
  const line = analyze(command, cwd === null ? null : resolve(cwd));
  return { readOnly: line.readOnly, changed: line.paths, reads: line.reads, rewritten: line.rewrites ?? [] };
}

/**
 * The paths a read-only shell command line may read, absolute and normalized (relative ones resolved against `cwd`,
 * or against the folder an earlier `cd` of the line moved to); a path stands for itself and everything below it (a
 * folder a command lists or searches, the folder a glob lists). A superset: a write to none of them leaves the
 * line's output as it was. The working folder counts only when a command reads it (`ls`, `grep -r x`, `rg x`,
 * `find`, a glob like `*.py`). `undefined` when the line is not read-only ({@link isReadOnlyCommand}) or what it
 * reads is not known: a relative path with `cwd` `null`, a word only known when the shell runs (`$X`, `~`), a
 * command that reads what it does not name (every `git` subcommand reads the repository; `which`; `md5sum -c`).
 * The guards use it to forget only the reads a write touches.
 *
 * @example
 * ```ts
 * readPaths("cat a.txt | grep -n x && head -5 /etc/hosts", "/repo"); // ["/repo/a.txt", "/etc/hosts"]
 * readPaths("cd src && grep -rn TODO", "/repo");                    // ["/repo/src"]
 * readPaths("head src/*.py; sort < in.txt", "/repo");               // ["/repo/src", "/repo/in.txt"]
 * readPaths("cat a.txt", null);                                     // undefined (the working folder is not known)
 * readPaths("git status", "/repo");                                 // undefined (it reads the repository)
 * readPaths("sort -o out.txt a.txt", "/repo");                      // undefined (it writes)
 * ```
 */
export function readPaths(command: string, cwd: string | null): string[] | undefined {
  return analyze(command, cwd === null ? null : resolve(cwd)).reads;
}
