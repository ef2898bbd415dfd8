import { indelScore, lcsLength, prepare, preparedScoreAtLeast, scoreFromLcs, sharedCharacters } from "./scorers.js";

export { partialRatio, tokenSortRatio } from "./scorers.js";
export { lcsLength };

/** An exact upper bound of {@link similarityScore}: the LCS exceeds neither the shared characters nor either length. */
export function similarityUpperBound(a: string, b: string): number {
  const pa = prepare(a);
  const pb = prepare(b);
  const lensum = pa.text.length + pb.text.length;
  if (pa.text.length === 0 || pb.text.length === 0) return 0;
  return scoreFromLcs(Math.min(sharedCharacters(pa, pb), pa.text.length, pb.text.length), lensum);
}

/** {@link similarityRatio} when it is at least `threshold`, else `undefined` (failing pairs are not scored exactly). */
export function similarityAtLeast(a: string, b: string, threshold: number): number | undefined {
  if (typeof a !== "string" || typeof b !== "string") return 0 >= threshold ? 0 : undefined;
  const score = preparedScoreAtLeast(prepare(a), prepare(b), threshold);
  return score < 0 ? undefined : score / 100;
}

/**
 * The similarity of two strings as an integer percentage, exactly `fuzzball.ratio(a, b)` (default processing,
 * Indel distance, same rounding), computed with a bit-parallel LCS instead of fuzzball's O(n·m) table.
 *
 * @example
 * ```ts
 * similarityScore("Processing the user data...", "Processing user data now..."); // 83
 * ```
 */
export function similarityScore(a: string, b: string): number {
  if (typeof a !== "string" || typeof b !== "string") return 0;
  return indelScore(prepare(a).text, prepare(b).text);
}

/**
 * The similarity of two strings, 0..1: exactly `fuzzball.ratio(a, b) / 100`, but fast (bit-parallel LCS).
 *
 * @example
 * ```ts
 * similarityRatio("Hello world", "Hello world!"); // 1 (punctuation is removed before comparing)
 * similarityRatio("Processing the user data...", "Processing user data now..."); // 0.83
 * ```
 */
export function similarityRatio(a: string, b: string): number {
  return similarityScore(a, b) / 100;
}

/**
 * Whether two strings are at least `threshold` similar ({@link similarityRatio} ≥ `threshold`). Only the decision
 * is computed: pairs that the exact upper bound rules out are not compared, and the others only as far as needed.
 *
 * @example
 * ```ts
 * isSimilar("Checking the database...", "Checking the database..."); // true
 * ```
 */
export function isSimilar(a: string, b: string, threshold = 0.9): boolean {
  if (typeof a !== "string" || typeof b !== "string") return false;
  return preparedScoreAtLeast(prepare(a), prepare(b), threshold) >= 0;
}
