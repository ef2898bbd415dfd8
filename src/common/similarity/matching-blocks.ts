/** A block of equal characters: `a.slice(i, i + size) === b.slice(j, j + size)`. */
type MatchingBlock = readonly [i: number, j: number, size: number];

/** What the longest-match search reads: `b`'s positions by character (autojunk applied), `a`'s characters as groups. */
interface Tables {
  a: string;
  b: string;
  groupOfA: Int32Array;
  /** Group g holds `positions[start[g] .. start[g + 1])`. */
  start: Int32Array;
  positions: Int32Array;
  /** Run lengths ending at (i, j), at j + 1, by row parity; `*Rows`: the row each entry was written in (else 0). */
  evenLengths: Int32Array;
  oddLengths: Int32Array;
  evenRows: Int32Array;
  oddRows: Int32Array;
  row: number;
}

/** Character code → group in `b` (scratch, reset to -1 before {@link tablesOf} returns). */
const groupOf = new Int32Array(0x10000).fill(-1);

/**
 * difflib's `__chain_b` (`isjunk = None`, `autojunk = True`): when `b` has 200 characters or more, one occurring more
 * than `⌊len(b) / 100⌋ + 1` times ("popular") gets no positions (a match found elsewhere still extends over it).
 */
function tablesOf(a: string, b: string): Tables {
  const counts: number[] = [];
  const codes: number[] = [];
  for (let j = 0; j < b.length; j += 1) {
    const code = b.charCodeAt(j);
    let group = groupOf[code] as number;
    if (group < 0) {
      group = codes.length;
      groupOf[code] = group;
      codes.push(code);
      counts.push(0);
    }
    counts[group] = (counts[group] as number) + 1;
  }
  const popularAbove = b.length >= 200 ? Math.floor(b.length / 100) + 1 : Number.POSITIVE_INFINITY;
  const start = new Int32Array(codes.length + 1);
  for (let g = 0; g < codes.length; g += 1) {
    const count = counts[g] as number;
    start[g + 1] = (start[g] as number) + (count > popularAbove ? 0 : count);
  }
  const positions = new Int32Array(start[codes.length] as number);
  const filled = start.slice(0, codes.length);
  for (let j = 0; j < b.length; j += 1) {
    const group = groupOf[b.charCodeAt(j)] as number;
    if ((counts[group] as number) > popularAbove) continue;
    positions[filled[group] as number] = j;
    filled[group] = (filled[group] as number) + 1;
  }
  const groupOfA = new Int32Array(a.length);
  for (let i = 0; i < a.length; i += 1) groupOfA[i] = groupOf[a.charCodeAt(i)] as number;
  for (const code of codes) groupOf[code] = -1;
  const lengths = () => new Int32Array(b.length + 1);
  const rows = () => new Int32Array(b.length + 1).fill(-2);
  return {
    a,
    b,
    groupOfA,
    start,
    positions,
    evenLengths: lengths(),
    oddLengths: lengths(),
    evenRows: rows(),
    oddRows: rows(),
    row: 0,
  };
}

/** The first index in `positions[from .. to)` (ascending) whose position is at least `j`. */
function firstAtLeast(positions: Int32Array, from: number, to: number, j: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((positions[mid] as number) < j) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** difflib's `find_longest_match`: the longest (first-ending) block from an unpopular character, widened by equals. */
function longestMatch(t: Tables, alo: number, ahi: number, blo: number, bhi: number): MatchingBlock {
  let besti = alo;
  let bestj = blo;
  let best = 0;
  t.row += 1; // a gap: the first row of this search reads no run of the last search
  for (let i = alo; i < ahi; i += 1) {
    t.row += 1;
    const group = t.groupOfA[i] as number;
    if (group < 0) continue;
    const row = t.row;
    const odd = (row & 1) === 1;
    const lengths = odd ? t.oddLengths : t.evenLengths;
    const rows = odd ? t.oddRows : t.evenRows;
    const lastLengths = odd ? t.evenLengths : t.oddLengths;
    const lastRows = odd ? t.evenRows : t.oddRows;
    const end = t.start[group + 1] as number;
    for (let p = firstAtLeast(t.positions, t.start[group] as number, end, blo); p < end; p += 1) {
      const j = t.positions[p] as number;
      if (j >= bhi) break;
      // The run of equal characters ending at (i, j) is one longer than the one ending at (i − 1, j − 1).
      const k = (lastRows[j] === row - 1 ? (lastLengths[j] as number) : 0) + 1;
      lengths[j + 1] = k;
      rows[j + 1] = row;
      if (k > best) {
        besti = i - k + 1;
        bestj = j - k + 1;
        best = k;
      }
    }
  }
  const { a, b } = t;
  while (besti > alo && bestj > blo && a.charCodeAt(besti - 1) === b.charCodeAt(bestj - 1)) {
    besti -= 1;
    bestj -= 1;
    best += 1;
  }
  while (besti + best < ahi && bestj + best < bhi && a.charCodeAt(besti + best) === b.charCodeAt(bestj + best)) {
    best += 1;
  }
  return [besti, bestj, best];
}

/**
 * Python's `difflib.SequenceMatcher(None, a, b).get_matching_blocks()` over UTF-16 code units, autojunk included
 * ({@link tablesOf}), as fuzzball's `partial_ratio` uses it.
 */
export function matchingBlocks(a: string, b: string): MatchingBlock[] {
  const tables = tablesOf(a, b);
  const found: MatchingBlock[] = [];
  const queue: [number, number, number, number][] = [[0, a.length, 0, b.length]];
  for (let range = queue.pop(); range !== undefined; range = queue.pop()) {
    const [alo, ahi, blo, bhi] = range;
    const block = longestMatch(tables, alo, ahi, blo, bhi);
    const [i, j, k] = block;
    if (k === 0) continue;
    found.push(block);
    if (alo < i && blo < j) queue.push([alo, i, blo, j]);
    if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
  }
  found.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const blocks: MatchingBlock[] = [];
  let [i1, j1, k1] = [0, 0, 0];
  for (const [i2, j2, k2] of found) {
    if (i1 + k1 === i2 && j1 + k1 === j2) {
      k1 += k2;
    } else {
      if (k1 > 0) blocks.push([i1, j1, k1]);
      [i1, j1, k1] = [i2, j2, k2];
    }
  }
  if (k1 > 0) blocks.push([i1, j1, k1]);
  blocks.push([a.length, b.length, 0]);
  return blocks;
}
