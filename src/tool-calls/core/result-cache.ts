/** The result cache: it keeps only where a result is (call id, digest), so a result trimmed away is not served. */
import type { CallEffect } from "../../common/identity/classify.js";
import { staleAfter } from "./redundancy.js";

/**
 * One call's cached result: where the model read it, and until when it is served.
 *
 * @example
 * ```ts
 * const entry: CacheEntry | undefined = state.toolGuard.cache?.at(-1);
 * // { key: "…", tool: "search_docs", callId: "call_1", digest: "…", until: 1764370000000, paths: [] }
 * ```
 */
export interface CacheEntry {
  /** Digest of the call's canonical signature (ignored arguments left out). */
  key: string;
  /** The tool's name. */
  tool: string;
  /** The call id of the ToolMessage that holds the full result. */
  callId: string;
  /** The exact digest of that result (a message with another content under that id is not served). */
  digest: string;
  /** Until when (ms since the epoch, by the adapter's clock) the result is served. */
  until: number;
  /** Paths the result depends on (empty: unknown scope, dropped by any write). */
  paths: string[];
}

/**
 * A repeat the cache answers: the earlier answer's call id and result digest, and how old it is.
 *
 * @example
 * ```ts
 * if (decision.served) console.log(`served the result of ${decision.served.callId}`);
 * ```
 */
export interface CacheHit {
  /** The call id of the ToolMessage whose result is served. */
  callId: string;
  /** The exact digest of that result. */
  digest: string;
}

/**
 * How a call's successful result is kept by the cache: until when it is served, and how many calls' results are kept.
 *
 * @example
 * ```ts
 * const terms: CacheTerms = { until: Date.now() + 300_000, limit: 50 };
 * ```
 */
export interface CacheTerms {
  /** Until when (ms since the epoch, by the adapter's clock) the result is served. */
  until: number;
  /** Calls whose results are kept (`memory.cache.maxEntries`). */
  limit: number;
}

/** Records `entry`, replacing its key's earlier one; the newest `limit` kept. */
export function noteCached(entries: readonly CacheEntry[] | undefined, entry: CacheEntry, limit: number): CacheEntry[] {
  const kept = (entries ?? []).filter((e) => e.key !== entry.key);
  kept.push(entry);
  return kept.length > limit ? kept.slice(kept.length - limit) : kept;
}

/** The entries a change leaves, invalidated as the redundant rule's reads are. */
export function invalidateCache(entries: CacheEntry[] | undefined, effect: CallEffect): CacheEntry[] | undefined {
  if (entries === undefined || entries.length === 0) return entries;
  if (effect.kind === "read" || effect.kind === "none") return entries;
  if (effect.kind === "mutate") return [];
  const kept = entries.filter((e) => !staleAfter(e.paths, effect.paths));
  return kept.length === entries.length ? entries : kept;
}
