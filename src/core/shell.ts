/**
 * What the guards understand of a shell command line: which commands only read ({@link isReadOnlyCommand}) and which
 * paths a command changes ({@link changedPaths}). Both read one parse of the line ({@link splitCommandLine}), so they
 * agree on what a command line is. No LangGraph import.
 */
import { isAbsolute, resolve } from "node:path";
import { type ParseEntry, parse } from "shell-quote";

/**
 * Commands that only read. `date`, `ps` and friends also only read, but their whole point is a new answer each
 * time, so they are left out (unknown = mutating = never redundant).
 */
const READ_ONLY_COMMANDS = new Set([
  "cat",
  "ls",
  "ll",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "ag",
  "head",
  "tail",
  "wc",
  "nl",
  "tree",
  "pwd",
  "echo",
  "printf",
  "file",
  "stat",
  "du",
  "which",
  "type",
  "whereis",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "sort",
  "uniq",
  "cut",
  "tr",
  "diff",
  "cmp",
  "md5sum",
  "sha1sum",
  "sha256sum",
  "true",
  "cd",
  "column",
  "less",
  "more",
  "od",
  "xxd",
  "hexdump",
  "strings",
]);

/** git subcommands that never change the repository or the work tree. */
const READ_ONLY_GIT = new Set([
  "status",
  "diff",
  "log",
  "show",
  "blame",
  "ls-files",
  "ls-tree",
  "rev-parse",
  "grep",
  "shortlog",
  "describe",
  "cat-file",
]);

/** `find` actions that write, delete or run something. */
const FIND_ACTIONS = new Set([
  "-delete",
  "-exec",
  "-execdir",
  "-ok",
  "-okdir",
  "-fprint",
  "-fprint0",
  "-fprintf",
  "-fls",
]);

type Token = ParseEntry | { variable: string };

/**
 * One simple command of a command line: its words, and the files its `>` and `>>` redirections write to.
 *
 * @example
 * ```ts
 * const sort: SimpleCommand = { words: ["sort", "a.txt"], outputs: ["b.txt"] }; // sort a.txt > b.txt
 * ```
 */
interface SimpleCommand {
  words: string[];
  outputs: string[];
}

/**
 * A command line as the guards model it: simple commands joined by `|`, `&&`, `||` or `;`.
 *
 * @example
 * ```ts
 * const line: CommandLine | undefined = splitCommandLine("ls src && cat a.txt");
 * ```
 */
interface CommandLine {
  commands: SimpleCommand[];
  /**
   * Whether every word is known before the shell runs: false when the line has a glob or a `$VARIABLE` (kept in
   * `words` as the pattern and as `$VAR`), reads a file with `<`, or has a comment.
   */
  literal: boolean;
}

/** A redirection target that names a file descriptor (`2>&1`), not a file. */
const FD = /^\d+$/;

/**
 * Splits a shell command line into its simple commands, or `undefined` for what is beyond the model: command and
 * process substitution, subshells, background jobs, a redirection to something other than a plain file name (or,
 * for `>&`, a file descriptor), unparsable text.
 *
 * @example
 * ```ts
 * splitCommandLine("grep -n x a.py > hits.txt 2>&1; wc -l hits.txt");
 * // { commands: [{ words: ["grep", "-n", "x", "a.py", "2"], outputs: ["hits.txt"] },
 * //              { words: ["wc", "-l", "hits.txt"], outputs: [] }], literal: true }
 * splitCommandLine("echo $(date)"); // undefined
 * ```
 */
function splitCommandLine(command: string): CommandLine | undefined {
  if (/`|\$\(|<\(|>\(/.test(command)) return undefined;
  let tokens: Token[];
  try {
    tokens = parse(command, (key) => ({ variable: key }));
  } catch {
    return undefined;
  }
  let current: SimpleCommand = { words: [], outputs: [] };
  const line: CommandLine = { commands: [current], literal: true };
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i] as Token;
    if (typeof token === "string") current.words.push(token);
    else if ("variable" in token) {
      // Its value is unknown, but as an argument of a known reader it cannot make it write.
      current.words.push("$VAR");
      line.literal = false;
    } else if ("comment" in token) line.literal = false;
    else {
      switch (token.op) {
        case "glob":
          current.words.push(token.pattern);
          line.literal = false;
          break;
        case "<": // the file it reads stays a word of the command
          line.literal = false;
          break;
        case "|":
        case "&&":
        case "||":
        case ";":
          current = { words: [], outputs: [] };
          line.commands.push(current);
          break;
        case ">":
        case ">>":
        case ">&": {
          const target = tokens[i + 1];
          if (typeof target !== "string") return undefined;
          // `2>&1` sends one output where another goes; `>& file` (both outputs into a file) is beyond the model.
          if (token.op !== ">&") current.outputs.push(target);
          else if (!FD.test(target)) return undefined;
          i += 1;
          break;
        }
        default: // `&`, `(`, `|&`, `;;`, `&>`, ...
          return undefined;
      }
    }
  }
  return line;
}

/** Whether `sed` arguments edit files in place (`-i`, `-Ei`, `--in-place=.bak`). */
function sedInPlace(args: readonly string[]): boolean {
  return args.some((w) => /^-[a-zA-Z]*i/.test(w) || w.startsWith("--in-place"));
}

function simpleCommandIsReadOnly(words: readonly string[]): boolean {
  // Leading VAR=value assignments only set the environment of this one command.
  let i = 0;
  while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] as string)) i += 1;
  const [program, ...rest] = words.slice(i);
  if (program === undefined) return true;
  const name = program.split("/").pop() ?? program;
  if (name === "git") {
    const sub = rest.find((w) => !w.startsWith("-"));
    return sub !== undefined && READ_ONLY_GIT.has(sub);
  }
  if (name === "sed") {
    // sed writes only with -i/--in-place or a `w` command in its script.
    const writes = rest.some((w) => !w.startsWith("-") && /(^|[;{\s])w\s/.test(w));
    return !sedInPlace(rest) && !writes;
  }
  if (name === "find") return !rest.some((w) => FIND_ACTIONS.has(w));
  if (name === "sort") return !rest.some((w) => w === "-o" || w.startsWith("--output"));
  return READ_ONLY_COMMANDS.has(name);
}

function lineIsReadOnly(line: CommandLine): boolean {
  return line.commands.every(
    ({ words, outputs }) => outputs.every((t) => t === "/dev/null") && simpleCommandIsReadOnly(words),
  );
}

/**
 * Whether a shell command line only reads: every command in it (split at `|`, `&&`, `||`, `;`) is a known reader
 * and nothing is redirected into a file. Command substitution, subshells and anything unparsable count as
 * mutating: a wrong "read-only" could block real progress, a wrong "mutating" only lets a call through.
 *
 * @example
 * ```ts
 * isReadOnlyCommand("sed -n '10,40p' src/app.py | grep -n TODO"); // true
 * isReadOnlyCommand("sed -i 's/a/b/' src/app.py");                 // false
 * isReadOnlyCommand("python reproduce.py");                         // false (unknown)
 * ```
 */
export function isReadOnlyCommand(command: string): boolean {
  if (command.trim() === "") return false;
  const line = splitCommandLine(command);
  return line !== undefined && lineIsReadOnly(line);
}

/**
 * The paths one simple command changes, as written: the operands of `rm`, `mv`, `touch`, ..., the destination of
 * `cp`, the files of `sed -i` and of `git checkout -- <paths>` / `git restore <paths>`; `[]` for a reader;
 * `undefined` when it may change anything (an unknown program, other git forms).
 */
function pathsChangedBy(words: readonly string[]): string[] | undefined {
  const [program, ...args] = words;
  if (program === undefined) return [];
  const operands = args.filter((a) => !a.startsWith("-"));
  switch (program) {
    case "rm":
    case "rmdir":
    case "mkdir":
    case "touch":
    case "mv":
    case "tee":
      return operands;
    case "cp":
      return operands.slice(-1);
    case "git": {
      const [sub, ...rest] = args;
      const dashes = rest.indexOf("--");
      if (sub === "checkout" && dashes >= 0 && dashes < rest.length - 1) return rest.slice(dashes + 1);
      if (sub === "restore" && rest.some((a) => !a.startsWith("-"))) return rest.filter((a) => !a.startsWith("-"));
      break;
    }
    case "sed":
      if (sedInPlace(args)) return operands.slice(1); // the first operand is the script
      break;
  }
  return simpleCommandIsReadOnly(words) ? [] : undefined;
}

/**
 * The paths a shell command may change (absolute, resolved against `cwd`) when the command is understood;
 * `undefined` when it may change anything. A read-only command changes nothing (`[]`); otherwise every command of
 * the line must be understood and every word known before the shell runs (no glob, no `$VARIABLE`). The file tools
 * use it to drop only what `execute_command` may have touched from their cache.
 *
 * @example
 * ```ts
 * changedPaths("rm -f a.txt && echo x > b.txt", "/repo"); // ["/repo/a.txt", "/repo/b.txt"]
 * changedPaths("cat a.txt | grep x", "/repo");            // []
 * changedPaths("python build.py", "/repo");               // undefined
 * ```
 */
export function changedPaths(command: string, cwd: string): string[] | undefined {
  const line = splitCommandLine(command);
  if (line === undefined) return undefined;
  if (lineIsReadOnly(line)) return [];
  if (!line.literal) return undefined;
  const paths: string[] = [];
  for (const { words, outputs } of line.commands) {
    const changed = pathsChangedBy(words);
    if (changed === undefined) return undefined;
    paths.push(...outputs.filter((t) => t !== "/dev/null"), ...changed);
  }
  return paths.map((p) => (isAbsolute(p) ? p : resolve(cwd, p)));
}
