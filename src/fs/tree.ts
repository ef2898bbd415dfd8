/**
 * The directory tree behind `list_files`: one fdir scan of the whole root, honouring `.gitignore` files at every
 * level and a default ignore list; later listings come from the tree, each listed folder checked by `stat`
 * (its mtime and its `.gitignore`'s) so that changes made outside the tools are never listed stale.
 */
import { type Dirent, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fdir } from "fdir";
import ignore, { type Ignore } from "ignore";

/** One scanned folder: its entries (folders end with `/`) and what proves they are current. */
export interface DirNode {
  entries: string[];
  mtimeMs: number;
  /** mtime of the folder's `.gitignore`, or null when it has none. */
  gitignoreMtimeMs: number | null;
  /** When it was scanned (ms): a folder changed within the racy window of this time is scanned again. */
  scannedAt: number;
}

/** The tree: folders by path relative to the root (`""` is the root), `/`-separated. */
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

const parentOf = (rel: string) => (rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "");
const nameOf = (rel: string) => rel.slice(rel.lastIndexOf("/") + 1);
const joinRel = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`);

function mtimeOrNull(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

/** Decides, for one scan, which paths the ignore rules exclude (each folder's `.gitignore` read once). */
class IgnoreRules {
  private readonly matchers = new Map<string, Ignore | null>();
  private readonly defaults: Set<string>;

  constructor(
    private readonly root: string,
    defaults: readonly string[],
  ) {
    this.defaults = new Set(defaults);
  }

  private matcher(dir: string): Ignore | null {
    let m = this.matchers.get(dir);
    if (m === undefined) {
      try {
        m = ignore().add(readFileSync(join(this.root, dir, ".gitignore"), "utf8"));
      } catch {
        m = null;
      }
      this.matchers.set(dir, m);
    }
    return m;
  }

  /**
   * Whether `rel` (a file or, with `isDir`, a folder) is ignored: by the defaults, or by the nearest `.gitignore`
   * with an opinion on it — a deeper file's rules (including `!` negations) override a shallower one's, as in git.
   */
  ignores(rel: string, isDir: boolean): boolean {
    if (this.defaults.has(nameOf(rel))) return true;
    let dir = parentOf(rel);
    for (;;) {
      const m = this.matcher(dir);
      if (m !== null) {
        const sub = dir === "" ? rel : rel.slice(dir.length + 1);
        const verdict = m.test(isDir ? `${sub}/` : sub);
        if (verdict.ignored) return true;
        if (verdict.unignored) return false;
      }
      if (dir === "") return false;
      dir = parentOf(dir);
    }
  }
}

/** The result of a scan: the folders found, or `undefined` when there are more than `entryCap` entries. */
export function scanTree(
  root: string,
  from: string,
  options: { ignored: readonly string[]; entryCap: number; now: number },
): DirTree | undefined {
  const rules = new IgnoreRules(root, options.ignored);
  const base = from === "" ? root : join(root, from);
  const paths = new fdir()
    .withRelativePaths()
    .withDirs()
    .withMaxFiles(options.entryCap + 1)
    .exclude((_name, dirPath) => {
      const rel = dirPath.slice(root.length + 1).replace(/\/$/, "");
      return rel !== "" && rules.ignores(rel, true);
    })
    .filter((path, isDirectory) => {
      const trimmed = path.replace(/\/$/, "");
      const bare = trimmed === "." ? "" : trimmed.replace(/^\.\//, "");
      if (bare === "") return true; // the crawled folder itself
      return !rules.ignores(joinRel(from, bare), isDirectory);
    })
    .crawl(base)
    .sync();
  if (paths.length > options.entryCap) return undefined;
  const tree: DirTree = {};
  const node = (rel: string): DirNode => {
    let n = tree[rel];
    if (n === undefined) {
      const dirPath = rel === "" ? root : join(root, rel);
      n = {
        entries: [],
        mtimeMs: mtimeOrNull(dirPath) ?? 0,
        gitignoreMtimeMs: mtimeOrNull(join(dirPath, ".gitignore")),
        scannedAt: options.now,
      };
      tree[rel] = n;
    }
    return n;
  };
  node(from);
  for (const p of paths) {
    const isDir = p.endsWith("/");
    const bare = (isDir ? p.slice(0, -1) : p).replace(/^\.\//, "");
    if (bare === "" || bare === ".") continue; // fdir lists the crawled folder itself
    const rel = joinRel(from, bare);
    if (isDir) node(rel);
    node(parentOf(rel)).entries.push(isDir ? `${nameOf(rel)}/` : nameOf(rel));
  }
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
    if (mtimeOrNull(join(path, ".gitignore")) !== n.gitignoreMtimeMs) return "rules";
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
  return changes;
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
