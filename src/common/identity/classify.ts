import { posix } from "node:path";
import { commandPaths, isReadOnlyCommand, squeezeCommand } from "./shell/index.js";
import { digest, toolCallSignature, unreadableIdentity, withoutIgnoredArgs } from "./signature.js";
import { withoutVolatileArgs } from "./volatile-args.js";

/**
 * What a tool call does to the world the guards track: it reads `paths`, writes `paths`, may change anything
 * (`mutate`: a command, an unknown tool), or changes nothing the other tools read (`none`: declared so).
 *
 * @example
 * ```ts
 * const effect: CallEffect = classifyCall("write_to_file", { path: "a.py" }); // { kind: "write", paths: ["a.py"] }
 * ```
 */
export type CallEffect =
  | {
      /** Only reads. */
      kind: "read";
      /** The files or folders the call depends on (empty: it may depend on anything). */
      paths: string[];
    }
  | {
      /** Changes exactly `paths`. */
      kind: "write";
      /** The files or folders the call changes. */
      paths: string[];
      /**
       * Among `paths`, the files whose whole content the call replaces: a write tool given the whole new content
       * (a `content` argument), a shell `>` redirection, `cp`'s destination, `tee` without `-a`. An edit (a diff,
       * `sed -i`, `>>`) is not a rewrite. Absent: none.
       */
      rewrites?: string[];
    }
  | {
      /** May change anything (a command, an unknown tool). */
      kind: "mutate";
    }
  | {
      /** Changes nothing the other tools read (declared with `invalidates: "none"`). */
      kind: "none";
    };

/**
 * Per-tool facts that override what the guards infer from the tool's name and arguments.
 *
 * @example
 * ```ts
 * const traits: ToolTraits = { readOnly: false, invalidates: "none" }; // e.g. for send_email
 * ```
 */
export interface ToolTraits {
  /** `true`: the tool only reads (level 3 may block an identical successful call). `false`: it changes something. */
  readOnly?: boolean | undefined;
  /**
   * For a tool that is not read-only, what its call makes stale: `"paths"` the paths in its arguments, `"all"`
   * every recorded read, `"none"` nothing. Default: `"paths"` when path arguments are present, else `"all"`.
   */
  invalidates?: "all" | "paths" | "none" | undefined;
  /**
   * The argument names that hold file or folder paths. Default: `path`, `paths`, `file`, `file_path`, `filePath`,
   * `filename`, `dir`, `directory`, `folder`, … (`DEFAULT_PATH_ARGS`).
   */
  pathArgs?: readonly string[] | undefined;
  /** A repeat after success does something again (never a duplicate). Default by name: see `isRepeatableTool`. */
  repeatable?: boolean | undefined;
  /** A repeat with nothing changed since does nothing new. Default by name: see `isIdempotentTool`. */
  idempotent?: boolean | undefined;
  /**
   * Identical calls may legitimately return something new each time (scrolling, the next page, polling a status,
   * waiting, a screenshot, running code): repeats are judged by their results. Default by name and arguments:
   * see {@link isStatefulCall}.
   */
  stateful?: boolean | undefined;
  /**
   * The top-level arguments the tool's schema declares (learned from the tool where the adapter has it): what a call
   * asks about, kept in its identity even where its key and value look like call metadata (`get_trace({ trace_id
   * })`). Absent: the schema is not known.
   */
  args?: readonly string[] | undefined;
  /** `false`: a search's `query` (`q`, `question`, …) is compared as written, not as its words in any order. */
  queryWords?: boolean | undefined;
}

/**
 * Options for {@link classifyCall}.
 *
 * @example
 * ```ts
 * const opts: ClassifyOptions = { root: "/repo", tools: { deploy: { readOnly: false } } };
 * ```
 */
export interface ClassifyOptions {
  /** Per-tool traits, by tool name (first in precedence). */
  tools?: Readonly<Record<string, ToolTraits | undefined>>;
  /** `readOnlyHint` from tool metadata (MCP tool annotations), by tool name (second in precedence). */
  readOnlyHints?: Readonly<Record<string, boolean | undefined>>;
  /** Project root: relative paths are resolved against it, so `x` and `<root>/x` are one path. */
  root?: string | undefined;
}

/** A record's own entry for `name`, never an inherited one: `ownEntry({}, "toString")` is undefined. */
export function ownEntry<T>(record: Readonly<Record<string, T>> | undefined, name: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, name) ? record[name] : undefined;
}

/** Argument names that hold paths when a tool does not say otherwise. */
export const DEFAULT_PATH_ARGS: readonly string[] = (
  "path paths file files file_path filePath filepath filename file_name fileName target_file targetFile dir " +
  "dir_path dirPath directory folder"
).split(" ");

const READ_PREFIX = /^(read|list|search|get|find|view|check|can)([_\-A-Z]|$)/;
const READ_NAMES = new Set(["ls", "cat", "grep", "glob", "rg", "calculate", "think"]);
const REPEATABLE_PREFIX =
  /^(book|send|toggle|cancel|create|make|add|post|submit|refuel|exchange|return|append|insert|push|pay|charge|order|buy|purchase)([_\-A-Z]|$)/i;
const IDEMPOTENT_PREFIX = /^(update|set|transfer)([_\-A-Z]|$)/i;

/** Whether a repeat after success does something again (`book_`, `send_`, …): never a duplicate; `repeatable` wins. */
export function isRepeatableTool(name: string, traits?: { repeatable?: boolean | undefined }): boolean {
  return traits?.repeatable ?? REPEATABLE_PREFIX.test(baseName(name));
}

/** Whether a repeat with the same arguments changes nothing more (`update_`, `set_`, …); `idempotent` wins. */
export function isIdempotentTool(name: string, traits?: { idempotent?: boolean | undefined }): boolean {
  return traits?.idempotent ?? IDEMPOTENT_PREFIX.test(baseName(name));
}

const STATEFUL_WORDS = new Set(
  (
    "scroll scrolling paginate next previous prev more poll polling status wait sleep screenshot snapshot " +
    "observe refresh reload tick run execute exec eval evaluate cell notebook repl now clock random uuid " +
    "monitor watch progress"
  ).split(" "),
);
// Argument values that move through something rather than name it (`{ direction: "down" }`, `{ page: "next" }`).
const MOVING_VALUES = new Set(
  "next previous prev more down up forward back backward continue pagedown pageup page_down page_up".split(" "),
);
const ACTION_ARGS = ["action", "operation", "op", "type", "kind", "direction", "mode", "page", "cursor", "scroll"];

/** The lower-case words of a name: `scrollDown` → scroll, down; `get_job_status` → get, job, status. */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
}

/**
 * Whether identical calls of a tool may legitimately return something new each time, so that a repeat is judged
 * by its results rather than blocked before it runs: the per-tool `stateful` option, else a name with a word such
 * as scroll, next, poll, status, wait, sleep, screenshot, snapshot, refresh, run, execute, eval, now, random
 * (`scroll_down`, `get_job_status`, `run_cell`, `browser_snapshot`), else an action argument that says so
 * (`{ action: "scroll" }`, `{ direction: "down" }`, `{ page: "next" }`). Not by name: shell tools (judged by their
 * command) and tools whose name says what a repeat does (`update_`, `send_`, … see `isIdempotentTool`).
 *
 * @example
 * ```ts
 * isStatefulCall("get_job_status", { id: "j1" });              // true
 * isStatefulCall("computer", { action: "scroll", dy: 400 });   // true
 * isStatefulCall("read_file", { path: "a.py" });               // false
 * isStatefulCall("search", {}, { stateful: true });            // true
 * ```
 */
export function isStatefulCall(name: string, args: unknown, traits?: { stateful?: boolean | undefined }): boolean {
  return statefulCall(name, args, traits);
}

/**
 * {@link isStatefulCall}, given what a call's facts already read: the words of the tool's name ({@link baseWords})
 * and whether it is a shell.
 */
export function statefulCall(
  name: string,
  args: unknown,
  traits: { stateful?: boolean | undefined } | undefined,
  known?: { words: readonly string[]; shell: boolean },
): boolean {
  if (traits?.stateful !== undefined) return traits.stateful;
  const byItsName = statefulName(name, known);
  if (byItsName !== undefined) return byItsName;
  try {
    if (args === null || typeof args !== "object" || Array.isArray(args)) return false;
    for (const key of Object.getOwnPropertyNames(args)) {
      if (!ACTION_ARGS.includes(key)) continue;
      const value = (args as Record<string, unknown>)[key];
      if (typeof value !== "string") continue;
      if (MOVING_VALUES.has(value.toLowerCase()) || nameWords(value).some((w) => STATEFUL_WORDS.has(w))) return true;
    }
  } catch {
    // Arguments that throw when read (a revoked Proxy, a getter) say nothing.
  }
  return false;
}

/** What a name says of statefulness: `false` (whatever its arguments: `bash`, `update_status`), `true`, or not yet. */
function statefulName(name: string, known?: { words: readonly string[]; shell: boolean }): boolean | undefined {
  if ((known?.shell ?? isShellTool(name)) || isIdempotentTool(name) || isRepeatableTool(name)) return false;
  return (known?.words ?? baseWords(name)).some((w) => STATEFUL_WORDS.has(w)) ? true : undefined;
}

const TIME_WORDS = new Set(["wait", "sleep", "pause", "delay"]);

/**
 * Whether a tool lets time pass (`wait`, `sleep`, `wait_for_job`, `pause`, `delay`, by name): repeating it is
 * waiting longer, never a stuck repeat, and a cycle that contains it (poll, wait, poll, wait) is not stuck even when
 * every round answers the same — the world may move on while it waits.
 *
 * @example
 * ```ts
 * letsTimePass("sleep");          // true
 * letsTimePass("wait_for_build"); // true
 * letsTimePass("get_status");     // false
 * ```
 */
export function letsTimePass(name: string): boolean {
  return passesTime(baseWords(name));
}

/** {@link letsTimePass} by the words of the tool's name ({@link baseWords}). */
export const passesTime = (words: readonly string[]): boolean => words.some((w) => TIME_WORDS.has(w));

/** The words of a tool's name without its namespace: `mcp__ci__get_job_status` → get, job, status. */
export const baseWords = (name: string): string[] => nameWords(baseName(name));

const SHELL_TOOLS = new Set(
  (
    "bash sh shell zsh terminal exec cmd execute_command execute_bash run_command run_shell_command run_terminal_cmd " +
    "run_terminal_command shell_exec"
  ).split(" "),
);
const COMMAND_ARGS = ["command", "cmd", "script", "commandLine", "command_line"] as const;

/** The last segment of a namespaced tool name: `filesystem.read_file`, `mcp__fs__read_file`, `fs/read_file`. */
function baseName(name: string): string {
  if (!name.includes(".") && !name.includes("/") && !name.includes("__") && !name.includes(":")) return name;
  const parts = name.split(/\.|\/|__|:/);
  return parts[parts.length - 1] ?? name;
}

/** Whether a tool name says "I only read" (`read_`, `list_`, `get_`, …, camelCase and namespaced forms too). */
function hasReadOnlyName(name: string): boolean {
  const base = baseName(name);
  return READ_PREFIX.test(base) || READ_NAMES.has(base.toLowerCase());
}

/** Whether a tool is bash-like by its name: `isShellTool("mcp__box__bash")` is true. */
export function isShellTool(name: string): boolean {
  return SHELL_TOOLS.has(baseName(name).toLowerCase());
}

/** The shell command of a bash-like tool call, else undefined: `shellCommandOf("bash", { command: "ls" })` is "ls". */
export function shellCommandOf(name: string, args: unknown): string | undefined {
  return isShellTool(name) ? commandOf(args) : undefined;
}

/** The command line in a shell tool's arguments. */
function commandOf(args: unknown): string | undefined {
  if (typeof args === "string") return args;
  if (args === null || typeof args !== "object") return undefined;
  for (const key of COMMAND_ARGS) {
    const value = (args as Record<string, unknown>)[key];
    if (typeof value === "string") return value;
    if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value.join(" ");
  }
  return undefined;
}

/** A path as the guards compare paths: `normalizePath("./src/../a.py", "/repo")` is "/repo/a.py". */
export function normalizePath(path: string, root: string | undefined): string {
  const resolved = root !== undefined ? posix.resolve(root, path) : posix.normalize(path);
  return resolved.length > 1 && resolved.endsWith("/") ? resolved.slice(0, -1) : resolved;
}

function isPathText(value: unknown): value is string {
  return typeof value === "string" && value !== "" && !value.includes("\0");
}

/** A call's path arguments, read once for its effect and its identity (see {@link readPathArgs}). */
interface PathArgs {
  /** Every path in them, normalized, in argument order: what the call reads or writes. */
  paths: string[];
  /** The arguments identity normalizes (a path, or a list of paths only): each one's value and its value normalized. */
  values: { key: string; value: unknown; normalized: unknown }[];
}

/** A call's own path arguments, normalized: `readPathArgs({ path: "a" }, undefined, "/r").paths` is ["/r/a"]. */
function readPathArgs(args: unknown, pathArgs: readonly string[] | undefined, root: string | undefined): PathArgs {
  const read: PathArgs = { paths: [], values: [] };
  if (args === null || typeof args !== "object" || Array.isArray(args)) return read;
  // The call's own arguments that hold paths (a call has a few arguments, a tool may name many), in `names`' order.
  const names = pathArgs ?? DEFAULT_PATH_ARGS;
  const keys = Object.getOwnPropertyNames(args).filter((key) => names.includes(key));
  if (keys.length > 1) keys.sort((a, b) => names.indexOf(a) - names.indexOf(b));
  for (const key of keys) {
    const value = (args as Record<string, unknown>)[key];
    if (isPathText(value)) {
      const path = normalizePath(value, root);
      read.paths.push(path);
      if (path !== value) read.values.push({ key, value, normalized: path });
    } else if (Array.isArray(value)) {
      const paths = value.filter(isPathText).map((v) => normalizePath(v, root));
      read.paths.push(...paths);
      if (paths.length === value.length) read.values.push({ key, value, normalized: paths });
    }
  }
  return read;
}

/** The arguments with their paths normalized (a copy when one changed): `x` and `<root>/x` are one signature. */
function normalizePathArgs(args: unknown, read: PathArgs): unknown {
  if (read.values.length === 0 || args === null || typeof args !== "object") return args;
  let copy: Record<string, unknown> | undefined;
  for (const { key, value, normalized } of read.values) {
    // Only what is still the call's own argument (not ignored, not dropped as volatile metadata).
    if (!Object.hasOwn(args, key) || (args as Record<string, unknown>)[key] !== value) continue;
    copy ??= { ...(args as Record<string, unknown>) };
    copy[key] = normalized;
  }
  return copy ?? args;
}

/**
 * Whether a tool only reads. Precedence: the per-tool option, then tool metadata (`readOnlyHint`), then the name
 * (`read_`, `list_`, `search_`, `get_`, `find_`, `view_`), then, for bash-like tools, the parsed command.
 * Anything unknown is treated as mutating.
 *
 * @example
 * ```ts
 * isReadOnlyCall("search_in_file", { pattern: "TODO" });     // true
 * isReadOnlyCall("bash", { command: "git status" });          // true
 * isReadOnlyCall("deploy", {}, { tools: { deploy: { readOnly: false } } }); // false
 * ```
 */
export function isReadOnlyCall(name: string, args: unknown, opts: ClassifyOptions = {}): boolean {
  return readOnlyByName(name, opts, ownEntry(opts.tools, name)) ?? readOnlyCommand(shellCommandOf(name, args));
}

/** What the tool's traits, its hint or its name say of {@link isReadOnlyCall}; undefined: its command decides. */
function readOnlyByName(name: string, opts: ClassifyOptions, traits: ToolTraits | undefined): boolean | undefined {
  if (traits?.readOnly !== undefined) return traits.readOnly;
  return ownEntry(opts.readOnlyHints, name) ?? (hasReadOnlyName(name) ? true : undefined);
}

const readOnlyCommand = (command: string | undefined) => command !== undefined && isReadOnlyCommand(command);

/**
 * What a call does to tracked state (see {@link CallEffect}). A shell command is read path-aware: a line that only
 * reads depends on the files it reads, a line that writes known files changes only those (relative paths are
 * resolved against `root`, the agent's working folder; without it they are not known), anything else may change
 * anything.
 *
 * @example
 * ```ts
 * classifyCall("write_to_file", { path: "a.py", content: "" }, { root: "/repo" });
 * // { kind: "write", paths: ["/repo/a.py"], rewrites: ["/repo/a.py"] } (the whole content: a rewrite)
 * classifyCall("bash", { command: "make" }); // { kind: "mutate" }
 * classifyCall("bash", { command: "sed -i 's/a/b/' a.py" }, { root: "/repo" }); // { kind: "write", paths: ["/repo/a.py"] }
 * ```
 */
export function classifyCall(name: string, args: unknown, opts: ClassifyOptions = {}): CallEffect {
  const traits = ownEntry(opts.tools, name);
  const command = shellCommandOf(name, args);
  const paths = command !== undefined ? [] : readPathArgs(args, traits?.pathArgs, opts.root).paths;
  return effectOf(name, args, opts, traits, command, paths);
}

/** {@link classifyCall} given the tool's traits, its command line (a shell's) and the paths in its arguments. */
function effectOf(
  name: string,
  args: unknown,
  opts: ClassifyOptions,
  traits: ToolTraits | undefined,
  command: string | undefined,
  paths: string[],
): CallEffect {
  if (command !== undefined && traits?.readOnly === undefined && ownEntry(opts.readOnlyHints, name) === undefined) {
    return shellEffect(command, opts.root);
  }
  if (readOnlyByName(name, opts, traits) ?? readOnlyCommand(command)) return { kind: "read", paths };
  const invalidates = traits?.invalidates ?? (paths.length > 0 ? "paths" : "all");
  if (invalidates === "none") return { kind: "none" };
  if (invalidates !== "paths" || paths.length === 0) return { kind: "mutate" };
  return givesWholeContent(name, args) ? { kind: "write", paths, rewrites: paths } : { kind: "write", paths };
}

/** Arguments that carry a file's whole new content (`write_file`, `write_to_file`, `create_file`). */
const WHOLE_CONTENT_ARGS: readonly string[] = ["content", "contents", "file_text", "new_content"];

function givesWholeContent(name: string, args: unknown): boolean {
  if (args === null || typeof args !== "object" || /append|insert|edit|diff|patch|replace/i.test(name)) return false;
  const record = args as Record<string, unknown>;
  return WHOLE_CONTENT_ARGS.some((k) => Object.hasOwn(record, k) && typeof record[k] === "string");
}

function shellEffect(command: string, root: string | undefined): CallEffect {
  const { readOnly, changed, reads, rewritten } = commandPaths(command, root ?? null);
  if (readOnly) return { kind: "read", paths: reads ?? [] };
  if (changed === undefined || changed.length === 0) return { kind: "mutate" };
  return rewritten.length > 0
    ? { kind: "write", paths: changed, rewrites: rewritten }
    : { kind: "write", paths: changed };
}

/** Whether `dir` is `path` or one of its ancestor folders (`/a/b` is not an ancestor of `/a/bc`). */
export function isSameOrAncestor(dir: string, path: string): boolean {
  if (dir === path || dir === "/") return true;
  if (dir === ".") return !path.startsWith("/") && !path.startsWith("../") && path !== "..";
  return path.startsWith(`${dir}/`);
}

/** A shell call's arguments with its command's spacing squeezed ({@link squeezeCommand}); a list of words as it is. */
function withSqueezedCommand(args: unknown): unknown {
  if (typeof args === "string") return squeezeCommand(args);
  if (args === null || typeof args !== "object") return args;
  for (const key of COMMAND_ARGS) {
    const value = (args as Record<string, unknown>)[key];
    if (Array.isArray(value) && value.every((v) => typeof v === "string")) return args;
    if (typeof value !== "string") continue;
    const squeezed = squeezeCommand(value);
    return squeezed === value ? args : { ...(args as Record<string, unknown>), [key]: squeezed };
  }
  return args;
}

/** The arguments as identity compares them: ignored and volatile ones dropped, paths and spacing normalized; throws. */
export function identityArgs(
  name: string,
  args: unknown,
  opts: Pick<ClassifyOptions, "tools" | "root"> & { ignoreArgs?: readonly string[] | undefined } = {},
): unknown {
  return identityOf(name, args, opts).args;
}

/** {@link identityArgs}, and whether volatile metadata was dropped from them (`read`: its path arguments, if read). */
function identityOf(
  name: string,
  args: unknown,
  opts: Pick<ClassifyOptions, "tools" | "root"> & { ignoreArgs?: readonly string[] | undefined },
  traits = ownEntry(opts.tools, name),
  read = readPathArgs(args, traits?.pathArgs, opts.root),
  shell = isShellTool(name),
): { args: unknown; stripped: boolean } {
  const given = withoutIgnoredArgs(args, opts.ignoreArgs);
  const kept = withoutVolatileArgs(given, traits?.args);
  const normalized = normalizePathArgs(kept, read);
  const asked = traits?.queryWords === false ? normalized : withQueryWords(name, normalized);
  return { args: shell ? withSqueezedCommand(asked) : asked, stripped: kept !== given };
}

// Words of a tool's name that say it looks something up, and the arguments that hold what it looks up.
const ASKING_WORDS = new Set(["search", "lookup", "query", "retrieve", "find"]);
/** Whether a tool's name says it looks something up (`web_search`, `lookupOrder`, `find_files`). */
export const looksUp = (name: string): boolean => nameWords(name).some((w) => ASKING_WORDS.has(w));
const QUERY_ARGS = ["query", "q", "search", "search_query", "question"];

/** A search's arguments with its question as lower-cased sorted words: a question reworded by order asks nothing new. */
function withQueryWords(name: string, args: unknown): unknown {
  if (args === null || typeof args !== "object" || Array.isArray(args)) return args;
  let copy: Record<string, unknown> | undefined;
  for (const key of QUERY_ARGS) {
    const value = (args as Record<string, unknown>)[key];
    // A quoted phrase's order is the question.
    if (typeof value !== "string" || value.includes('"') || !Object.hasOwn(args, key)) continue;
    if (copy === undefined && !looksUp(name)) return args; // the name last: most calls have no question
    copy ??= { ...(args as Record<string, unknown>) };
    copy[key] = value.toLowerCase().split(/\s+/).filter(Boolean).sort().join(" ");
  }
  return copy ?? args;
}

/**
 * The digest of a call's {@link identityArgs} and its {@link classifyCall} effect (`stripped`: volatile metadata was
 * dropped, so no cached answer is served), and what the name and arguments said on the way: whether the tool is a
 * shell ({@link isShellTool}) and its command line. Never throws: unreadable arguments get a fallback, mutating
 * identity.
 */
export function callIdentity(
  name: string,
  args: unknown,
  opts: ClassifyOptions & { ignoreArgs?: readonly string[] | undefined } = {},
): {
  key: string;
  effect: CallEffect;
  stripped?: "undeclared" | "unknown";
  shell: boolean;
  command?: string | undefined;
} {
  let shell = false; // inside the try: a name that is no string must not make this throw
  try {
    shell = isShellTool(name);
    // The traits and the path arguments read once, for the identity and the effect.
    const traits = ownEntry(opts.tools, name);
    const read = readPathArgs(args, traits?.pathArgs, opts.root);
    const identity = identityOf(name, args, opts, traits, read, shell);
    const key = digest(toolCallSignature(name, identity.args));
    const command = shell ? commandOf(args) : undefined;
    const effect = effectOf(name, args, opts, traits, command, command !== undefined ? [] : read.paths);
    // A shell's arguments are its command line: nothing in them is the call's metadata.
    if (!identity.stripped || shell) return { key, effect, shell, command };
    return { key, effect, stripped: traits?.args === undefined ? "unknown" : "undeclared", shell, command };
  } catch {
    const { key, effect } = unreadableIdentity(name, args);
    return { key, effect, shell };
  }
}
