/**
 * The directory tree behind `list_files`: one scan of the whole root, honouring `.gitignore` files at every level
 * and a default ignore list; later listings come from the tree, each listed folder (and each folder above it,
 * whose `.gitignore` applies) checked by `lstat` first, so that changes made outside the tools are never listed
 * stale. Folders are only ever reached through real folders from the root (a folder replaced by a symlink is
 * dropped, never followed); FIFOs, sockets and devices are listed with a marker (`name [fifo]`) and never opened;
 * a `.gitignore` is read only when it is a regular file inside the root, under a size cap.
 *
 * What keeps the first scan close to a bare directory walk (one `readdir` and one `lstat` per folder): a folder's
 * `.gitignore` is probed only when its entries hold one; the default names are told by a set; and the `ignore`
 * package judges only the names that a rule could match at all (see `nameCondition`), every other verdict
 * following from the folder's. A later check of an unchanged folder that had no `.gitignore` is its one `lstat`:
 * a `.gitignore` added since would have changed the folder's ctime, which no one can set back.
 */
import { type Dirent, lstatSync, readdirSync, realpathSync, type Stats, statSync } from "node:fs";
import { join, sep } from "node:path";
import ignore, { type Ignore } from "ignore";
import { type IoProblem, kindOf, readRegularFileSync, specialMarker } from "./io.js";
import { realPathInside } from "./sandbox.js";

/**
 * One scanned folder: its entries (folders end with `/`, FIFOs, sockets and devices with a marker such as
 * ` [fifo]`) and what proves they are current.
 *
 * @example
 * ```ts
 * const src: DirNode | undefined = state.fileCache.tree?.["src"]; // { entries, mtimeMs, ctimeMs, ... }
 * ```
 */
export interface DirNode {
  /** The folder's entries, sorted (folders end with `/`). */
  entries: string[];
  /** The folder's modification time when it was scanned (ms). */
  mtimeMs: number;
  /**
   * The folder's status-change time, which no user can set back (a folder whose mtime was restored after a change
   * is still read again). Absent in a tree stored by an older version: such a folder is read again.
   */
  ctimeMs?: number;
  /** The folder's inode number (a folder replaced by another has a new one). */
  ino?: number;
  /**
   * What the folder's `.gitignore` was when the folder was scanned (a signature of its stat, and its target's when
   * it is a symlink), or null when it has none: an input of every listing below the folder. Absent in a tree
   * stored by an older version (then the subtree is scanned again).
   */
  gitignore?: string | null;
  /** When it was scanned (ms): a folder changed within the racy window of this time is scanned again. */
  scannedAt: number;
  /** Why the folder's `.gitignore` was not applied (a FIFO, too large, a link outside the root, ...). */
  note?: string;
}

/**
 * The tree: folders by path relative to the root (`""` is the root), `/`-separated.
 *
 * @example
 * ```ts
 * const folders = Object.keys((state.fileCache.tree ?? {}) satisfies DirTree);
 * ```
 */
export type DirTree = Record<string, DirNode>;

/**
 * Folders never listed, whatever the `.gitignore` files say.
 *
 * @example
 * ```ts
 * DEFAULT_IGNORED.includes("node_modules"); // true
 * ```
 */
export const DEFAULT_IGNORED: readonly string[] = [
  ".git",
  "node_modules",
  "__pycache__",
  ".venv",
  "venv",
  ".mypy_cache",
  ".pytest_cache",
  ".tox",
  ".DS_Store",
];

/**
 * The folder of a `/`-separated path relative to the root (`""` for the root itself).
 *
 * @example
 * ```ts
 * parentOf("src/app.ts"); // "src"
 * parentOf("app.ts");     // ""
 * ```
 */
export const parentOf = (rel: string) => (rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "");
const nameOf = (rel: string) => rel.slice(rel.lastIndexOf("/") + 1);
const joinRel = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`);
/**
 * The absolute path of `rel` (a relative path of the tree, already normal) below the folder `dir`: what `join`
 * gives, without its normalisation, which is most of the cost of a refresh's check of a folder.
 */
const below = (dir: string, rel: string) => (dir.endsWith(sep) ? `${dir}${rel}` : `${dir}${sep}${rel}`);

/** Options of a scan (see {@link scanTree}). */
export interface ScanOptions {
  ignored: readonly string[];
  /** Entries beyond which the scan gives up (returns undefined). */
  entryCap: number;
  /** The time of the scan (ms), recorded in each node. */
  now: number;
  /** Largest `.gitignore` read, in bytes (a larger one is not applied, with a note). Default 1 MB. */
  maxIgnoreFileBytes?: number;
}

/** Options of a refresh (see {@link refreshTree}). */
export interface RefreshOptions extends ScanOptions {
  /** A folder (or `.gitignore`) changed within this many ms of its scan is read again. */
  racyWindowMs: number;
}

const DEFAULT_MAX_IGNORE_FILE_BYTES = 1_000_000;

/** A stat as a signature: what changes when the file is replaced, rewritten or touched. */
const signature = (s: Stats) => `${kindOf(s)}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;

/** What a folder's `.gitignore` is now: its signature, when it last changed, and where to read it from. */
interface GitignoreProbe {
  /** null when the folder has none. */
  sig: string | null;
  /** The latest mtime or ctime of the file (and of its link): for the racy window. */
  changedAt: number;
  /** Its real path, when it resolves inside the root. */
  real?: string;
}

/**
 * Probes `folder/.gitignore` without following it anywhere outside the root: `lstat`, and when it is a symlink,
 * its real path (which must be inside the root) and that file's `lstat`.
 */
function probeGitignore(root: string, folder: string): GitignoreProbe {
  const path = below(folder, ".gitignore");
  const link = lstatSync(path, { throwIfNoEntry: false });
  if (link === undefined) return { sig: null, changedAt: 0 };
  if (!link.isSymbolicLink())
    return { sig: signature(link), changedAt: Math.max(link.mtimeMs, link.ctimeMs), real: path };
  const real = realPathInside(root, path);
  const target = real === undefined ? undefined : lstatSync(real, { throwIfNoEntry: false });
  const changedAt = Math.max(link.mtimeMs, link.ctimeMs, target?.mtimeMs ?? 0, target?.ctimeMs ?? 0);
  const sig = `${signature(link)}>${real === undefined ? "outside" : `${real}:${target ? signature(target) : "missing"}`}`;
  return real === undefined ? { sig, changedAt } : { sig, changedAt, real };
}

/** Why a `.gitignore` was not applied, for the note of its folder. */
function ignoreNote(dir: string, problem: IoProblem | "outside"): string | undefined {
  const file = dir === "" ? ".gitignore" : `${dir}/.gitignore`;
  const why = (() => {
    if (problem === "outside") return "it links outside the project root";
    switch (problem.kind) {
      case "missing":
        return undefined; // a dangling link: as git, no rules
      case "folder":
        return "it is a folder";
      case "special":
        return `it is a ${problem.what}, not a regular file`;
      case "too-large":
        return `it has ${problem.size} bytes, over the limit of ${problem.limit} (maxIgnoreFileBytes)`;
      case "outside":
        return "it is no longer inside the project root";
      default:
        return "it cannot be read";
    }
  })();
  return why === undefined ? undefined : `${file} is not applied: ${why}.`;
}

/** The characters of a name part that no `.gitignore` pattern gives a meaning: a literal run of them stays literal. */
const LITERAL = /^[A-Za-z0-9._-]+$/;
const LITERAL_RUNS = /[A-Za-z0-9._-]+/g;
const escapeLiteral = (s: string) => s.replaceAll(".", "\\.");

/**
 * A necessary condition on an entry's name for one `.gitignore` line to match it, as a regular expression source
 * (tested with the `i` flag, as the `ignore` package matches): `undefined` when the line is no rule (blank, a
 * comment), `null` when any name may match (no literal part, or a bracket expression).
 *
 * A pattern matches a path only through its last segment matching the path's last one (git's rules, and the
 * `ignore` package's: each pattern ends at the end of the path, or at a slash that ends it), so the condition is
 * taken from the last segment: a literal name (`node_modules/`, `a/.env`) must equal the name, `*.log` is a
 * suffix, `tmp*` a prefix, and otherwise the longest literal run (`.lo` of `*.lo?`) must occur in it. A line this
 * does not understand (an escape, a bracket) only weakens the condition, never the result: every name that passes
 * it is still matched by the `ignore` package itself.
 */
function nameCondition(line: string, first: boolean): string | null | undefined {
  let body = first && line.charCodeAt(0) === 0xfeff ? line.slice(1) : line;
  if (body.startsWith("#")) return undefined;
  if (body.startsWith("!")) body = body.slice(1);
  let end = body.length;
  while (end > 0 && body[end - 1] === " ") end -= 1;
  body = body.slice(0, end);
  if (body === "") return undefined;
  if (body.endsWith("/")) body = body.slice(0, -1);
  const last = body.slice(body.lastIndexOf("/") + 1);
  if (last.includes("[")) return null;
  if (LITERAL.test(last)) return `^${escapeLiteral(last)}$`;
  if (last.startsWith("*") && LITERAL.test(last.slice(1))) return `${escapeLiteral(last.slice(1))}$`;
  if (last.endsWith("*") && LITERAL.test(last.slice(0, -1))) return `^${escapeLiteral(last.slice(0, -1))}`;
  let longest = "";
  for (const run of last.match(LITERAL_RUNS) ?? []) if (run.length > longest.length) longest = run;
  return longest === "" ? null : escapeLiteral(longest);
}

/**
 * The condition of a whole `.gitignore` (see {@link nameCondition}): a source no name matches when it has no rule,
 * `null` when any name may match.
 */
function fileCondition(text: string): string | null {
  const sources: string[] = [];
  // Lines as the ignore package splits them: one CR before each LF, and at the very end, is dropped.
  const lines = (text.endsWith("\r") ? text.slice(0, -1) : text).split(/\r?\n/);
  for (const [i, line] of lines.entries()) {
    const source = nameCondition(line, i === 0);
    if (source === null) return null;
    if (source !== undefined) sources.push(source);
  }
  return sources.length === 0 ? "(?!)" : sources.join("|");
}

/** One applied `.gitignore`: its folder, its rules, and what a name must be like for a rule to match it. */
interface Matcher {
  dir: string;
  matcher: Ignore;
  /** Null when any name may match. */
  condition: RegExp | null;
  /** Its source, for the condition of a chain. */
  source: string | null;
}

/** The `.gitignore` files that apply inside a folder, deepest first, and one condition for them all. */
interface Chain {
  matchers: Matcher[];
  /** A name that fails it is matched by no rule of any of them; null when every name must be matched. */
  condition: RegExp | null;
}

/** How one folder's entries are judged (see {@link IgnoreRules.folder}). */
interface FolderRules {
  chain: Chain;
  /** The folder relative to each matcher's folder (`""` for its own), in the chain's order. */
  subs: string[];
  /** Whether each matcher excludes the folder itself (by a rule, or one excluding a folder above it). */
  excluded: boolean[];
  /** Whether any does: then every entry that no rule matches by itself is excluded too. */
  anyExcluded: boolean;
}

/**
 * Decides, for one scan or refresh, which paths the ignore rules exclude: each folder's `.gitignore` probed and
 * read once, and only when it is a regular file inside the root (see {@link readRegularFileSync}).
 *
 * A path is excluded by the defaults (by name), or by the nearest `.gitignore` with an opinion on it — a deeper
 * file's rules (including `!` negations) override a shallower one's; each file's opinion is the `ignore` package's
 * `test` (its last matching rule, or a folder above it that the file excludes). That verdict is computed exactly,
 * but only for the names that can match a rule at all (see {@link nameCondition}): for any other name it is known
 * without matching — excluded exactly when a file of the chain excludes the folder itself.
 */
class IgnoreRules {
  private readonly chains = new Map<string, Chain>();
  private readonly folders = new Map<string, FolderRules>();
  private readonly probes = new Map<string, GitignoreProbe>();
  private readonly notes = new Map<string, string>();
  private readonly defaults: ReadonlySet<string>;
  /** The first characters of the default names: most names start with another, and need no lookup. */
  private readonly defaultStarts: ReadonlySet<number>;

  constructor(
    private readonly root: string,
    defaults: readonly string[],
    private readonly maxBytes: number,
  ) {
    this.defaults = new Set(defaults);
    this.defaultStarts = new Set(defaults.map((name) => name.charCodeAt(0)));
  }

  /** Whether `name` is one of the default names, never listed. */
  isDefault(name: string): boolean {
    return this.defaultStarts.has(name.charCodeAt(0)) && this.defaults.has(name);
  }

  /** The folder's `.gitignore` as probed by this scan (once per folder). */
  probe(dir: string): GitignoreProbe {
    let probe = this.probes.get(dir);
    if (probe === undefined) {
      probe = probeGitignore(this.root, dir === "" ? this.root : below(this.root, dir));
      this.probes.set(dir, probe);
    }
    return probe;
  }

  /**
   * Records that the folder has no `.gitignore` (its entries, just read, hold none), unless it was probed already:
   * one that appears later changes the folder's ctime, so the next check of the folder sees it.
   */
  absent(dir: string): void {
    if (!this.probes.has(dir)) this.probes.set(dir, { sig: null, changedAt: 0 });
  }

  /** Why the folder's `.gitignore` is not applied, if it is not. */
  note(dir: string): string | undefined {
    this.chain(dir);
    return this.notes.get(dir);
  }

  /** The folder's rules: its `.gitignore` read, when it is a regular file inside the root and under the cap. */
  private rules(dir: string): Matcher | undefined {
    const probe = this.probe(dir); // taken before the read: a change made while reading is seen by the next check
    if (probe.sig === null) return undefined;
    if (probe.real === undefined) {
      const note = ignoreNote(dir, "outside");
      if (note !== undefined) this.notes.set(dir, note);
      return undefined;
    }
    const read = readRegularFileSync(probe.real, this.root, this.maxBytes);
    if (!read.ok) {
      const note = ignoreNote(dir, read.problem);
      if (note !== undefined) this.notes.set(dir, note);
      return undefined;
    }
    const text = read.bytes.toString("utf8");
    const source = fileCondition(text);
    if (source === "(?!)") return undefined; // no rule: it never has an opinion
    const condition = source === null ? null : new RegExp(source, "i");
    return { dir, matcher: ignore().add(text), condition, source };
  }

  /** The `.gitignore` matchers that apply inside `dir`, deepest first (memoised per folder). */
  private chain(dir: string): Chain {
    let chain = this.chains.get(dir);
    if (chain === undefined) {
      const inherited = dir === "" ? { matchers: [], condition: null } : this.chain(parentOf(dir));
      const own = this.rules(dir);
      if (own === undefined) chain = inherited;
      else {
        const matchers = [own, ...inherited.matchers];
        const sources = matchers.map((m) => m.source);
        const condition = sources.includes(null) ? null : new RegExp(sources.join("|"), "i");
        chain = { matchers, condition };
      }
      this.chains.set(dir, chain);
    }
    return chain;
  }

  /** How the entries of `dir` are judged (memoised per folder). */
  folder(dir: string): FolderRules {
    let rules = this.folders.get(dir);
    if (rules !== undefined) return rules;
    const chain = this.chain(dir);
    const above = dir === "" || chain.matchers.length === 0 ? undefined : this.folder(parentOf(dir));
    const name = nameOf(dir);
    const subs: string[] = [];
    const excluded: boolean[] = [];
    for (const m of chain.matchers) {
      const sub = m.dir === dir ? "" : m.dir === "" ? dir : dir.slice(m.dir.length + 1);
      subs.push(sub);
      if (sub === "") {
        excluded.push(false);
        continue;
      }
      // As the ignore package decides it (a folder excluded by a rule, or below an excluded one), with the test
      // left out where no rule can match the folder's name: then it is excluded as its parent is.
      const fromAbove = above?.excluded[above.chain.matchers.indexOf(m)];
      const test = fromAbove === undefined || m.condition === null || m.condition.test(name);
      excluded.push(test ? m.matcher.test(`${sub}/`).ignored : fromAbove);
    }
    rules = { chain, subs, excluded, anyExcluded: excluded.includes(true) };
    this.folders.set(dir, rules);
    return rules;
  }

  /**
   * Whether the entry `name` of the folder judged by `folder` (a file or, with `isDir`, a folder) is excluded by
   * the `.gitignore` files (the defaults are the caller's).
   */
  ignores(folder: FolderRules, name: string, isDir: boolean): boolean {
    const { chain } = folder;
    if (chain.condition !== null && !chain.condition.test(name)) return folder.anyExcluded;
    for (const [i, { matcher }] of chain.matchers.entries()) {
      const sub = folder.subs[i] as string;
      const path = sub === "" ? name : `${sub}/${name}`;
      const verdict = matcher.test(isDir ? `${path}/` : path);
      if (verdict.ignored) return true;
      if (verdict.unignored) return false;
    }
    return false;
  }
}

/**
 * Reads one folder of the tree: `lstat` first (it must be a real folder, not a symlink to one: folders are only
 * reached through real folders from the root), then its entries, filtered by the ignore rules. The stats are
 * taken before the entries are read, so a change made meanwhile is seen by the next check; the folder's
 * `.gitignore` is probed only when the entries hold one (one added since changes the folder's ctime).
 */
function readFolder(
  root: string,
  rel: string,
  rules: IgnoreRules,
  now: number,
): { node: DirNode; subfolders: string[] } | undefined {
  const path = rel === "" ? root : below(root, rel);
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (stat === undefined || !stat.isDirectory()) return undefined;
  let dirents: Dirent[];
  try {
    dirents = readdirSync(path, { withFileTypes: true });
  } catch {
    return undefined;
  }
  let listed = false;
  for (const d of dirents) {
    if (d.name === ".gitignore") {
      listed = true;
      break;
    }
  }
  if (!listed) rules.absent(rel);
  const gitignore = rules.probe(rel).sig;
  const folder = rules.folder(rel);
  const judged = folder.chain.matchers.length > 0;
  const entries: string[] = [];
  const subfolders: string[] = [];
  for (const d of dirents) {
    const name = d.name;
    if (rules.isDefault(name)) continue;
    if (d.isFile()) {
      if (judged && rules.ignores(folder, name, false)) continue;
      entries.push(name);
    } else if (d.isDirectory()) {
      if (judged && rules.ignores(folder, name, true)) continue;
      entries.push(`${name}/`);
      subfolders.push(rel === "" ? name : `${rel}/${name}`);
    } else {
      if (judged && rules.ignores(folder, name, false)) continue;
      entries.push(`${name}${specialMarker(kindOf(d))}`);
    }
  }
  entries.sort();
  const note = rules.note(rel);
  const node: DirNode = {
    entries,
    mtimeMs: stat.mtimeMs,
    ctimeMs: stat.ctimeMs,
    ino: stat.ino,
    gitignore,
    scannedAt: now,
    ...(note === undefined ? {} : { note }),
  };
  return { node, subfolders };
}

/** Whether `rel` is a real folder below the root: no symlink on the way (the tree never goes through one). */
function isRealFolder(root: string, rel: string): boolean {
  if (rel === "") return true;
  const path = join(root, rel);
  try {
    return realpathSync.native(path) === path && statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Scans the folder `from` (relative to `root`, `""` for the root; it must be a real folder) and everything below
 * it, folder by folder (never through a symlink). Returns `undefined` when there are more than `entryCap` entries
 * (the scan stops then).
 *
 * @example
 * ```ts
 * const tree = scanTree("/repo", "", { ignored: DEFAULT_IGNORED, entryCap: 100_000, now: Date.now() });
 * tree?.["src"]?.entries; // ["app.ts", "utils/"]
 * ```
 */
export function scanTree(root: string, from: string, options: ScanOptions): DirTree | undefined {
  const rules = new IgnoreRules(root, options.ignored, options.maxIgnoreFileBytes ?? DEFAULT_MAX_IGNORE_FILE_BYTES);
  return scanWith(root, from, options, rules);
}

function scanWith(root: string, from: string, options: ScanOptions, rules: IgnoreRules): DirTree | undefined {
  const tree: DirTree = {};
  if (!isRealFolder(root, from)) return tree;
  let count = 0;
  const pending = [from];
  for (let rel = pending.pop(); rel !== undefined; rel = pending.pop()) {
    const folder = readFolder(root, rel, rules, options.now);
    if (folder === undefined) continue; // gone meanwhile: its parent's ctime has changed, so it is read again
    count += folder.node.entries.length;
    if (count > options.entryCap) return undefined;
    tree[rel] = folder.node;
    pending.push(...folder.subfolders);
  }
  return tree;
}

/** Folders of `tree` under `dir` (itself included). */
function subtree(tree: DirTree, dir: string): string[] {
  return Object.keys(tree).filter((rel) => rel === dir || dir === "" || rel.startsWith(`${dir}/`));
}

/**
 * Brings the part of the tree a listing needs up to date. Every folder in it is checked with `lstat` (still a real
 * folder; same mtime, ctime and inode; not changed within the racy window of its scan; the same `.gitignore`), and
 * so is every folder above it, whose `.gitignore` applies too. A changed folder is read again, a new subfolder
 * scanned, a removed one (or one replaced by a symlink) dropped, a changed, added or removed `.gitignore` rescans
 * the subtree it governs. Returns the folders to replace (null = removed), or nothing when the tree was current.
 *
 * @example
 * ```ts
 * const options = { ignored: DEFAULT_IGNORED, entryCap: 100_000, now: Date.now(), racyWindowMs: 2000 };
 * const changes = refreshTree("/repo", tree, "src", false, options); // {} when src is unchanged
 * ```
 */
export function refreshTree(
  root: string,
  tree: DirTree,
  dir: string,
  recursive: boolean,
  options: RefreshOptions,
): Record<string, DirNode | null> {
  const rules = new IgnoreRules(root, options.ignored, options.maxIgnoreFileBytes ?? DEFAULT_MAX_IGNORE_FILE_BYTES);
  const changes: Record<string, DirNode | null> = {};
  const racy = (scannedAt: number, changedAt: number) => scannedAt - changedAt <= options.racyWindowMs;
  const rulesChanged = (rel: string, n: DirNode): boolean => {
    if (n.gitignore === undefined) return true; // a node stored by an older version
    const probe = rules.probe(rel);
    return probe.sig !== n.gitignore || (probe.sig !== null && racy(n.scannedAt, probe.changedAt));
  };
  const changed = (rel: string, n: DirNode): "same" | "entries" | "rules" | "gone" => {
    const stat = lstatSync(rel === "" ? root : below(root, rel), { throwIfNoEntry: false });
    if (stat === undefined || !stat.isDirectory()) return "gone";
    const same =
      n.ctimeMs !== undefined &&
      stat.ctimeMs === n.ctimeMs &&
      stat.mtimeMs === n.mtimeMs &&
      stat.ino === n.ino &&
      !racy(n.scannedAt, Math.max(stat.mtimeMs, stat.ctimeMs));
    // A folder that had no .gitignore and whose entries are unchanged (its ctime, which no one can set back, is the
    // same, outside the racy window) still has none: no second lstat. One that had one is probed: its content can
    // change without the folder changing.
    if (same && n.gitignore === null) return "same";
    if (rulesChanged(rel, n)) return "rules";
    return same ? "same" : "entries";
  };
  const drop = (rel: string) => {
    for (const old of subtree(tree, rel)) changes[old] = null;
  };
  const rescanSubtree = (rel: string) => {
    drop(rel);
    Object.assign(changes, scanWith(root, rel, options, rules) ?? {});
  };
  /** Checks one folder, recording what changed; returns its current node (undefined when dropped or rescanned). */
  const check = (rel: string, n: DirNode): DirNode | undefined => {
    const state = changed(rel, n);
    if (state === "same") return n;
    if (state === "gone") {
      drop(rel);
      return undefined;
    }
    if (state === "rules") {
      rescanSubtree(rel);
      return undefined;
    }
    const folder = readFolder(root, rel, rules, options.now);
    if (folder === undefined) {
      drop(rel);
      return undefined;
    }
    changes[rel] = folder.node;
    const before = new Set(subfolderKeys(n, rel));
    const after = new Set(subfolderKeys(folder.node, rel));
    for (const gone of before) if (!after.has(gone)) drop(gone);
    for (const added of after)
      if (!before.has(added)) Object.assign(changes, scanWith(root, added, options, rules) ?? {});
    return folder.node;
  };
  // Folders above first: their .gitignore rules apply to everything below. One the tree does not hold (the listed
  // folder is inside an ignored one) cannot be checked: the listed folder is then scanned again.
  for (let a = dir; a !== ""; ) {
    a = parentOf(a);
    const n = tree[a];
    if (n === undefined) {
      rescanSubtree(dir);
      return changes;
    }
    if (rulesChanged(a, n)) {
      rescanSubtree(a);
      return changes;
    }
  }
  // The listed folder, and with `recursive` every folder the listing shows, parents first: a folder's check may
  // rescan or drop what is below it. A subfolder listed without a node (dropped by an invalidation) is scanned.
  const pending = [dir];
  for (let rel = pending.pop(); rel !== undefined; rel = pending.pop()) {
    if (rel in changes) continue;
    const n = tree[rel];
    if (n === undefined) {
      if (rel !== dir) Object.assign(changes, scanWith(root, rel, options, rules) ?? {});
      continue;
    }
    const current = check(rel, n);
    if (current === undefined || !recursive) continue;
    const children = subfolderKeys(current, rel);
    for (let i = children.length - 1; i >= 0; i -= 1) pending.push(children[i] as string);
  }
  return changes;
}

/** Whether an entry of a {@link DirNode} is a folder (it ends with `/`). */
const isFolderEntry = (entry: string) => entry.charCodeAt(entry.length - 1) === 47;

/** The subfolders a node lists, as paths of the tree, memoised by entries array (never changed once stored). */
const subfolderMemo = new WeakMap<readonly string[], { rel: string; length: number; keys: readonly string[] }>();

/**
 * The subfolders that the node of the folder `rel` lists, as paths relative to the root, in the order of its
 * entries. Memoised, so that a check of an unchanged tree looks at no entry, and looks up the same (already
 * hashed) strings each time.
 */
function subfolderKeys(node: DirNode, rel: string): readonly string[] {
  const { entries } = node;
  const memo = subfolderMemo.get(entries);
  if (memo !== undefined && memo.rel === rel && memo.length === entries.length) return memo.keys;
  const keys: string[] = [];
  for (let i = 0; i < entries.length; i += 1) {
    const entry = entries[i] as string;
    if (isFolderEntry(entry)) keys.push(joinRel(rel, entry.slice(0, -1)));
  }
  subfolderMemo.set(entries, { rel, length: entries.length, keys });
  return keys;
}

/**
 * Renders a listing from the tree: the folder's entries, or with `recursive` every path below it (relative to
 * the folder), capped at `limit` lines with a clear "N more" line; then a note for each `.gitignore` that applies
 * to it but was not applied (a FIFO, too large, a link outside the root).
 *
 * @example
 * ```ts
 * renderListing(tree, "src", false, 500); // "app.ts\nutils/"
 * ```
 */
export function renderListing(tree: DirTree, dir: string, recursive: boolean, limit: number): string {
  const lines: string[] = [];
  const notes: string[] = [];
  for (let a = dir; a !== ""; ) {
    a = parentOf(a);
    const note = tree[a]?.note;
    if (note !== undefined) notes.unshift(note);
  }
  let total = 0;
  const walk = (rel: string, prefix: string) => {
    const node = tree[rel];
    if (node === undefined) return;
    if (node.note !== undefined) notes.push(node.note);
    const { entries } = node;
    total += entries.length;
    if (lines.length >= limit) {
      // Past the limit only the count and the notes are left: no entry is looked at, no line built.
      if (recursive) for (const key of subfolderKeys(node, rel)) walk(key, "");
      return;
    }
    for (let i = 0; i < entries.length; i += 1) {
      const entry = entries[i] as string;
      const line = lines.length < limit ? prefix + entry : undefined;
      if (line !== undefined) lines.push(line);
      if (recursive && isFolderEntry(entry)) walk(joinRel(rel, entry.slice(0, -1)), line ?? "");
    }
  };
  walk(dir, "");
  if (total === 0) lines.push("(empty folder)");
  if (total > limit) lines.push(`... and ${total - limit} more entries (list a subfolder to see them)`);
  for (const note of notes) lines.push(`(note: ${note})`);
  return lines.join("\n");
}
