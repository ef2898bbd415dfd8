/**
 * The file tools' cache as plain state and a batch reducer: per file a digest, the stat it was read with and its
 * length, never the content (a checkpoint stays small; a hit re-reads the file and compares the digest).
 */

import type { Stats } from "node:fs";
import type { ChannelSpec } from "../common/channel.js";
import { fileCaches } from "../common/file-cache-check.js";
import { GuardStateError, kindOf } from "../common/state-error.js";
import type { DirNode, DirTree } from "./tree.js";

/**
 * What the cache knows of a whole file as read from disk (a partial read is never cached): the digest of its
 * content, its length and the stat it was read with. No content: a hit re-reads the file and compares the digest.
 *
 * @example
 * ```ts
 * const cached: CachedFile | undefined = state.fileCache.files["/repo/src/app.ts"];
 * if (cached !== undefined) console.log(cached.hash, cached.chars);
 * ```
 */
export interface CachedFile {
  /** Digest of the whole content: a hit re-reads the file and must find the same digest. */
  hash: string;
  /** The content's length (UTF-16 code units): what the `bytes` budget counts. */
  chars: number;
  /** The file's modification time when it was read (ms). */
  mtimeMs: number;
  /**
   * The status-change time: set by the kernel on every change, and unlike the mtime no user can set it back. An
   * entry stored by an older version has none, and is always verified by hash.
   */
  ctimeMs?: number;
  /** The file's size in bytes when it was read. */
  size: number;
  /** The file's inode number (a file replaced by another has a new one). */
  ino: number;
  /** When it was read (ms): a file changed within the racy window of this time is verified by hash. */
  cachedAt: number;
  /** The tool call whose ToolMessage carries the whole content, for reference answers. */
  ref?: string | undefined;
  /** Digest of that ToolMessage's content: if the message was trimmed or summarized, it no longer matches. */
  refDigest?: string | undefined;
}

/**
 * Counters, readable from state.
 *
 * @example
 * ```ts
 * const { hits, misses, bytesSaved }: FileCacheStats = state.fileCache.stats;
 * ```
 */
export interface FileCacheStats {
  /** Reads and listings answered from the cache. */
  hits: number;
  /** Reads of files that were not cached. */
  misses: number;
  /** Reads of cached files that had changed on disk (read again). */
  staleRefreshes: number;
  /** Characters not sent to the model: each reference answer's content minus the reference itself. */
  bytesSaved: number;
}

/**
 * Plain, serialisable cache state. `files` is kept in LRU order: least recently used first.
 *
 * @example
 * ```ts
 * const cache: FileCacheState = (await graph.getState(config)).values.fileCache;
 * ```
 */
export interface FileCacheState {
  /** The cached files by absolute path, least recently used first. */
  files: Record<string, CachedFile>;
  /** Sum of the cached files' lengths (`chars`, UTF-16 code units, what the budget counts). */
  bytes: number;
  /** The directory tree of the root, or null before the first listing (or after a full invalidation). */
  tree: DirTree | null;
  /** The cache's counters. */
  stats: FileCacheStats;
}

/**
 * One change to the cache (what the file tools write to the channel).
 *
 * @example
 * ```ts
 * const clear: FileCacheWrite[] = [{ op: "dropAll" }, { op: "treeDrop" }]; // e.g. return { fileCache: clear }
 * ```
 */
export type FileCacheWrite =
  | {
      /**
       * Cache a file (most recently used); least recently used files are evicted beyond `budget` characters or
       * `maxFiles` entries.
       */
      op: "put";
      /** The file's absolute path. */
      path: string;
      /** The cached file. */
      file: CachedFile;
      /** The most characters the cache stands for (`cache.budgetChars`). */
      budget: number;
      /** The most files the cache holds (`cache.maxFiles`); default 2,000. */
      maxFiles?: number | undefined;
    }
  | {
      /** Mark a cached file as used (most recently used); with `ref`, note the ToolMessage that carries it. */
      op: "touch";
      /** The file's absolute path. */
      path: string;
      /** The tool call whose ToolMessage carries the whole content. */
      ref?: string | undefined;
      /** Digest of that ToolMessage's content. */
      refDigest?: string | undefined;
    }
  /**
   * A cached file verified by hash against a stat taken at `cachedAt` (ms), outside the racy window (applied only
   * while the entry still has the content `hash`). No longer written since every hit compares the digest; applied
   * for threads written by earlier versions.
   */
  | {
      /** A cached file was verified by hash. */
      op: "verified";
      /** The file's absolute path. */
      path: string;
      /** The content's digest it was verified against. */
      hash: string;
      /** When the stat was taken (ms). */
      cachedAt: number;
      /** The status-change time of that stat. */
      ctimeMs: number;
    }
  | {
      /** Forget cached files. */
      op: "drop";
      /** Their absolute paths. */
      paths: string[];
    }
  | {
      /** Forget every cached file. */
      op: "dropAll";
    }
  /** Replace folders of the tree (null removes one); with `complete`, the tree becomes exactly `dirs`. */
  | {
      /** Replace folders of the tree. */
      op: "treeSet";
      /** Folders by path relative to the root (null removes one). */
      dirs: Record<string, DirNode | null>;
      /** The tree becomes exactly `dirs`. */
      complete?: boolean;
    }
  /** Add an entry to its folder (folders are created along the way), e.g. after `write_to_file`. */
  | {
      /** Add an entry to its folder. */
      op: "treeAdd";
      /** The entry's path relative to the root. */
      rel: string;
    }
  | {
      /** Forget the directory tree. */
      op: "treeDrop";
    }
  | {
      /** Add to the counters. */
      op: "count";
      /** Reads and listings answered from the cache. */
      hits?: number;
      /** Reads of files that were not cached. */
      misses?: number;
      /** Reads of cached files that had changed on disk. */
      staleRefreshes?: number;
      /** Characters not sent to the model. */
      bytesSaved?: number;
    };

/** The most files the cache holds when a `put` does not say (`cache.maxFiles`'s default). */
export const DEFAULT_CACHE_MAX_FILES = 2000;

/**
 * An empty cache.
 *
 * @example
 * ```ts
 * emptyFileCache().bytes; // 0
 * ```
 */
export function emptyFileCache(): FileCacheState {
  return { files: {}, bytes: 0, tree: null, stats: { hits: 0, misses: 0, staleRefreshes: 0, bytesSaved: 0 } };
}

function without(files: Record<string, CachedFile>, path: string): Record<string, CachedFile> {
  const { [path]: _gone, ...rest } = files;
  return rest;
}

type WriteOf<Op extends FileCacheWrite["op"]> = Extract<FileCacheWrite, { op: Op }>;

function putFile(state: FileCacheState, write: WriteOf<"put">): FileCacheState {
  const old = state.files[write.path];
  const file = write.file;
  let files = { ...without(state.files, write.path), [write.path]: file };
  let bytes = state.bytes - (old?.chars ?? 0) + file.chars;
  let count = Object.keys(files).length;
  const maxFiles = write.maxFiles ?? DEFAULT_CACHE_MAX_FILES;
  for (const path of Object.keys(files)) {
    if (bytes <= write.budget && count <= maxFiles) break;
    bytes -= (files[path] as CachedFile).chars;
    count -= 1;
    files = without(files, path);
  }
  return { ...state, files, bytes };
}

function dropFiles(state: FileCacheState, write: WriteOf<"drop">): FileCacheState {
  let files = state.files;
  let bytes = state.bytes;
  for (const path of write.paths) {
    const old = files[path];
    if (old === undefined) continue;
    bytes -= old.chars;
    files = without(files, path);
  }
  return files === state.files ? state : { ...state, files, bytes };
}

function setTree(state: FileCacheState, write: WriteOf<"treeSet">): FileCacheState {
  if (write.complete) {
    const tree: DirTree = {};
    for (const [rel, node] of Object.entries(write.dirs)) if (node !== null) tree[rel] = node;
    return { ...state, tree };
  }
  if (state.tree === null) return state;
  const tree: DirTree = { ...state.tree };
  for (const [rel, node] of Object.entries(write.dirs)) {
    if (node === null) delete tree[rel];
    else tree[rel] = node;
  }
  return { ...state, tree };
}

function addToTree(state: FileCacheState, write: WriteOf<"treeAdd">): FileCacheState {
  if (state.tree === null) return state;
  const tree: DirTree = { ...state.tree };
  const parts = write.rel.split("/");
  for (let i = 0; i < parts.length; i += 1) {
    const dir = parts.slice(0, i).join("/");
    const entry = i === parts.length - 1 ? (parts[i] as string) : `${parts[i]}/`;
    // A folder the tree does not know yet gets a node that the next listing checks (mtime 0 never matches).
    const node = tree[dir] ?? { entries: [], mtimeMs: 0, gitignore: null, scannedAt: 0 };
    if (!node.entries.includes(entry)) tree[dir] = { ...node, entries: [...node.entries, entry].sort() };
    else tree[dir] = node;
  }
  return { ...state, tree };
}

function countStats(state: FileCacheState, write: WriteOf<"count">): FileCacheState {
  const s = state.stats;
  return {
    ...state,
    stats: {
      hits: s.hits + (write.hits ?? 0),
      misses: s.misses + (write.misses ?? 0),
      staleRefreshes: s.staleRefreshes + (write.staleRefreshes ?? 0),
      bytesSaved: s.bytesSaved + (write.bytesSaved ?? 0),
    },
  };
}

function apply(state: FileCacheState, write: FileCacheWrite): FileCacheState {
  switch (write.op) {
    case "put":
      return putFile(state, write);
    case "touch": {
      const file = state.files[write.path];
      if (file === undefined) return state;
      const updated = write.ref === undefined ? file : { ...file, ref: write.ref, refDigest: write.refDigest };
      return { ...state, files: { ...without(state.files, write.path), [write.path]: updated } };
    }
    case "verified": {
      const file = state.files[write.path];
      if (file === undefined || file.hash !== write.hash) return state;
      const updated = { ...file, cachedAt: write.cachedAt, ctimeMs: write.ctimeMs };
      return { ...state, files: { ...state.files, [write.path]: updated } };
    }
    case "drop":
      return dropFiles(state, write);
    case "dropAll":
      return { ...state, files: {}, bytes: 0 };
    case "treeSet":
      return setTree(state, write);
    case "treeAdd":
      return addToTree(state, write);
    case "treeDrop":
      return { ...state, tree: null };
    case "count":
      return countStats(state, write);
    default: {
      const op = (write as { op?: unknown } | null)?.op;
      const what = op === undefined ? `${kindOf(write)} (not a cache write)` : `an unknown write op '${String(op)}'`;
      throw new GuardStateError("fileCache", what, true);
    }
  }
}

/**
 * The `fileCache` channel's reducer: writes are applied; a whole cache replaces the current one (createAgent feeds each
 * channel's value back on every invoke); `null` resets it (how a damaged cache is reset); anything else throws.
 */
export function reduceFileCacheUpdate(
  current: FileCacheState | undefined,
  update: FileCacheWrite | readonly FileCacheWrite[] | FileCacheState | null | undefined,
): FileCacheState {
  if (update === null) return emptyFileCache();
  if (update === undefined) return current ?? emptyFileCache();
  if (!Array.isArray(update) && typeof update === "object" && "files" in update) return reduceFileCache(update, []);
  return reduceFileCache(current, [update as FileCacheWrite | readonly FileCacheWrite[]]);
}

/**
 * The batch reducer of the file-cache channel: applies writes in order (a write may be one change or a list).
 *
 * @example
 * ```ts
 * reduceFileCache(emptyFileCache(), [{ op: "dropAll" }]);
 * ```
 */
export function reduceFileCache(
  state: FileCacheState | undefined,
  writes: readonly (FileCacheWrite | readonly FileCacheWrite[])[],
): FileCacheState {
  let current = state === undefined ? emptyFileCache() : (fileCaches.read(state) as FileCacheState);
  for (const write of writes) {
    if (Array.isArray(write)) for (const w of write as FileCacheWrite[]) current = apply(current, w);
    else current = apply(current, write as FileCacheWrite);
  }
  return fileCaches.trust(current);
}

/** What the cache compares of a file's stat. */
export type FileStat = Pick<Stats, "mtimeMs" | "ctimeMs" | "size" | "ino">;

/**
 * Whether a stat (taken before any byte is read) still matches the cached file: mtime, size, inode, ctime (no user
 * can set it back); `"verify"` (compare digests) within `racyWindowMs` of caching (a same-tick edit keeps both times)
 * or without a stored ctime.
 */
export function freshness(cached: CachedFile, stat: FileStat, racyWindowMs: number): "fresh" | "stale" | "verify" {
  if (stat.mtimeMs !== cached.mtimeMs || stat.size !== cached.size || stat.ino !== cached.ino) return "stale";
  if (cached.ctimeMs === undefined) return "verify";
  if (stat.ctimeMs !== cached.ctimeMs) return "stale";
  return cached.cachedAt - Math.max(stat.mtimeMs, stat.ctimeMs) <= racyWindowMs ? "verify" : "fresh";
}

/** What a writer may give the `fileCache` channel: writes (applied in order), a whole cache, or `null` to reset. */
export type FileCacheUpdate = FileCacheWrite | FileCacheWrite[] | FileCacheState | null;

/** The `fileCache` channel: the file tools' cache (digests and stats, no contents) and directory tree. */
export const fileCacheChannel: ChannelSpec<FileCacheState, FileCacheUpdate> = {
  reduce: reduceFileCacheUpdate,
  empty: emptyFileCache,
};
