/**
 * The `fileCache` channel's check when read: the file tools own the cache (fs/cache.ts), and the tool-call guards'
 * turn checks the channels it writes before it runs a tool (tool-calls/traits.ts), so the check is shared.
 */
import { z } from "zod/v4";
import { StoredValues } from "./state-error.js";

const count = z.number();
/** What the guards read of a cache: the parts, each entry's length, the counters. */
const fileCacheSchema = z.looseObject({
  files: z.record(z.string(), z.looseObject({ chars: count })),
  bytes: count,
  tree: z.record(z.string(), z.unknown()).nullable(),
  stats: z.looseObject({ hits: count, misses: count, staleRefreshes: count, bytesSaved: count }),
});

/**
 * The file cache as the guards read it (`read`): a stored value checked once, a damaged one (a part missing too)
 * refused with a `GuardStateError`; a cache the reducer made is marked with `trust` (its next read is a lookup). Its
 * type (`FileCacheState`) is the file tools' (src/fs/cache.ts): the floor checks the shape without knowing it.
 *
 * @example
 * ```ts
 * fileCaches.read({ files: {} }); // throws GuardStateError: fileCache, bytes
 * ```
 */
export const fileCaches = new StoredValues<object>("fileCache", "the file cache", fileCacheSchema);
