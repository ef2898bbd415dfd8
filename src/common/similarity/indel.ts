// The Indel ratio as fuzzball computes it, fast: fuzzball's processing, its rounding, and an exact bit-parallel
// LCS with a threshold cut-off. Shared by `ratio` (similarity.ts) and the two other scorers (scorers.ts).

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
 * The smallest LCS whose score passes `threshold` the way a caller compares it (`score / 100 >= threshold`) for two
 * non-empty strings of total length `lensum`, the shorter `shorter` long; `shorter + 1` when no LCS passes (also for
 * a NaN threshold). Found by bisection with {@link scoreFromLcs} itself, which is non-decreasing in the LCS (`2·lcs`
 * is exact, and division by a positive number, `* 100` and `Math.round` are monotone), so no algebra can round
 * differently from the score that is reported.
 *
 * @example
 * ```ts
 * minLcs(0.9, 200, 100); // 90
 * ```
 */
function minLcs(threshold: number, lensum: number, shorter: number): number {
  return minLcsWhere((score) => score / 100 >= threshold, lensum, shorter);
}

/**
 * The smallest LCS whose score is at least `score` (an integer), as {@link minLcs}: `shorter + 1` when none is.
 *
 * @example
 * ```ts
 * minLcsForScore(90, 200, 100); // 90
 * ```
 */
export function minLcsForScore(score: number, lensum: number, shorter: number): number {
  return minLcsWhere((s) => s >= score, lensum, shorter);
}

/** The bisection of {@link minLcs} for any test of the score that holds from some score on. */
function minLcsWhere(accepts: (score: number) => boolean, lensum: number, shorter: number): number {
  const passes = (lcs: number) => accepts(scoreFromLcs(lcs, lensum));
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
/** Columns between two checks of the cut-off (a check costs a few words; see {@link lcsAtLeast}). */
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
 * @example
 * ```ts
 * lcsAtLeast("kitten", "sitting", 4); // 4
 * lcsAtLeast("kitten", "sitting", 5); // -1
 * ```
 *
 * The shorter string (after the common prefix and suffix are removed, which changes neither the Indel distance nor
 * the decision) is the bit vector V, 30 bits a word, and the longer one is processed column by column with the
 * bit-parallel LCS step (Allison–Dix / Hyyrö): `V' = (V + (V & M)) | (V & ~M)`. Bit i of V is 0 when row i+1
 * adds one to the LCS of the column; the carry that enters bit i is the horizontal difference `L[i][j] − L[i][j−1]`
 * of row i (checked case by case: for v = 0 the new bit is the carry and no carry leaves; for v = 1 and a match the
 * new bit is the carry and 1 leaves; for v = 1 and no match the bit stays 1 and the carry passes through).
 *
 * Band. In terms of the middles (n ≤ m their lengths, `need` what their LCS must reach), Δ = m − n and
 * D = n + m − 2·need is the largest Indel distance that can still pass; a path through cell (i, j) costs at least
 * |j − i| to get there plus |(m − j) − (n − i)| to finish, so every optimal alignment of a pair that passes stays
 * on the diagonals k = j − i with −e ≤ k ≤ Δ + e, e = ⌊(D − Δ)/2⌋ (D + 1 rows at most, about D/30 words, a column).
 * Each column updates only the words [lo, hi] that hold the band's rows, with carry 0 into word lo. That is the
 * exact recurrence on a sub-graph of the LCS grid: rows above the window keep their values (only the horizontal
 * edge: carry 0 means `L[top][j] = L[top][j−1]`), rows below it that were never updated copy the row above (all
 * ones: only the vertical edge), rows in the window get all three edges; `lo` and `hi` never move up. A longest
 * path in a sub-graph is no longer than in the whole grid, so the result R ≤ LCS always; and every path inside the
 * band is in the sub-graph, so R ≥ the best path in the band, which is the LCS when LCS ≥ needed. Hence R ≥ needed
 * exactly when LCS ≥ needed, and then R = LCS.
 *
 * Cut-off and narrowing (after Ukkonen). If the LCS reaches `need`, an optimal path crosses column j at some row i
 * with `L'[i][j] + min(n − i, m − j) ≥ need`: its prefix is in the sub-graph (so `L'` there is the true value)
 * and its rest adds at most that much. Every {@link CHECK_EVERY} columns {@link narrow} bounds each word of the
 * window (`L'` of a row ≤ the zeros up to the end of its word). Words at the top whose bound, and every bound above
 * them, is below `need` can hold no such row, now nor later (the path only goes down): they are frozen. The slack
 * of the words that may hold it limits how far below the diagonal the path can still go, which stops the window
 * from growing at the bottom (`hi` then grows more slowly but still never moves up). Both keep the sub-graph
 * argument with every passing path inside the window. When no word may hold it, the answer is "no": pairs far from
 * the threshold stop early (unrelated texts after about a quarter of the columns at 0.9), and near it the window
 * narrows as the threshold comes out of reach (a third fewer words at 0.87–0.89).
 */
export function lcsAtLeast(x: string, y: string, needed: number): number {
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
 * The loop of {@link lcsAtLeast} over the columns: the middles' LCS R (see there), or -1 when the cut-off proves
 * it below `need`. Kept apart, with the rare steps (freezing words, the cut-off) in functions of their own, so that
 * V8 optimizes it once: a rarely taken branch inside it without type feedback would deoptimize it again and again.
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
  // 30-bit words: every intermediate value (v + u + carry < 2^31) stays a small integer, which V8 keeps unboxed.
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
 *
 * A row i of word w (rows 30w + 1 .. 30w + 30) has `L'[i][j] ≤ frozen + zeros of words lo..w` and can add at most
 * `min(n − i, m − j) ≤ min(n − 30w − 1, m − j)`; the row just above the window has `L' = frozen`. The slack s of a
 * row is that bound minus `need`: a passing path through it has s ≥ 0, and s is half the Indel distance it may
 * still spend beyond the least (the cost so far plus |Δ − k|, k = j − i ≥ j − 30w − 30). Going on to (n, m), a path
 * that goes down to a diagonal k' below min(k, Δ) makes k − k' vertical and Δ − k' horizontal steps, 2·(min(k, Δ)
 * − k') more than |Δ − k|, so k' ≥ min(k, Δ) − s. Rows below `hi` are outside the band.
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
 * The LCS of `x` with each suffix `y.slice(s)` of `y`, for every `s` in `starts` (0 ≤ s ≤ y.length), exactly: one
 * bit-parallel pass over `y` from its end down to the smallest start, with `x` read backwards as the bit vector, so
 * that after column s the zeros of V are the LCS of `x` and `y.slice(s)` (the reverse of a prefix of the reversed
 * `y`). Costs O(|x|·(|y| − min start)/30), however many starts.
 *
 * @example
 * ```ts
 * suffixLcs("abc", "xxabcx", [0, 3, 6]); // Map { 0 → 3, 3 → 2, 6 → 0 }
 * ```
 */
export function suffixLcs(x: string, y: string, starts: readonly number[]): Map<number, number> {
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

/** One column of the bit-parallel LCS on words [lo, hi] of V, with the match mask of the column's character at
 * `masks[base ..]` and carry 0 into word lo (see {@link lcsAtLeast}). */
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
 * Length of the longest common subsequence of two strings (UTF-16 code units), bit-parallel: O(n·m/30) with 30-bit
 * words and carry propagation (Allison–Dix / Hyyrö). The common prefix and suffix are counted directly.
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
 * A processed string with its character histogram, for the exact upper bound.
 *
 * @example
 * ```ts
 * const { text, counts }: Prepared = prepare("Hello!"); // "hello", l → 2
 * ```
 */
export interface Prepared {
  /** The string after {@link processForRatio}. */
  text: string;
  /** How often each UTF-16 code unit occurs in `text`. */
  counts: Map<number, number>;
}

const preparedCache = new Map<string, Prepared>();

/**
 * Processed form and histogram of a string, cached for the few most recent strings (outputs are compared 5×).
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
  const needed = minLcs(threshold, lensum, Math.min(n, m));
  if (needed > Math.min(n, m) || sharedCharacters(pa, pb) < needed) return -1;
  const lcs = lcsAtLeast(pa.text, pb.text, needed);
  return lcs >= needed ? scoreFromLcs(lcs, lensum) : -1;
}
