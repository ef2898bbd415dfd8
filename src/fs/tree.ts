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
import { lstatSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { readFolderAt } from "./anchored.js";
import { IgnoreRules } from "./ignore-rules.js";
import { kindOf, specialMarker } from "./io.js";
import { below, joinRel, parentOf } from "./tree-paths.js";

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

/** Options of a scan (see {@link scanTree}). */
interface ScanOptions {
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

/**
 * Reads one folder of the tree: opened without following a symlink and checked to be the folder at its path (folders
 * are only reached through real folders from the root; one swapped for a symlink, even during the read, is never
 * read through: see `readFolderAt`), then its entries, filtered by the ignore rules. The stats are taken before the
 * entries are read, so a change made meanwhile is seen by the next check; the folder's
 * `.gitignore` is probed only when the entries hold one (one added since changes the folder's ctime).
 */
function readFolder(
  root: string,
  rel: string,
  rules: IgnoreRules,
  now: number,
): { node: DirNode; subfolders: string[] } | undefined {
  // Opened without following a symlink and checked to be the folder at this path, then read through the open folder.
  const read = readFolderAt(rel === "" ? root : below(root, rel));
  if (read === undefined) return undefined;
  const { stat, dirents } = read;
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
  const refresh = new TreeRefresh(root, tree, options, rules);
  if (refresh.checkAbove(dir)) refresh.checkListed(dir, recursive);
  return refresh.changes;
}

/** One run of {@link refreshTree}: the tree it checks, the rules it reads, and the changes it records. */
class TreeRefresh {
  /** The folders to replace (null = removed). */
  readonly changes: Record<string, DirNode | null> = {};

  constructor(
    private readonly root: string,
    private readonly tree: DirTree,
    private readonly options: RefreshOptions,
    private readonly rules: IgnoreRules,
  ) {}

  private racy(scannedAt: number, changedAt: number): boolean {
    return scannedAt - changedAt <= this.options.racyWindowMs;
  }

  private rulesChanged(rel: string, n: DirNode): boolean {
    if (n.gitignore === undefined) return true; // a node stored by an older version
    const probe = this.rules.probe(rel);
    return probe.sig !== n.gitignore || (probe.sig !== null && this.racy(n.scannedAt, probe.changedAt));
  }

  private changed(rel: string, n: DirNode): "same" | "entries" | "rules" | "gone" {
    const stat = lstatSync(rel === "" ? this.root : below(this.root, rel), { throwIfNoEntry: false });
    if (stat === undefined || !stat.isDirectory()) return "gone";
    const same =
      n.ctimeMs !== undefined &&
      stat.ctimeMs === n.ctimeMs &&
      stat.mtimeMs === n.mtimeMs &&
      stat.ino === n.ino &&
      !this.racy(n.scannedAt, Math.max(stat.mtimeMs, stat.ctimeMs));
    // A folder that had no .gitignore and whose entries are unchanged (its ctime, which no one can set back, is the
    // same, outside the racy window) still has none: no second lstat. One that had one is probed: its content can
    // change without the folder changing.
    if (same && n.gitignore === null) return "same";
    if (this.rulesChanged(rel, n)) return "rules";
    return same ? "same" : "entries";
  }

  private drop(rel: string): void {
    for (const old of subtree(this.tree, rel)) this.changes[old] = null;
  }

  /** Scans the folder `rel` and everything below it into the changes. */
  private scan(rel: string): void {
    Object.assign(this.changes, scanWith(this.root, rel, this.options, this.rules) ?? {});
  }

  private rescanSubtree(rel: string): void {
    this.drop(rel);
    this.scan(rel);
  }

  /** Checks one folder, recording what changed; returns its current node (undefined when dropped or rescanned). */
  private check(rel: string, n: DirNode): DirNode | undefined {
    const state = this.changed(rel, n);
    if (state === "same") return n;
    if (state === "gone") {
      this.drop(rel);
      return undefined;
    }
    if (state === "rules") {
      this.rescanSubtree(rel);
      return undefined;
    }
    const folder = readFolder(this.root, rel, this.rules, this.options.now);
    if (folder === undefined) {
      this.drop(rel);
      return undefined;
    }
    this.changes[rel] = folder.node;
    const before = new Set(subfolderKeys(n, rel));
    const after = new Set(subfolderKeys(folder.node, rel));
    for (const gone of before) if (!after.has(gone)) this.drop(gone);
    for (const added of after) if (!before.has(added)) this.scan(added);
    return folder.node;
  }

  /**
   * Checks the folders above `dir` first: their .gitignore rules apply to everything below. One the tree does not
   * hold (the listed folder is inside an ignored one) cannot be checked: the listed folder is then scanned again.
   * Returns whether the listed folder is still to be checked (false when a subtree holding it was rescanned).
   */
  checkAbove(dir: string): boolean {
    for (let a = dir; a !== ""; ) {
      a = parentOf(a);
      const n = this.tree[a];
      if (n === undefined) {
        this.rescanSubtree(dir);
        return false;
      }
      if (this.rulesChanged(a, n)) {
        this.rescanSubtree(a);
        return false;
      }
    }
    return true;
  }

  /**
   * Checks the listed folder, and with `recursive` every folder the listing shows, parents first: a folder's check
   * may rescan or drop what is below it. A subfolder listed without a node (dropped by an invalidation) is scanned.
   */
  checkListed(dir: string, recursive: boolean): void {
    const pending = [dir];
    for (let rel = pending.pop(); rel !== undefined; rel = pending.pop()) {
      if (rel in this.changes) continue;
      const n = this.tree[rel];
      if (n === undefined) {
        if (rel !== dir) this.scan(rel);
        continue;
      }
      const current = this.check(rel, n);
      if (current === undefined || !recursive) continue;
      const children = subfolderKeys(current, rel);
      for (let i = children.length - 1; i >= 0; i -= 1) pending.push(children[i] as string);
    }
  }
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
