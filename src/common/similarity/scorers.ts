import {
  indelScore,
  lcsAtLeast,
  minLcsForScore,
  type Prepared,
  prepare,
  preparedScoreAtLeast,
  scoreFromLcs,
  sharedCharacters,
  suffixLcs,
} from "./indel.js";
import { matchingBlocks } from "./matching-blocks.js";

/**
 * The windows {@link partialScore} scores: for each matching block `[i, j, size]` of the shorter string (length n)
 * in the longer, the window of the longer that starts at `max(j − i, 0)` (n long, or shorter at its end), each start
 * once, with an exact upper bound of its score (the characters the window shares with the shorter string, counted
 * in one sweep over the starts in ascending order), best bound first.
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

/** The smallest integer score s with `s / 100 >= threshold` (the comparison the loop detector makes), or 101. */
function minScoreFor(threshold: number): number {
  let score = 0;
  while (score <= 100 && !(score / 100 >= threshold)) score += 1;
  return score;
}

/**
 * `fuzz.partial_ratio(a, b)` (0..100) when it is at least `minScore`, exactly, else -1.
 *
 * fuzzball's algorithm (fuzzywuzzy's, on difflib): the shorter processed string (the first one when both have one
 * length) against the window of the longer that each matching block of difflib's `SequenceMatcher(None, shorter,
 * longer)` points at (start `max(j − i, 0)`, the shorter's length, or less at the end), scored with the Indel ratio
 * and fuzzball's rounding; the best score. Computed differently, with the same result: a pair whose characters in
 * common cannot make any window reach `minScore` is not compared; windows whose exact upper bound (characters in
 * common with the window) is below `minScore` are skipped; those that reach the end of the longer string are its suffixes, all scored
 * in one bit-parallel pass ({@link suffixLcs}); the others best bound first, each LCS only as far as it can still
 * beat the best score so far and reach `minScore` (the loop detector's cut-off), until 100 or until no bound left
 * can beat the best.
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
 * `fuzz.partial_ratio(a, b)`, exactly: 0..100 (see {@link partialRatio}).
 *
 * @example
 * ```ts
 * partialScore("user data", "Processing the user data..."); // 100
 * ```
 */
export function partialScore(a: string, b: string): number {
  return Math.max(0, partialScoreAtLeast(a, b, 0));
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
  return partialScore(a, b) / 100;
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

/** The processed string with its words sorted (JavaScript's default sort: by UTF-16 code units), and its histogram
 * (the processed string's: sorting moves characters, it adds or removes none). */
function sortedWords(raw: string): Prepared {
  const { text, counts } = prepare(raw);
  return { text: text.length === 0 ? text : text.split(" ").sort().join(" "), counts };
}

/**
 * `fuzz.token_sort_ratio(a, b)`, exactly: 0..100. fuzzball's processing (as `ratio`'s), the words (split on the one
 * space between them) sorted by UTF-16 code units and joined by one space, then the Indel ratio with fuzzball's
 * rounding, computed with the bit-parallel LCS.
 *
 * @example
 * ```ts
 * tokenSortScore("user data processing", "Processing: user data"); // 100
 * ```
 */
export function tokenSortScore(a: string, b: string): number {
  if (typeof a !== "string" || typeof b !== "string") return 0;
  return indelScore(sortedWords(a).text, sortedWords(b).text);
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
  return tokenSortScore(a, b) / 100;
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
