/**
 * The `fileCache` channel's check when read: the file tools own the cache (fs/cache.ts), and the tool-call guards'
 * turn checks the channels it writes before it runs a tool (tool-calls/traits.ts), so the check is shared.
 */
import type { FileCacheState } from "../fs/cache.js";
import { GuardStateError, kindOf } from "./state-error.js";

/** A finite number, for the checks of a stored cache. */
const isCount = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n);

/**
 * The file cache as the guards read it: a stored value checked once (a cache the reducer made is trusted), a
 * damaged one (a part missing too) refused with a `GuardStateError`.
 *
 * @example
 * ```ts
 * readFileCache({ files: {} }); // throws GuardStateError: fileCache, bytes
 * ```
 */
export function readFileCache(state: unknown): FileCacheState {
  if (typeof state === "object" && state !== null && checkedCaches.has(state)) return state as FileCacheState;
  const fail = (problem: string) => new GuardStateError("fileCache", problem);
  if (state === null || typeof state !== "object" || Array.isArray(state)) {
    throw fail(`expected the file cache (an object), received ${kindOf(state)}`);
  }
  const { files, bytes, tree, stats } = state as Partial<FileCacheState>;
  if (files === null || typeof files !== "object" || Array.isArray(files)) throw fail(`files: expected an object`);
  if (tree === undefined || (tree !== null && (typeof tree !== "object" || Array.isArray(tree)))) {
    throw fail("tree: expected an object or null");
  }
  if (!isCount(bytes)) throw fail(`bytes: expected a number, received ${kindOf(bytes)}`);
  if (stats === null || typeof stats !== "object") throw fail(`stats: expected an object, received ${kindOf(stats)}`);
  for (const name of ["hits", "misses", "staleRefreshes", "bytesSaved"] as const) {
    if (!isCount(stats[name])) throw fail(`stats.${name}: expected a number`);
  }
  for (const [path, file] of Object.entries(files)) {
    if (file === null || typeof file !== "object" || !isCount(file.chars)) throw fail(`files: ${path} is no entry`);
  }
  return trustFileCache(state as FileCacheState);
}

/**
 * Marks a cache the reducer made as checked: its next read costs a lookup.
 *
 * @example
 * ```ts
 * const cache = trustFileCache(emptyFileCache());
 * ```
 */
export function trustFileCache(cache: FileCacheState): FileCacheState {
  checkedCaches.add(cache);
  return cache;
}

/** Caches checked by {@link readFileCache} (a cache the reducer made is checked at its first read only). */
const checkedCaches = new WeakSet<object>();
