/**
 * The `fileCache` channel's check when read: the file tools own the cache (fs/cache.ts), and the tool-call guards'
 * turn checks the channels it writes before it runs a tool (tool-calls/traits.ts), so the check is shared.
 */
import type { FileCacheState } from "../fs/cache.js";
import { GuardStateError, kindOf } from "./state-error.js";

/** A finite number, for the checks of a stored cache. */
const isCount = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n);

/**
 * The file cache as the guards read it: a stored value checked (cheaply: its parts, not every entry), an older shape
 * without `stats`, `bytes` or `tree` repaired, a damaged one refused with a `GuardStateError`.
 *
 * @example
 * ```ts
 * readFileCache({ files: {} }).stats.hits; // 0
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
  if (tree !== undefined && tree !== null && (typeof tree !== "object" || Array.isArray(tree))) {
    throw fail("tree: expected an object or null");
  }
  if (bytes !== undefined && !isCount(bytes)) throw fail(`bytes: expected a number, received ${kindOf(bytes)}`);
  const counters = { hits: 0, misses: 0, staleRefreshes: 0, bytesSaved: 0, ...(stats ?? {}) };
  for (const [name, n] of Object.entries(counters)) if (!isCount(n)) throw fail(`stats.${name}: expected a number`);
  const whole = stats !== undefined && Object.keys(counters).every((name) => name in stats);
  const cache = bytes !== undefined && tree !== undefined && whole ? (state as FileCacheState) : undefined;
  const read = cache ?? { ...(state as FileCacheState), bytes: bytes ?? 0, tree: tree ?? null, stats: counters };
  checkedCaches.add(read);
  return read;
}

/** Caches checked by {@link readFileCache} (a cache the reducer made is checked at its first read only). */
const checkedCaches = new WeakSet<object>();
