// fuzzball's `ratio`, `partial_ratio` and `token_sort_ratio`, exact: its processing and rounding, a bit-parallel LCS.
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
 * fuzzball's Indel ratio (0..100) from the LCS and the total length, written as fuzzball does so floats round alike.
 */
export function scoreFromLcs(lcs: number, lensum: number): number {
  const distance = lensum - 2 * lcs;
  return Math.round(100 * ((lensum - distance) / lensum));
}

/** fuzzball's Indel score (0..100) of two processed strings: 0 when either is empty. */
export function indelScore(a: string, b: string): number {
  if (a.length === 0 || b.length === 0) return 0;
  return scoreFromLcs(lcsLength(a, b), a.length + b.length);
}

/** The smallest integer score s with `s / 100 >= threshold` (the detector's comparison); 101 for none or NaN. */
function minScoreFor(threshold: number): number {
  let score = 0;
  while (score <= 100 && !(score / 100 >= threshold)) score += 1;
  return score;
}

/**
 * The smallest LCS scoring at least `score` (`shorter + 1` when none does): bisection on {@link scoreFromLcs} itself,
 * so that no algebra rounds differently from the score reported.
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

/** Code unit → alphabet id of the pair (-1 absent, -2 in the column string only); scratch, reset to -1 on return. */
const alphabetId = new Int32Array(0x10000).fill(-1);

/**
 * The LCS of `x` and `y` (UTF-16 code units), exact when it is at least `needed`, else below it (-1); `needed <= 0`:
 * the exact LCS. After the common prefix and suffix, the shorter string is the bit vector V (30 bits a word; bit i is
 * 0 when row i+1 adds one to the column's LCS), the longer read column by column: `V' = (V + (V & M)) | (V & ~M)`.
 * Band: with n ≤ m the middles' lengths, Δ = m − n and D = n + m − 2·need, a passing alignment stays on diagonals
 * −e ≤ j − i ≤ Δ + e, e = ⌊(D − Δ)/2⌋; each column updates only the words holding the band (carry 0 into the
 * first), so the result R ≤ LCS, and R = LCS when LCS ≥ needed. Cut-off (after Ukkonen): every {@link CHECK_EVERY}
 * columns {@link narrow} freezes the top words that can no longer hold a passing path, and answers "no" when none can.
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

/** {@link lcsAtLeast}'s column loop: the middles' LCS, or -1 below `need`; rare steps live apart to keep it hot. */
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

function zerosIn(v: Int32Array, from: number, to: number): number {
  let zeros = 0;
  for (let k = from; k < to; k += 1) zeros += zerosOf(v[k] as number);
  return zeros;
}

/**
 * The cut-off in column j: the first word of [lo, hi] where a passing path may still be, or -1; `out[0]` gets the
 * lowest diagonal it can use from here. A row of word w has `L' ≤ frozen + zeros of words lo..w` and can add at
 * most `min(n − 30w − 1, m − j)`: that minus `need` is its slack s; a path through it goes no lower than min(k, Δ) − s.
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
 * The LCS of `x` with `y.slice(s)` for every `s` in `starts`: one pass over `y` from its end, `x` reversed as the bit
 * vector, so that after column s the zeros of V are that LCS.
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

/** Length of the longest common subsequence of two strings (UTF-16 code units), bit-parallel: O(n·m/30). */
export function lcsLength(x: string, y: string): number {
  return lcsAtLeast(x, y, 0);
}

/** A string after {@link processForRatio}, with its code-unit histogram for the exact upper bound. */
interface Prepared {
  text: string;
  counts: Map<number, number>;
}

const preparedCache = new Map<string, Prepared>();

/**
 * Processed form and histogram of a string, cached for the 32 latest strings of at most 128 Ki characters: an output
 * is compared with several others a turn, and again on later turns.
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

/** Characters the two histograms share (with multiplicity): an upper bound of the LCS. */
export function sharedCharacters(pa: Prepared, pb: Prepared): number {
  const [small, large] = pa.counts.size <= pb.counts.size ? [pa.counts, pb.counts] : [pb.counts, pa.counts];
  let shared = 0;
  for (const [code, count] of small) shared += Math.min(count, large.get(code) ?? 0);
  return shared;
}

/**
 * The Indel score of two processed strings when `score / 100 >= threshold` (exact, fuzzball's rounding), else -1;
 * an empty string scores 0, as in fuzzball. Pairs are ruled out by the histograms, then by {@link lcsAtLeast}.
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
 * The windows {@link partialRatio} scores: per matching block `[i, j, size]`, the window of the longer string from
 * `max(j − i, 0)`, each start once, with an exact bound of its score (shared characters), best bound first.
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
 * `fuzz.partial_ratio(a, b)` (0..100) when at least `minScore`, else -1. fuzzball's algorithm (the shorter processed
 * string, the first at equal lengths, against the window of the longer each difflib matching block points at; the
 * best Indel score) with less work: windows bounded below `minScore` are skipped, those reaching the end are scored
 * in one pass ({@link suffixLcs}), the others best bound first, each LCS only as far as it can still win.
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

/** {@link partialRatio} when it is at least `threshold`, else `undefined` (windows bounded below it are not scored). */
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

/** {@link tokenSortRatio} when it is at least `threshold`, else `undefined`, decided as `ratio` is, on sorted words. */
export function tokenSortRatioAtLeast(a: string, b: string, threshold: number): number | undefined {
  if (typeof a !== "string" || typeof b !== "string") return 0 >= threshold ? 0 : undefined;
  const score = preparedScoreAtLeast(sortedWords(a), sortedWords(b), threshold);
  return score < 0 ? undefined : score / 100;
}
