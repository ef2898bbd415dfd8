/**
 * The directory tree behind `list_files`: one scan of the whole root, honouring `.gitignore` files at every level
 * and a default ignore list; later listings come from the tree, each listed folder (and each folder above it,
 * whose `.gitignore` applies) checked by `lstat` first, so that changes made outside the tools are never listed
 * stale. Folders are only ever reached through real folders from the root (a folder replaced by a symlink is
 * dropped, never followed); FIFOs, sockets and devices are listed with a marker (`name [fifo]`) and never opened;
 * a `.gitignore` is read only when it is a regular file inside the root, under a size cap.
 */
import { type Dirent, lstatSync, readdirSync, realpathSync, type Stats, statSync } from "node:fs";
import { join } from "node:path";
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
  const path = join(folder, ".gitignore");
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

/**
 * Decides, for one scan or refresh, which paths the ignore rules exclude: each folder's `.gitignore` probed and
 * read once, and only when it is a regular file inside the root (see {@link readRegularFileSync}).
 */
class IgnoreRules {
  private readonly chains = new Map<string, { dir: string; matcher: Ignore }[]>();
  private readonly probes = new Map<string, GitignoreProbe>();
  private readonly notes = new Map<string, string>();
  private readonly defaults: Set<string>;

  constructor(
    private readonly root: string,
    defaults: readonly string[],
    private readonly maxBytes: number,
  ) {
    this.defaults = new Set(defaults);
  }

  /** The folder's `.gitignore` as probed by this scan (once per folder). */
  probe(dir: string): GitignoreProbe {
    let probe = this.probes.get(dir);
    if (probe === undefined) {
      probe = probeGitignore(this.root, dir === "" ? this.root : join(this.root, dir));
      this.probes.set(dir, probe);
    }
    return probe;
  }

  /** Why the folder's `.gitignore` is not applied, if it is not. */
  note(dir: string): string | undefined {
    this.chain(dir);
    return this.notes.get(dir);
  }

  /** The folder's rules: its `.gitignore` read, when it is a regular file inside the root and under the cap. */
  private rules(dir: string): Ignore | undefined {
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
    return ignore().add(read.bytes.toString("utf8"));
  }

  /** The `.gitignore` matchers that apply inside `dir`, deepest first (memoised per folder). */
  private chain(dir: string): { dir: string; matcher: Ignore }[] {
    let chain = this.chains.get(dir);
    if (chain === undefined) {
      const inherited = dir === "" ? [] : this.chain(parentOf(dir));
      const matcher = this.rules(dir);
      chain = matcher === undefined ? inherited : [{ dir, matcher }, ...inherited];
      this.chains.set(dir, chain);
    }
    return chain;
  }

  /**
   * Whether `rel` (a file or, with `isDir`, a folder) is ignored: by the defaults, or by the nearest `.gitignore`
   * with an opinion on it — a deeper file's rules (including `!` negations) override a shallower one's, as in git.
   */
  ignores(rel: string, isDir: boolean, name = nameOf(rel), parent = parentOf(rel)): boolean {
    if (this.defaults.has(name)) return true;
    for (const { dir, matcher } of this.chain(parent)) {
      const sub = dir === "" ? rel : rel.slice(dir.length + 1);
      const verdict = matcher.test(isDir ? `${sub}/` : sub);
      if (verdict.ignored) return true;
      if (verdict.unignored) return false;
    }
    return false;
  }
}

/**
 * Reads one folder of the tree: `lstat` first (it must be a real folder, not a symlink to one: folders are only
 * reached through real folders from the root), then its entries, filtered by the ignore rules. The stats are
 * taken before the entries are read, so a change made meanwhile is seen by the next check.
 */
function readFolder(
  root: string,
  rel: string,
  rules: IgnoreRules,
  now: number,
): { node: DirNode; subfolders: string[] } | undefined {
  const path = rel === "" ? root : join(root, rel);
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (stat === undefined || !stat.isDirectory()) return undefined;
  const gitignore = rules.probe(rel).sig;
  let dirents: Dirent[];
  try {
    dirents = readdirSync(path, { withFileTypes: true });
  } catch {
    return undefined;
  }
  const entries: string[] = [];
  const subfolders: string[] = [];
  for (const d of dirents) {
    const kind = kindOf(d);
    const isDir = kind === "folder";
    const child = joinRel(rel, d.name);
    if (rules.ignores(child, isDir, d.name, rel)) continue;
    if (isDir) subfolders.push(child);
    entries.push(isDir ? `${d.name}/` : `${d.name}${specialMarker(kind)}`);
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
    const stat = lstatSync(rel === "" ? root : join(root, rel), { throwIfNoEntry: false });
    if (stat === undefined || !stat.isDirectory()) return "gone";
    if (rulesChanged(rel, n)) return "rules";
    if (n.ctimeMs === undefined || stat.ctimeMs !== n.ctimeMs || stat.mtimeMs !== n.mtimeMs || stat.ino !== n.ino) {
      return "entries";
    }
    return racy(n.scannedAt, Math.max(stat.mtimeMs, stat.ctimeMs)) ? "entries" : "same";
  };
  const drop = (rel: string) => {
    for (const old of subtree(tree, rel)) changes[old] = null;
  };
  const rescanSubtree = (rel: string) => {
    drop(rel);
    Object.assign(changes, scanWith(root, rel, options, rules) ?? {});
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
  const folders = recursive ? subtree(tree, dir) : [dir];
  for (const rel of folders.sort()) {
    if (rel in changes) continue;
    const n = tree[rel];
    if (n === undefined) continue;
    const state = changed(rel, n);
    if (state === "same") continue;
    if (state === "gone") {
      drop(rel);
      continue;
    }
    if (state === "rules") {
      rescanSubtree(rel);
      continue;
    }
    const folder = readFolder(root, rel, rules, options.now);
    if (folder === undefined) {
      drop(rel);
      continue;
    }
    changes[rel] = folder.node;
    const before = new Set(n.entries.filter((e) => e.endsWith("/")));
    const after = new Set(folder.node.entries.filter((e) => e.endsWith("/")));
    for (const gone of before) if (!after.has(gone)) drop(joinRel(rel, gone.slice(0, -1)));
    for (const added of after) {
      if (!before.has(added))
        Object.assign(changes, scanWith(root, joinRel(rel, added.slice(0, -1)), options, rules) ?? {});
    }
  }
  if (recursive) scanUnscanned(root, tree, folders, changes, options, rules);
  return changes;
}

/**
 * Scans, into `changes`, every subfolder of `folders` that the tree lists but has no node for (one dropped by an
 * invalidation), so that a recursive listing shows what is below it.
 */
function scanUnscanned(
  root: string,
  tree: DirTree,
  folders: readonly string[],
  changes: Record<string, DirNode | null>,
  options: ScanOptions,
  rules: IgnoreRules,
): void {
  for (const rel of folders) {
    const node = rel in changes ? changes[rel] : tree[rel];
    for (const entry of node?.entries ?? []) {
      if (!entry.endsWith("/")) continue;
      const child = joinRel(rel, entry.slice(0, -1));
      if (!(child in tree) && !(child in changes)) Object.assign(changes, scanWith(root, child, options, rules) ?? {});
    }
  }
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
    if (node?.note !== undefined) notes.push(node.note);
    for (const entry of node?.entries ?? []) {
      total += 1;
      if (lines.length < limit) lines.push(`${prefix}${entry}`);
      if (recursive && entry.endsWith("/")) walk(joinRel(rel, entry.slice(0, -1)), `${prefix}${entry}`);
    }
  };
  walk(dir, "");
  if (total === 0) lines.push("(empty folder)");
  if (total > limit) lines.push(`... and ${total - limit} more entries (list a subfolder to see them)`);
  for (const note of notes) lines.push(`(note: ${note})`);
  return lines.join("\n");
}
