/**
 * The directory tree behind `list_files`: one fdir scan of the whole root, honouring `.gitignore` files at every
 * level and a default ignore list; later listings come from the tree, each listed folder checked by `stat`
 * (its mtime and its `.gitignore`'s) so that changes made outside the tools are never listed stale.
 */
import { type Dirent, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fdir } from "fdir";
import ignore, { type Ignore } from "ignore";

/**
 * One scanned folder: its entries (folders end with `/`) and what proves they are current.
 *
 * @example
 * ```ts
 * const src: DirNode | undefined = state.fileCache.tree?.["src"]; // { entries, mtimeMs, ... }
 * ```
 */
export interface DirNode {
  entries: string[];
  mtimeMs: number;
  /** mtime of the folder's `.gitignore`, or null when it has none. */
  gitignoreMtimeMs: number | null;
  /** When it was scanned (ms): a folder changed within the racy window of this time is scanned again. */
  scannedAt: number;
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

function mtimeOrNull(path: string): number | null {
  // No exception for a missing path: probing every folder for a `.gitignore` must stay cheap.
  return statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? null;
}

/** Decides, for one scan, which paths the ignore rules exclude (each folder's `.gitignore` read once). */
class IgnoreRules {
  private readonly chains = new Map<string, { dir: string; matcher: Ignore }[]>();
  private readonly gitignoreMtimes = new Map<string, number | null>();
  private readonly defaults: Set<string>;

  constructor(
    private readonly root: string,
    defaults: readonly string[],
  ) {
    this.defaults = new Set(defaults);
  }

  /** mtime of the folder's `.gitignore` (null when it has none), as seen by this scan. */
  gitignoreMtime(dir: string): number | null {
    this.chain(dir);
    return this.gitignoreMtimes.get(dir) ?? null;
  }

  /** The `.gitignore` matchers that apply inside `dir`, deepest first (memoised per folder). */
  private chain(dir: string): { dir: string; matcher: Ignore }[] {
    let chain = this.chains.get(dir);
    if (chain === undefined) {
      const inherited = dir === "" ? [] : this.chain(parentOf(dir));
      const file = join(this.root, dir, ".gitignore");
      const mtime = mtimeOrNull(file);
      this.gitignoreMtimes.set(dir, mtime);
      chain = mtime === null ? inherited : [{ dir, matcher: ignore().add(readFileSync(file, "utf8")) }, ...inherited];
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
 * Scans the folder `from` (relative to `root`, `""` for the root) and everything below it in one fdir crawl,
 * building the tree as fdir reports entries (nothing else is collected). Returns `undefined` when there are more
 * than `entryCap` entries (the crawl stops descending then).
 *
 * @example
 * ```ts
 * const tree = scanTree("/repo", "", { ignored: DEFAULT_IGNORED, entryCap: 100_000, now: Date.now() });
 * tree?.["src"]?.entries; // ["app.ts", "utils/"]
 * ```
 */
export function scanTree(
  root: string,
  from: string,
  options: { ignored: readonly string[]; entryCap: number; now: number },
): DirTree | undefined {
  const rules = new IgnoreRules(root, options.ignored);
  const base = from === "" ? root : join(root, from);
  const tree: DirTree = {};
  let count = 0;
  const node = (rel: string): DirNode => {
    let n = tree[rel];
    if (n === undefined) {
      n = {
        entries: [],
        mtimeMs: mtimeOrNull(rel === "" ? root : join(root, rel)) ?? 0,
        gitignoreMtimeMs: rules.gitignoreMtime(rel),
        scannedAt: options.now,
      };
      tree[rel] = n;
    }
    return n;
  };
  node(from);
  // fdir reports a folder's entries together: remember the last parent instead of looking it up each time.
  let lastParent = from;
  let lastNode = tree[from] as DirNode;
  new fdir()
    .withRelativePaths()
    .withDirs()
    .exclude((_name, dirPath) => {
      if (count > options.entryCap) return true; // over the cap: stop descending, the result is dropped
      const rel = dirPath.slice(root.length + 1, dirPath.endsWith("/") ? -1 : undefined);
      return rel !== "" && rel !== from && rules.ignores(rel, true);
    })
    .filter((path, isDirectory) => {
      // fdir reports folders with a trailing "/" and the crawled folder itself as "." or "./".
      const bare = isDirectory || path.endsWith("/") ? path.slice(0, -1) : path;
      if (bare === "" || bare === ".") return false;
      const rel = from === "" ? bare : `${from}/${bare}`;
      const slash = rel.lastIndexOf("/");
      const name = rel.slice(slash + 1);
      const parent = slash < 0 ? "" : rel.slice(0, slash);
      if (rules.ignores(rel, isDirectory, name, parent)) return false;
      count += 1;
      if (parent !== lastParent) {
        lastParent = parent;
        lastNode = node(parent);
      }
      lastNode.entries.push(isDirectory ? `${name}/` : name);
      if (isDirectory) node(rel);
      return false;
    })
    .crawl(base)
    .sync();
  if (count > options.entryCap) return undefined;
  for (const n of Object.values(tree)) n.entries.sort();
  return tree;
}

/** Entries of one folder read with `readdir`, filtered by the ignore rules (for a single-folder refresh). */
function readEntries(root: string, rel: string, ignored: readonly string[]): string[] | undefined {
  let dirents: Dirent[];
  try {
    dirents = readdirSync(rel === "" ? root : join(root, rel), { withFileTypes: true });
  } catch {
    return undefined;
  }
  const rules = new IgnoreRules(root, ignored);
  return dirents
    .filter((d) => !rules.ignores(joinRel(rel, d.name), d.isDirectory()))
    .map((d) => (d.isDirectory() ? `${d.name}/` : d.name))
    .sort();
}

/** Folders of `tree` under `dir` (itself included). */
function subtree(tree: DirTree, dir: string): string[] {
  return Object.keys(tree).filter((rel) => rel === dir || dir === "" || rel.startsWith(`${dir}/`));
}

/**
 * Brings the part of the tree a listing needs up to date: every folder in it (and every ancestor, whose
 * `.gitignore` applies) is checked with `stat`; a changed folder is read again, a new subfolder scanned, a removed
 * one dropped, a changed `.gitignore` rescans its subtree. Returns the folders to replace (null = removed), or
 * nothing when the tree was current.
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
  options: { ignored: readonly string[]; entryCap: number; now: number; racyWindowMs: number },
): Record<string, DirNode | null> {
  const changes: Record<string, DirNode | null> = {};
  const changed = (rel: string, n: DirNode): "same" | "entries" | "rules" | "gone" => {
    const path = rel === "" ? root : join(root, rel);
    const mtime = mtimeOrNull(path);
    if (mtime === null) return "gone";
    // A folder without a .gitignore gets one only by a change of its entries (caught below, as "entries").
    if (n.gitignoreMtimeMs !== null && mtimeOrNull(join(path, ".gitignore")) !== n.gitignoreMtimeMs) return "rules";
    if (mtime !== n.mtimeMs || n.scannedAt - mtime <= options.racyWindowMs) return "entries";
    return "same";
  };
  const rescanSubtree = (rel: string) => {
    for (const old of subtree(tree, rel)) changes[old] = null;
    Object.assign(changes, scanTree(root, rel, options) ?? {});
  };
  // Ancestors first: their .gitignore rules apply to everything below.
  const ancestors: string[] = [];
  for (let a = dir; a !== ""; a = parentOf(a)) ancestors.push(parentOf(a));
  for (const a of ancestors.reverse()) {
    const n = tree[a];
    if (n !== undefined && changed(a, n) === "rules") {
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
      for (const old of subtree(tree, rel)) changes[old] = null;
      continue;
    }
    if (state === "rules") {
      rescanSubtree(rel);
      continue;
    }
    const entries = readEntries(root, rel, options.ignored);
    if (entries === undefined) {
      for (const old of subtree(tree, rel)) changes[old] = null;
      continue;
    }
    if (entries.includes(".gitignore") !== n.entries.includes(".gitignore")) {
      rescanSubtree(rel); // a .gitignore appeared or went away: the rules of the whole subtree changed
      continue;
    }
    const path = rel === "" ? root : join(root, rel);
    changes[rel] = {
      entries,
      mtimeMs: mtimeOrNull(path) ?? 0,
      gitignoreMtimeMs: mtimeOrNull(join(path, ".gitignore")),
      scannedAt: options.now,
    };
    const before = new Set(n.entries.filter((e) => e.endsWith("/")));
    const after = new Set(entries.filter((e) => e.endsWith("/")));
    for (const gone of before)
      if (!after.has(gone)) for (const old of subtree(tree, joinRel(rel, gone.slice(0, -1)))) changes[old] = null;
    for (const added of after)
      if (!before.has(added)) Object.assign(changes, scanTree(root, joinRel(rel, added.slice(0, -1)), options) ?? {});
  }
  if (recursive) scanUnscanned(root, tree, folders, changes, options);
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
  options: { ignored: readonly string[]; entryCap: number; now: number },
): void {
  for (const rel of folders) {
    const node = rel in changes ? changes[rel] : tree[rel];
    for (const entry of node?.entries ?? []) {
      if (!entry.endsWith("/")) continue;
      const child = joinRel(rel, entry.slice(0, -1));
      if (!(child in tree) && !(child in changes)) Object.assign(changes, scanTree(root, child, options) ?? {});
    }
  }
}

/**
 * Renders a listing from the tree: the folder's entries, or with `recursive` every path below it (relative to
 * the folder), capped at `limit` lines with a clear "N more" line.
 *
 * @example
 * ```ts
 * renderListing(tree, "src", false, 500); // "app.ts\nutils/"
 * ```
 */
export function renderListing(tree: DirTree, dir: string, recursive: boolean, limit: number): string {
  const lines: string[] = [];
  let total = 0;
  const walk = (rel: string, prefix: string) => {
    for (const entry of tree[rel]?.entries ?? []) {
      total += 1;
      if (lines.length < limit) lines.push(`${prefix}${entry}`);
      if (recursive && entry.endsWith("/")) walk(joinRel(rel, entry.slice(0, -1)), `${prefix}${entry}`);
    }
  };
  walk(dir, "");
  if (total === 0) return "(empty folder)";
  if (total > limit) lines.push(`... and ${total - limit} more entries (list a subfolder to see them)`);
  return lines.join("\n");
}
