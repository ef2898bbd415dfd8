// fuzzball's scorers, exact and fast: its processing and rounding, and an exact bit-parallel LCS with a threshold
// cut-off for the Indel ratio (`ratio`, similarity.ts), `partial_ratio` and `token_sort_ratio`.
import { matchingBlocks } from "./matching-blocks.js";

/** fuzzball's `full_process` (`force_ascii: false`, `collapseWhitespace: true`), step by step: the same string. */
function processForRatio(text: string): string {
  return text
    .replace(/[^\p{L}\p{N}]/gu, " ")
    .toLowerCase()
    .trim()
    .replace(/\s+/g, " ");
}

/**
 * fuzzball's rounding of the Indel ratio of two strings of total length `lensum` whose LCS is `lcs` (an integer
 * 0..100), written as fuzzball writes it so that every float rounds the same way.
 *
 * @example
 * ```ts
 * scoreFromLcs(4, 13); // 62: "kitten" / "sitting"
 * ```
 */
export function scoreFromLcs(lcs: number, lensum: number): number {
  const distance = lensum - 2 * lcs;
  return Math.round(100 * ((lensum - distance) / lensum));
}

/**
 * fuzzball's Indel score (0..100) of two processed strings: 0 when either is empty.
 *
 * @example
 * ```ts
 * indelScore("kitten", "sitting"); // 62
 * ```
 */
export function indelScore(a: string, b: string): number {
  if (a.length === 0 || b.length === 0) return 0;
  return scoreFromLcs(lcsLength(a, b), a.length + b.length);
}

/**
 * The smallest integer score s with `s / 100 >= threshold` (the comparison the loop detector makes), or 101 (also for
 * a NaN threshold).
 */
function minScoreFor(threshold: number): number {
  let score = 0;
  while (score <= 100 && !(score / 100 >= threshold)) score += 1;
  return score;
}

/**
 * The smallest LCS whose score is at least `score` for two non-empty strings of total length `lensum`, the shorter
 * `shorter` long; `shorter + 1` when none is. Bisection with {@link scoreFromLcs} itself (non-decreasing in the LCS),
 * so no algebra can round differently from the score that is reported.
 */
function minLcsForScore(score: number, lensum: number, shorter: number): number {
  const passes = (lcs: number) => scoreFromLcs(lcs, lensum) >= score;
  if (!passes(shorter)) return shorter + 1;
  let lo = 0;
  let hi = shorter; // passes(hi) holds throughout
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (passes(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

const WORD_BITS = 30;
const WORD_MASK = 0x3fffffff;
/** Columns between two checks of the cut-off. */
const CHECK_EVERY = 32;

/** Number of zero bits among the 30 bits of a word of V (bits above n are kept at 1, so they never count). */
function zerosOf(word: number): number {
  let x = ~word & WORD_MASK;
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * Character code → alphabet id for the pair being compared (-1: absent; -2: occurs in the column string only).
 * Module-level scratch, reset to -1 before {@link lcsAtLeast} returns; UTF-16 code units are < 2^16.
 */
const alphabetId = new Int32Array(0x10000).fill(-1);

/**
 * The LCS of `x` and `y` (UTF-16 code units) when it is at least `needed`, exactly; otherwise some number below
 * `needed` (-1). `needed <= 0` computes the exact LCS of any pair.
 *
 * After the common prefix and suffix (which change neither the distance nor the decision), the shorter string is the
 * bit vector V (30 bits a word; bit i is 0 when row i+1 adds one to the column's LCS) and the longer one is read
 * column by column with the bit-parallel step of Allison–Dix / Hyyrö, `V' = (V + (V & M)) | (V & ~M)`.
 *
 * Band. With n ≤ m the middles' lengths, Δ = m − n and D = n + m − 2·need the largest Indel distance that passes, an
 * optimal alignment of a passing pair stays on the diagonals −e ≤ j − i ≤ Δ + e, e = ⌊(D − Δ)/2⌋. Each column updates
 * only the words [lo, hi] holding the band's rows, with carry 0 into word lo: the exact recurrence on a sub-graph of
 * the LCS grid that holds every path of the band, so the result R ≤ LCS, and R = LCS when LCS ≥ needed.
 *
 * Cut-off (after Ukkonen). A passing path crosses column j at a row i with `L'[i][j] + min(n − i, m − j) ≥ need`.
 * Every {@link CHECK_EVERY} columns {@link narrow} bounds each word of the window by its zeros: words at the top that
 * cannot hold such a row are frozen (the path only goes down), the slack of the others stops the window growing at
 * the bottom, and when no word can hold it the answer is "no" (unrelated texts stop after about a quarter of the
 * columns at 0.9).
 */
function lcsAtLeast(x: string, y: string, needed: number): number {
  const xIsRows = x.length <= y.length;
  const a = xIsRows ? x : y; // rows: the bit vector
  const b = xIsRows ? y : x; // columns
  let prefix = 0;
  while (prefix < a.length && a.charCodeAt(prefix) === b.charCodeAt(prefix)) prefix += 1;
  let suffix = 0;
  while (suffix < a.length - prefix && a.charCodeAt(a.length - 1 - suffix) === b.charCodeAt(b.length - 1 - suffix)) {
    suffix += 1;
  }
  const common = prefix + suffix;
  const n = a.length - common;
  const m = b.length - common;
  const need = needed - common; // what the middles must still reach
  if (n === 0 || m === 0) return common >= needed ? common : -1;
  if (need > n) return -1;

  // Alphabet: only characters in both middles get a mask; columns of other characters change nothing.
  for (let j = 0; j < m; j += 1) alphabetId[b.charCodeAt(prefix + j)] = -2;
  let size = 0;
  for (let i = 0; i < n; i += 1) {
    const code = a.charCodeAt(prefix + i);
    if (alphabetId[code] === -2) {
      alphabetId[code] = size;
      size += 1;
    }
  }
  const column = new Int32Array(m);
  for (let j = 0; j < m; j += 1) {
    const id = alphabetId[b.charCodeAt(prefix + j)] as number;
    column[j] = id < 0 ? -1 : id;
  }
  const words = Math.ceil(n / WORD_BITS);
  const masks = new Int32Array(size * words);
  for (let i = 0; i < n; i += 1) {
    const id = alphabetId[a.charCodeAt(prefix + i)] as number;
    if (id >= 0) {
      const w = (i / WORD_BITS) | 0;
      const at = id * words + w;
      masks[at] = (masks[at] as number) | (1 << (i - w * WORD_BITS));
    }
  }
  for (let j = 0; j < m; j += 1) alphabetId[b.charCodeAt(prefix + j)] = -1;
  if (size === 0) return common >= needed ? common : -1;

  const delta = m - n;
  const reach = n + m - 2 * Math.max(need, 0); // D: the largest Indel distance that passes (≥ delta)
  const e = (reach - delta) >> 1;
  const lcs = bandLcs(masks, column, n, words, delta, e, need);
  return lcs < 0 ? -1 : lcs + common >= needed ? lcs + common : -1;
}

/**
 * The loop of {@link lcsAtLeast} over the columns: the middles' LCS R, or -1 when the cut-off proves it below
 * `need`. The rare steps (freezing words, the cut-off) are functions of their own so that this loop stays hot.
 */
function bandLcs(
  masks: Int32Array,
  column: Int32Array,
  n: number,
  words: number,
  delta: number,
  e: number,
  need: number,
): number {
  const m = column.length;
  const cutOff = need > 0;
  // 30-bit words: every intermediate value (v + u + carry < 2^31) stays a small integer.
  const v = new Int32Array(words).fill(WORD_MASK);
  let lo = 0; // first word of the window
  let hi = 0; // last word of the window
  let frozen = 0; // zero bits in the words above it
  let lowest = -e; // the lowest diagonal j − i a passing path can use from here on
  let nextCheck = CHECK_EVERY;
  const out = new Int32Array(1);
  for (let j = 1; j <= m; j += 1) {
    // The band's rows in column j are j − Δ − e .. j − lowest, i.e. bits one less.
    const bandLo = ((j - delta - e - 1) / WORD_BITS) | 0;
    if (bandLo > lo) {
      frozen += zerosIn(v, lo, bandLo);
      lo = bandLo;
    }
    const bandHi = Math.min(words - 1, ((j - lowest - 1) / WORD_BITS) | 0);
    if (bandHi > hi) hi = bandHi;
    const id = column[j - 1] as number;
    if (id >= 0) lcsStep(v, masks, id * words, lo, hi);
    if (cutOff && j === nextCheck) {
      nextCheck += CHECK_EVERY;
      const top = narrow(v, lo, hi, frozen, n, j, m, delta, need, out);
      if (top < 0) return -1;
      if (top > lo) {
        frozen += zerosIn(v, lo, top);
        lo = top;
      }
      if ((out[0] as number) > lowest) lowest = out[0] as number;
    }
  }
  return frozen + zerosIn(v, lo, words);
}

/** Zero bits in words [from, to) of V. */
function zerosIn(v: Int32Array, from: number, to: number): number {
  let zeros = 0;
  for (let k = from; k < to; k += 1) zeros += zerosOf(v[k] as number);
  return zeros;
}

/**
 * The cut-off of {@link lcsAtLeast} in column j: the first word of the window [lo, hi] where a passing path may
 * still be, or -1 when it can be nowhere; `out[0]` gets the lowest diagonal it can use in the columns to come.
 * A row of word w has `L' ≤ frozen + zeros of words lo..w` and can add at most `min(n − 30w − 1, m − j)`; that bound
 * minus `need` is its slack s (half the Indel distance it may still spend), and a path through it goes no lower
 * than the diagonal min(k, Δ) − s.
 */
function narrow(
  v: Int32Array,
  lo: number,
  hi: number,
  frozen: number,
  n: number,
  j: number,
  m: number,
  delta: number,
  need: number,
  out: Int32Array,
): number {
  const left = m - j;
  let top = -1;
  let lowest = delta;
  let slack = frozen + Math.min(n - lo * WORD_BITS, left) - need;
  if (slack >= 0) {
    top = lo;
    lowest = Math.min(j - lo * WORD_BITS, delta) - slack;
  }
  let above = frozen;
  for (let k = lo; k <= hi; k += 1) {
    above += zerosOf(v[k] as number);
    slack = above + Math.min(n - k * WORD_BITS - 1, left) - need;
    if (slack >= 0) {
      if (top < 0) top = k;
      const reach = Math.min(j - k * WORD_BITS - WORD_BITS, delta) - slack;
      if (reach < lowest) lowest = reach;
    }
  }
  out[0] = lowest;
  return top;
}

/**
 * The LCS of `x` with `y.slice(s)` for every `s` in `starts`, exactly: one bit-parallel pass over `y` from its end
 * down to the smallest start, `x` read backwards as the bit vector, so that after column s the zeros of V are the LCS
 * of `x` and `y.slice(s)`. O(|x|·(|y| − min start)/30), however many starts.
 */
function suffixLcs(x: string, y: string, starts: readonly number[]): Map<number, number> {
  const result = new Map<number, number>();
  const order = [...new Set(starts)].sort((p, q) => q - p); // descending
  const n = x.length;
  const codes: number[] = [];
  for (let i = 0; i < n; i += 1) {
    const code = x.charCodeAt(i);
    if (alphabetId[code] === -1) {
      alphabetId[code] = codes.length;
      codes.push(code);
    }
  }
  const words = Math.max(1, Math.ceil(n / WORD_BITS));
  const masks = new Int32Array(codes.length * words);
  for (let i = 0; i < n; i += 1) {
    const row = n - 1 - i; // x backwards
    const w = (row / WORD_BITS) | 0;
    const at = (alphabetId[x.charCodeAt(i)] as number) * words + w;
    masks[at] = (masks[at] as number) | (1 << (row - w * WORD_BITS));
  }
  const last = order.length > 0 ? (order[order.length - 1] as number) : y.length;
  const column = new Int32Array(Math.max(0, y.length - last));
  for (let j = last; j < y.length; j += 1) column[j - last] = alphabetId[y.charCodeAt(j)] as number;
  for (const code of codes) alphabetId[code] = -1;
  const v = new Int32Array(words).fill(WORD_MASK);
  let next = 0; // the next start to record, in `order`
  for (let j = y.length; j >= last; j -= 1) {
    if (j < y.length) {
      const id = column[j - last] as number;
      if (id >= 0) lcsStep(v, masks, id * words, 0, words - 1);
    }
    while (next < order.length && order[next] === j) {
      result.set(j, zerosIn(v, 0, words));
      next += 1;
    }
  }
  return result;
}

/** One column of the bit-parallel LCS on words [lo, hi] of V, carry 0 into word lo (see {@link lcsAtLeast}). */
function lcsStep(v: Int32Array, masks: Int32Array, base: number, lo: number, hi: number): void {
  let carry = 0;
  for (let k = lo; k <= hi; k += 1) {
    const vk = v[k] as number;
    const u = vk & (masks[base + k] as number);
    const sum = vk + u + carry;
    carry = sum >>> WORD_BITS;
    v[k] = (sum | (vk - u)) & WORD_MASK; // vk − u = vk & ~mask: u's bits are vk's
  }
}

/**
 * Length of the longest common subsequence of two strings (UTF-16 code units), bit-parallel: O(n·m/30).
 *
 * @example
 * ```ts
 * lcsLength("kitten", "sitting"); // 4 ("ittn")
 * ```
 */
export function lcsLength(x: string, y: string): number {
  return lcsAtLeast(x, y, 0);
}

/**
 * A string after {@link processForRatio} (`text`) with the count of each UTF-16 code unit in it, for the exact
 * upper bound.
 */
interface Prepared {
  text: string;
  counts: Map<number, number>;
}

const preparedCache = new Map<string, Prepared>();

/**
 * Processed form and histogram of a string, kept for the 32 most recent strings of at most 128 Ki characters (4 Mi
 * in all): an output is compared with 5 others a turn and again on later turns, and preparing one costs more than a
 * turn's guarding.
 *
 * @example
 * ```ts
 * prepare("Hello, World!").text; // "hello world"
 * ```
 */
export function prepare(raw: string): Prepared {
  const cached = preparedCache.get(raw);
  if (cached !== undefined) return cached;
  const text = processForRatio(raw);
  const counts = new Map<number, number>();
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    counts.set(code, (counts.get(code) ?? 0) + 1);
  }
  const prepared = { text, counts };
  if (raw.length > 1 << 17) return prepared;
  preparedCache.set(raw, prepared);
  if (preparedCache.size > 32) preparedCache.delete(preparedCache.keys().next().value as string);
  return prepared;
}

/**
 * Characters the two histograms share (with multiplicity): an upper bound of the LCS.
 *
 * @example
 * ```ts
 * sharedCharacters(prepare("abba"), prepare("bab")); // 3
 * ```
 */
export function sharedCharacters(pa: Prepared, pb: Prepared): number {
  const [small, large] = pa.counts.size <= pb.counts.size ? [pa.counts, pb.counts] : [pb.counts, pa.counts];
  let shared = 0;
  for (const [code, count] of small) shared += Math.min(count, large.get(code) ?? 0);
  return shared;
}

/**
 * The Indel score of two processed strings when `score / 100 >= threshold` (exact, fuzzball's rounding), else -1;
 * an empty string scores 0, as in fuzzball. Pairs are ruled out by the histograms, then by {@link lcsAtLeast}.
 *
 * @example
 * ```ts
 * preparedScoreAtLeast(prepare("Checking the database..."), prepare("Checking the database!"), 0.9); // 100
 * ```
 */
export function preparedScoreAtLeast(pa: Prepared, pb: Prepared, threshold: number): number {
  const n = pa.text.length;
  const m = pb.text.length;
  if (n === 0 || m === 0) return 0 / 100 >= threshold ? 0 : -1; // fuzzball scores an empty string 0
  const lensum = n + m;
  const needed = minLcsForScore(minScoreFor(threshold), lensum, Math.min(n, m));
  if (needed > Math.min(n, m) || sharedCharacters(pa, pb) < needed) return -1;
  const lcs = lcsAtLeast(pa.text, pb.text, needed);
  return lcs >= needed ? scoreFromLcs(lcs, lensum) : -1;
}

/**
 * The windows {@link partialRatio} scores: for each matching block `[i, j, size]`, the window of the longer string
 * that starts at `max(j − i, 0)` (n long, or less at its end), each start once, with an exact upper bound of its
 * score (the characters it shares with the shorter string, counted in one sweep), best bound first.
 */
function windowsOf(shorter: string, longer: string): { start: number; bound: number }[] {
  const n = shorter.length;
  const starts = [...new Set(matchingBlocks(shorter, longer).map(([i, j]) => Math.max(j - i, 0)))].sort(
    (x, y) => x - y,
  );
  const need = new Map<number, number>(); // shorter's histogram minus the window's
  for (let i = 0; i < n; i += 1) need.set(shorter.charCodeAt(i), (need.get(shorter.charCodeAt(i)) ?? 0) + 1);
  let shared = 0; // Σ min(shorter's count, window's count)
  let from = 0;
  let to = 0; // the window is longer[from, to)
  const add = (code: number) => {
    const left = need.get(code);
    if (left === undefined) return;
    if (left > 0) shared += 1;
    need.set(code, left - 1);
  };
  const remove = (code: number) => {
    const left = need.get(code);
    if (left === undefined) return;
    if (left >= 0) shared -= 1;
    need.set(code, left + 1);
  };
  const windows: { start: number; bound: number }[] = [];
  for (const start of starts) {
    const end = Math.min(start + n, longer.length);
    for (; from < start; from += 1) if (from < to) remove(longer.charCodeAt(from));
    if (to < from) to = from;
    for (; to < end; to += 1) add(longer.charCodeAt(to));
    windows.push({ start, bound: scoreFromLcs(Math.min(shared, end - start), n + end - start) });
  }
  return windows.sort((x, y) => y.bound - x.bound || x.start - y.start);
}

/**
 * `fuzz.partial_ratio(a, b)` (0..100) when it is at least `minScore`, exactly, else -1. fuzzball's algorithm: the
 * shorter processed string (the first at equal lengths) against the window of the longer that each of difflib's
 * matching blocks points at, scored with the Indel ratio; the best score. Computed with the same result but less
 * work: pairs and windows whose exact upper bound is below `minScore` are skipped, the windows that reach the end of
 * the longer string are scored in one pass ({@link suffixLcs}), the others best bound first, each LCS only as far as
 * it can still beat the best so far.
 */
function partialScoreAtLeast(a: string, b: string, minScore: number): number {
  if (typeof a !== "string" || typeof b !== "string") return minScore <= 0 ? 0 : -1;
  const prepared = [prepare(a), prepare(b)] as const;
  const pa = prepared[0].text;
  const pb = prepared[1].text;
  if (pa.length === 0 || pb.length === 0) return minScore <= 0 ? 0 : -1;
  if (minScore > 100) return -1;
  const [shorter, longer] = pa.length <= pb.length ? [pa, pb] : [pb, pa];
  const n = shorter.length;
  const m = longer.length;
  // No window (w ≤ n long, LCS ≤ min(w, shared characters)) scores more than a window of `shared` characters.
  const shared = Math.min(sharedCharacters(prepared[0], prepared[1]), n);
  if (scoreFromLcs(shared, n + shared) < minScore) return -1;
  const windows = windowsOf(shorter, longer).filter(({ bound }) => bound >= minScore);
  let best = -1;
  const suffixes = windows.filter(({ start }) => start + n >= m).map(({ start }) => start);
  for (const [start, lcs] of suffixLcs(shorter, longer, suffixes)) {
    best = Math.max(best, scoreFromLcs(lcs, n + m - start));
  }
  for (const { start, bound } of windows) {
    if (best === 100 || bound <= best) break;
    if (start + n >= m) continue;
    const lensum = 2 * n; // a window that ends before the end of the longer string is n long
    const needed = minLcsForScore(Math.max(best + 1, minScore), lensum, n);
    const lcs = lcsAtLeast(shorter, longer.slice(start, start + n), needed);
    if (lcs >= needed) best = scoreFromLcs(lcs, lensum);
  }
  return best >= minScore ? best : -1;
}

/**
 * The best similarity of the shorter string to a window of the longer, 0..1: exactly `fuzz.partial_ratio(a, b) /
 * 100` (fuzzball's processing, the windows difflib's matching blocks point at, its autojunk heuristic included),
 * without fuzzball. As fuzzball's, it is not symmetric for two strings of one length (the first is "the shorter"),
 * and a string inside a longer one (200 characters or more) can score low when its characters are frequent there
 * (difflib's autojunk: `partialRatio("aaaa", "xaaaa" + "y".repeat(250))` is 0).
 *
 * @example
 * ```ts
 * partialRatio("user data", "Processing the user data..."); // 1
 * ```
 */
export function partialRatio(a: string, b: string): number {
  return Math.max(0, partialScoreAtLeast(a, b, 0)) / 100;
}

/**
 * {@link partialRatio} when it is at least `threshold`, else `undefined`: the loop detector's decision, without
 * the exact score of pairs that fail it (windows whose bound is below the threshold are not scored).
 *
 * @example
 * ```ts
 * partialRatioAtLeast("user data", "Processing the user data...", 0.9); // 1
 * partialRatioAtLeast("user data", "Writing the report...", 0.9); // undefined
 * ```
 */
export function partialRatioAtLeast(a: string, b: string, threshold: number): number | undefined {
  const score = partialScoreAtLeast(a, b, minScoreFor(threshold));
  return score < 0 ? undefined : score / 100;
}

/** The processed string with its words sorted by UTF-16 code units (the histogram is the processed string's). */
function sortedWords(raw: string): Prepared {
  const { text, counts } = prepare(raw);
  return { text: text.length === 0 ? text : text.split(" ").sort().join(" "), counts };
}

/**
 * Similarity after sorting the words of each string, 0..1: word order is ignored. Exactly
 * `fuzz.token_sort_ratio(a, b) / 100` (fuzzball's processing, words sorted by UTF-16 code units), without fuzzball.
 *
 * @example
 * ```ts
 * tokenSortRatio("user data processing", "processing user data"); // 1
 * ```
 */
export function tokenSortRatio(a: string, b: string): number {
  if (typeof a !== "string" || typeof b !== "string") return 0;
  return indelScore(sortedWords(a).text, sortedWords(b).text) / 100;
}

/**
 * {@link tokenSortRatio} when it is at least `threshold`, else `undefined`, decided as the loop detector decides
 * `ratio` (histogram bound, then the banded LCS with its cut-off, on the sorted strings).
 *
 * @example
 * ```ts
 * tokenSortRatioAtLeast("user data processing", "processing user data", 0.9); // 1
 * ```
 */
export function tokenSortRatioAtLeast(a: string, b: string, threshold: number): number | undefined {
  if (typeof a !== "string" || typeof b !== "string") return 0 >= threshold ? 0 : undefined;
  const score = preparedScoreAtLeast(sortedWords(a), sortedWords(b), threshold);
  return score < 0 ? undefined : score / 100;
}
