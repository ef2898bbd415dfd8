/**
 * The directory tree behind `list_files`: one scan of the root (through real folders only, `.gitignore` files and the
 * default names honoured), then listings from the tree, each listed folder and those above it checked by `lstat`.
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

interface ScanOptions {
  ignored: readonly string[];
  /** Entries beyond which the scan gives up (returns undefined). */
  entryCap: number;
  now: number;
  maxIgnoreFileBytes?: number;
}

/** Options of {@link refreshTree}. */
export interface RefreshOptions extends ScanOptions {
  /** A folder (or `.gitignore`) changed within this many ms of its scan is read again. */
  racyWindowMs: number;
}

const DEFAULT_MAX_IGNORE_FILE_BYTES = 1_000_000;

/**
 * Reads one folder, its entries filtered by the ignore rules; its stat is taken first (a change meanwhile is seen by
 * the next check), its `.gitignore` probed only when its entries hold one (adding one changes the folder's ctime).
 */
function readFolder(
  root: string,
  rel: string,
  rules: IgnoreRules,
  now: number,
): { node: DirNode; subfolders: string[] } | undefined {
  const read = readFolderAt(rel === "" ? root : below(root, rel));
  if (read === undefined) return undefined;
  const { stat, dirents } = read;
  if (!dirents.some((d) => d.name === ".gitignore")) rules.absent(rel);
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

/** Whether `rel` is a real folder below the root: no symlink on the way. */
function isRealFolder(root: string, rel: string): boolean {
  if (rel === "") return true;
  const path = join(root, rel);
  try {
    return realpathSync.native(path) === path && statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Scans the folder `from` (`""`: the root) and all below it, never through a symlink; undefined past `entryCap`. */
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

function subtree(tree: DirTree, dir: string): string[] {
  return Object.keys(tree).filter((rel) => rel === dir || dir === "" || rel.startsWith(`${dir}/`));
}

/**
 * Brings the part of the tree a listing needs, and the folders above it, up to date by `lstat` (same mtime, ctime,
 * inode, `.gitignore`, outside the racy window); a changed `.gitignore` rescans its subtree. Returns the folders to
 * replace (null: removed), `{}` when the tree was current.
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

/** One run of {@link refreshTree}. */
class TreeRefresh {
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
    // An unchanged folder (its ctime cannot be set back) that had no .gitignore still has none; one that had one is
    // probed: its content can change without the folder changing.
    if (same && n.gitignore === null) return "same";
    if (this.rulesChanged(rel, n)) return "rules";
    return same ? "same" : "entries";
  }

  private drop(rel: string): void {
    for (const old of subtree(this.tree, rel)) this.changes[old] = null;
  }

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
   * Checks the folders above `dir`, whose .gitignore rules apply below; one the tree does not hold (`dir` is inside
   * an ignored one) rescans `dir`. Whether `dir` is still to be checked (not when a subtree holding it was rescanned).
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

  /** Checks the listed folder and, with `recursive`, every folder below it, parents first (a check may drop some). */
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

const isFolderEntry = (entry: string) => entry.charCodeAt(entry.length - 1) === 47; // ends with "/"

/** By entries array (never changed once stored): a recursive check of an unchanged tree looks at no entry. */
const subfolderMemo = new WeakMap<readonly string[], { rel: string; length: number; keys: readonly string[] }>();

/** The subfolders the node of the folder `rel` lists, as paths of the tree, in the order of its entries. */
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
 * Renders a listing from the tree: the folder's entries, or with `recursive` every path below it, capped at `limit`
 * lines with an "N more" line; then a note for each `.gitignore` that applies to it but was not applied.
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
      // Past the limit only the count and the notes are left.
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
