import * as fuzz from "fuzzball";

/**
 * fuzzball's default processing for its scorers (`full_process` with `force_ascii: false` and
 * `collapseWhitespace: true`): every character that is not a Unicode letter or number becomes a space, then
 * lowercase, trim, and collapse whitespace. Reproduced step by step so the result is the same string.
 *
 * @example
 * ```ts
 * processForRatio("Hello, World!"); // "hello world"
 * ```
 */
export function processForRatio(text: string): string {
  return text
    .replace(/[^\p{L}\p{N}]/gu, " ")
    .toLowerCase()
    .trim()
    .replace(/\s+/g, " ");
}

/** fuzzball's rounding of the Indel ratio, written as fuzzball writes it so that every float rounds the same way. */
function scoreFromLcs(lcs: number, lensum: number): number {
  const distance = lensum - 2 * lcs;
  return Math.round(100 * ((lensum - distance) / lensum));
}

const WORD_BITS = 30;
const WORD_MASK = 0x3fffffff;

/**
 * Length of the longest common subsequence of two strings (UTF-16 code units), bit-parallel: O(n·m/30) with 30-bit
 * words and carry propagation (Allison–Dix / Hyyrö). The common prefix and suffix are counted directly.
 *
 * @example
 * ```ts
 * lcsLength("kitten", "sitting"); // 4 ("ittn")
 * ```
 */
export function lcsLength(x: string, y: string): number {
  let a = x.length <= y.length ? x : y; // the bit-vector side: the shorter
  let b = a === x ? y : x;
  let prefix = 0;
  const limit = a.length;
  while (prefix < limit && a.charCodeAt(prefix) === b.charCodeAt(prefix)) prefix += 1;
  let suffix = 0;
  while (suffix < limit - prefix && a.charCodeAt(a.length - 1 - suffix) === b.charCodeAt(b.length - 1 - suffix)) {
    suffix += 1;
  }
  a = a.slice(prefix, a.length - suffix);
  b = b.slice(prefix, b.length - suffix);
  const n = a.length;
  if (n === 0 || b.length === 0) return prefix + suffix;

  // 30-bit words: every intermediate value (v + u + carry < 2^31) stays a small integer, which V8 keeps unboxed;
  // with 32-bit words the sums spill into doubles and the loop runs about twice as slow.
  const words = Math.ceil(n / WORD_BITS);
  const masks = new Map<number, Int32Array>();
  for (let i = 0; i < n; i += 1) {
    const code = a.charCodeAt(i);
    let mask = masks.get(code);
    if (mask === undefined) {
      mask = new Int32Array(words);
      masks.set(code, mask);
    }
    const w = (i / WORD_BITS) | 0;
    mask[w] = (mask[w] as number) | (1 << (i - w * WORD_BITS));
  }
  const v = new Int32Array(words).fill(WORD_MASK);
  for (let j = 0; j < b.length; j += 1) {
    const mask = masks.get(b.charCodeAt(j));
    if (mask === undefined) continue; // no match: V stays as it is
    let carry = 0;
    for (let k = 0; k < words; k += 1) {
      const vk = v[k] as number;
      const mk = mask[k] as number;
      const sum = vk + (vk & mk) + carry;
      carry = sum >>> WORD_BITS;
      v[k] = (sum | (vk & ~mk)) & WORD_MASK;
    }
  }
  // The LCS is the number of zero bits among the first n bits of V.
  let zeros = 0;
  for (let k = 0; k < words; k += 1) {
    const bits = k === words - 1 ? n - k * WORD_BITS : WORD_BITS;
    let word = ~(v[k] as number) & (bits === WORD_BITS ? WORD_MASK : (1 << bits) - 1);
    word -= (word >>> 1) & 0x55555555;
    word = (word & 0x33333333) + ((word >>> 2) & 0x33333333);
    zeros += (((word + (word >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  }
  return prefix + suffix + zeros;
}

/** A processed string with its character histogram, for the exact upper bound. */
interface Prepared {
  text: string;
  counts: Map<number, number>;
}

const preparedCache = new Map<string, Prepared>();

/** Processed form and histogram of a string, cached for the few most recent strings (outputs are compared 5×). */
function prepare(raw: string): Prepared {
  const cached = preparedCache.get(raw);
  if (cached !== undefined) return cached;
  const text = processForRatio(raw);
  const counts = new Map<number, number>();
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    counts.set(code, (counts.get(code) ?? 0) + 1);
  }
  const prepared = { text, counts };
  preparedCache.set(raw, prepared);
  if (preparedCache.size > 32) preparedCache.delete(preparedCache.keys().next().value as string);
  return prepared;
}

/**
 * An exact upper bound of {@link similarityScore}: the LCS cannot exceed the shared character counts (nor the
 * shorter length), so no pair with a bound below a threshold can reach it.
 *
 * @example
 * ```ts
 * similarityUpperBound("abc", "xyz"); // 0
 * ```
 */
export function similarityUpperBound(a: string, b: string): number {
  const pa = prepare(a);
  const pb = prepare(b);
  const lensum = pa.text.length + pb.text.length;
  if (pa.text.length === 0 || pb.text.length === 0) return 0;
  const [small, large] = pa.counts.size <= pb.counts.size ? [pa.counts, pb.counts] : [pb.counts, pa.counts];
  let shared = 0;
  for (const [code, count] of small) shared += Math.min(count, large.get(code) ?? 0);
  return scoreFromLcs(Math.min(shared, pa.text.length, pb.text.length), lensum);
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
  const pa = prepare(a).text;
  const pb = prepare(b).text;
  if (pa.length === 0 || pb.length === 0) return 0;
  return scoreFromLcs(lcsLength(pa, pb), pa.length + pb.length);
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
 * Whether two strings are at least `threshold` similar ({@link similarityRatio} ≥ `threshold`). Pairs that the
 * exact upper bound rules out are not computed.
 *
 * @example
 * ```ts
 * isSimilar("Checking the database...", "Checking the database..."); // true
 * ```
 */
export function isSimilar(a: string, b: string, threshold = 0.9): boolean {
  if (typeof a !== "string" || typeof b !== "string") return false;
  if (similarityUpperBound(a, b) / 100 < threshold) return false;
  return similarityRatio(a, b) >= threshold;
}

/**
 * The best similarity of the shorter string to any same-length window of the longer (fuzzball `partial_ratio`),
 * 0..1.
 *
 * @example
 * ```ts
 * partialRatio("user data", "Processing the user data..."); // 1
 * ```
 */
export function partialRatio(a: string, b: string): number {
  if (typeof a !== "string" || typeof b !== "string") return 0;
  return fuzz.partial_ratio(a, b) / 100;
}

/**
 * Similarity after sorting the words of each string (fuzzball `token_sort_ratio`), 0..1: word order is ignored.
 *
 * @example
 * ```ts
 * tokenSortRatio("user data processing", "processing user data"); // 1
 * ```
 */
export function tokenSortRatio(a: string, b: string): number {
  if (typeof a !== "string" || typeof b !== "string") return 0;
  return fuzz.token_sort_ratio(a, b) / 100;
}
