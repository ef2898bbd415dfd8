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

function isOp(token: Token): token is Extract<Token, { op: string }> {
  return typeof token === "object" && token !== null && "op" in token;
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
    const inPlace = rest.some((w) => /^-[a-zA-Z]*i/.test(w) || w.startsWith("--in-place"));
    const writes = rest.some((w) => !w.startsWith("-") && /(^|[;{\s])w\s/.test(w));
    return !inPlace && !writes;
  }
  if (name === "find") return !rest.some((w) => FIND_ACTIONS.has(w));
  if (name === "sort") return !rest.some((w) => w === "-o" || w.startsWith("--output"));
  return READ_ONLY_COMMANDS.has(name);
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
  if (command.includes("`") || command.includes("$(") || command.includes("<(") || command.includes(">(")) {
    return false;
  }
  let tokens: Token[];
  try {
    tokens = parse(command, (key) => ({ variable: key }));
  } catch {
    return false;
  }
  let words: string[] = [];
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i] as Token;
    if (typeof token === "string") {
      words.push(token);
      continue;
    }
    if (isOp(token)) {
      const op = token.op;
      if (op === "|" || op === "&&" || op === "||" || op === ";") {
        if (!simpleCommandIsReadOnly(words)) return false;
        words = [];
        continue;
      }
      if (op === ">" || op === ">>") {
        const target = tokens[i + 1];
        if (target !== "/dev/null") return false;
        i += 1;
        continue;
      }
      if (op === ">&") {
        const target = tokens[i + 1];
        if (typeof target !== "string" || !/^\d+$/.test(target)) return false;
        i += 1;
        continue;
      }
      if (op === "glob") {
        words.push((token as { pattern: string }).pattern);
        continue;
      }
      // `<` reads; anything else (`&`, `(`, `|&`, `;;`) is beyond what we model.
      if (op === "<") continue;
      return false;
    }
    if ("comment" in token) continue;
    // A $VARIABLE: its value is unknown, but as an argument of a known reader it cannot make it write.
    words.push("$VAR");
  }
  return simpleCommandIsReadOnly(words);
}
