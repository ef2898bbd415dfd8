// The `fileCache` channel's check, shared by the file tools (fs/cache.ts) and the tool-call turn (traits.ts).
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
 * The file cache as the guards read it, each stored value checked once (its type is the file tools' `FileCacheState`).
 */
export const fileCaches = new StoredValues<object>("fileCache", "the file cache", fileCacheSchema);
