/**
 * The threshold-aware similarity decision (exact bounds, then the bit-parallel LCS restricted to the diagonal band a
 * passing pair stays in, with a cut-off) decides exactly as fuzzball does: `similarityAtLeast(a, b, t)` is
 * `fuzz.ratio(a, b) / 100` when `fuzz.ratio(a, b) / 100 >= t` (the comparison detectLoop makes) and undefined
 * otherwise, and `detectLoopIn` answers as the seed's loop over `fuzzball.ratio`. 6,000 random pairs + 4,000
 * near-threshold pairs + 40 long pairs, and 1,500 detectLoop windows of 1–5 outputs on top.
 *
 * The two other scorers are fuzzball's exactly: `partialRatio(a, b)` is `fuzz.partial_ratio(a, b) / 100` and
 * `tokenSortRatio(a, b)` is `fuzz.token_sort_ratio(a, b) / 100`, in both orders. 6,000 random pairs, 3,000
 * near-threshold pairs for each (an edited excerpt of a text against the text; a text against its words shuffled
 * and edited), 300 pairs of 200–1,000 characters (where difflib's autojunk heuristic decides partial_ratio's
 * windows), and 500 detectLoop windows with each scorer.
 */
import fc from "fast-check";
import * as fuzz from "fuzzball";
import { describe, expect, it } from "vitest";
import { partialRatioAtLeast, tokenSortRatioAtLeast } from "../../src/common/similarity/scorers.js";
import { isSimilar, similarityAtLeast, similarityScore } from "../../src/common/similarity/similarity.js";
import {
  detectLoopIn,
  emptyLoopState,
  partialRatio,
  resolveSafetyOptions,
  tokenSortRatio,
} from "../../src/core/index.js";
import { rng } from "../support/random.js";

/** The thresholds checked for every pair: the usual ones, the ends, and one between two scores. */
const THRESHOLDS = [0, 0.5, 0.8, 0.85, 0.9, 0.95, 1, 0.895];

/** Pieces of text: ASCII, accented letters (precomposed and combining), CJK, emoji and other surrogate pairs
 * (astral letters too), characters fuzzball's processing turns into spaces, and ones whose lowercase differs in
 * length or kind. */
const ascii = ["a", "b", "c", "e", "s", "t", "z", "A", "T", "0", "7", " ", " ", " ", "the ", "agent ", "reads "];
const accented = ["é", "É", "à", "ñ", "ü", "ç", "ø", "Å", "e\u0301", "ß", "İ", "ı", "Σ", "σ", "ς", "ﬁ", "\u212a"];
const cjk = ["中", "文", "字", "日本語", "한글", "の"];
const astral = ["😀", "👍🏽", "🚀", "👨‍👩‍👧", "𝔘", "𠀀", "\ud800", "\udc00"];
const stripped = [".", ",", "!", "?", "-", "_", "'", "€", "©", "™", "—", "…", "・", "\u0301", "\u200b", "\u00a0"];
const spaces = ["\t", "\n", "\r\n", "  ", "\u3000"];
const pieceArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...ascii) },
  { weight: 2, arbitrary: fc.constantFrom(...accented) },
  { weight: 1, arbitrary: fc.constantFrom(...cjk) },
  { weight: 1, arbitrary: fc.constantFrom(...astral) },
  { weight: 2, arbitrary: fc.constantFrom(...stripped) },
  { weight: 1, arbitrary: fc.constantFrom(...spaces) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }) },
);
const textArb = (minLength: number, maxLength: number) =>
  fc.array(pieceArb, { minLength, maxLength }).map((pieces) => pieces.join(""));

/** Strings fuzzball's processing empties (score 0 against anything). */
const blankArb = fc.constantFrom("", " ", "   ", "\t\n", "\u00a0\u3000", "!!!", "... --", "\u200b", "😀🚀");

const editPieces = [...ascii, ...accented, ...cjk, ...astral, ...stripped];

/**
 * `text` with about `percent`% of its code units edited: swaps (near or far), insertions, deletions,
 * replacements and now and then a block moved. Rates of 2–8% put fuzz.ratio around 85–95, where the band and the cut-off decide close to the
 * threshold.
 */
function edited(text: string, percent: number, seed: number): string {
  const next = rng(seed);
  const units = text.split("");
  const edits = Math.max(1, Math.round((units.length * percent) / 100));
  for (let e = 0; e < edits && units.length > 0; e += 1) {
    const at = Math.floor(next() * units.length);
    const kind = next();
    if (kind < 0.05) {
      // A block moved further on (a paragraph repeated elsewhere): the alignment leaves the diagonal and comes back.
      const block = units.splice(at, 1 + Math.floor(next() * (units.length / 8)));
      units.splice(at + Math.floor(next() * (units.length - at + 1)), 0, ...block);
    } else if (kind < 0.3) {
      const other = next() < 0.5 ? Math.min(units.length - 1, at + 1) : Math.floor(next() * units.length);
      [units[at], units[other]] = [units[other] as string, units[at] as string];
    } else if (kind < 0.55) {
      units.splice(at, 0, editPieces[Math.floor(next() * editPieces.length)] as string);
    } else if (kind < 0.8) {
      units.splice(at, 1);
    } else {
      units[at] = editPieces[Math.floor(next() * editPieces.length)] as string;
    }
  }
  return units.join("");
}

const nearArb = fc
  .tuple(textArb(10, 150), fc.integer({ min: 1, max: 12 }), fc.integer())
  .map(([a, percent, seed]) => [a, edited(a, percent, seed)] as const);

const randomPairArb = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(textArb(0, 80), textArb(0, 80)) },
  { weight: 2, arbitrary: fc.tuple(textArb(0, 10), textArb(0, 150)) }, // very different lengths
  { weight: 1, arbitrary: fc.tuple(blankArb, textArb(0, 40)) },
  { weight: 1, arbitrary: fc.tuple(blankArb, blankArb) },
  { weight: 2, arbitrary: fc.tuple(fc.string({ maxLength: 100 }), fc.string({ maxLength: 100 })) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.string({ unit: "binary", maxLength: 60 }), fc.string({ unit: "binary", maxLength: 60 })),
  },
  { weight: 2, arbitrary: textArb(0, 100).map((a) => [a, a] as const) },
);

/**
 * `expect(actual, message).toBe(expected)`, called only when the two differ: the same check and the same failure,
 * without vitest's cost per assertion (about half of this file's time went to the ~550,000 that pass).
 */
function same(actual: unknown, expected: unknown, message?: string): void {
  if (!Object.is(actual, expected)) expect(actual, message).toBe(expected);
}

/** Every threshold-aware answer for the pair equals the decision on fuzzball's score. */
function checkPair(a: string, b: string, extraThreshold: number): number {
  const expected = fuzz.ratio(a, b);
  const pair = JSON.stringify([a, b]);
  same(similarityScore(a, b), expected, `similarityScore of ${pair}`);
  for (const t of [...THRESHOLDS, extraThreshold]) {
    const passes = expected / 100 >= t;
    const message = `threshold ${t}, fuzz.ratio ${expected} of ${pair}`;
    same(similarityAtLeast(a, b, t), passes ? expected / 100 : undefined, message);
    same(similarityAtLeast(b, a, t), passes ? expected / 100 : undefined, `reversed, ${message}`);
    same(isSimilar(a, b, t), passes, `isSimilar, ${message}`);
  }
  return expected;
}

const thresholdArb = fc.oneof(
  fc.integer({ min: 0, max: 100 }).map((s) => s / 100),
  fc.double({ min: 0, max: 1, noNaN: true }),
);

describe("similarityAtLeast decides as fuzzball.ratio / 100 >= threshold", () => {
  it("6,000 random pairs: ASCII, accents, CJK, emoji and lone surrogates, stripped characters, blanks, equal pairs", () => {
    fc.assert(
      fc.property(randomPairArb, thresholdArb, ([a, b], t) => {
        checkPair(a, b, t);
      }),
      { numRuns: 6_000 },
    );
  });

  it("4,000 near-threshold pairs: a text and a copy with 1–12% of it swapped, inserted, deleted, replaced or moved", () => {
    let near = 0;
    fc.assert(
      fc.property(nearArb, thresholdArb, ([a, b], t) => {
        const score = checkPair(a, b, t);
        if (score >= 85 && score <= 95) near += 1;
      }),
      { numRuns: 4_000 },
    );
    // The generator does put a good share of the pairs around the default threshold.
    expect(near).toBeGreaterThan(1_000);
  });

  it("40 long pairs (about 1.5–3 K characters: many 30-bit words and cut-off checks), near the threshold and unrelated", () => {
    fc.assert(
      fc.property(
        textArb(900, 2_000),
        fc.integer({ min: 0, max: 14 }),
        fc.integer(),
        textArb(900, 2_000),
        (a, percent, seed, other) => {
          checkPair(a, percent === 0 ? other : edited(a, percent, seed), 0.9);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe("detectLoopIn with the default scorer answers as the seed's loop over fuzzball.ratio", () => {
  const quiet = { warn: () => {} };

  /** The seed's SafetyGuard.detectLoop: the first remembered output whose fuzz.ratio / 100 reaches the threshold. */
  function seedLoop(history: readonly string[], output: string, threshold: number) {
    if (!output) return { loop: false } as const;
    for (const [index, previous] of history.entries()) {
      const similarity = fuzz.ratio(output, previous) / 100;
      if (similarity >= threshold) return { loop: true, similarity, index } as const;
    }
    return { loop: false } as const;
  }

  const windowArb = fc
    .tuple(textArb(0, 150), fc.constantFrom(...THRESHOLDS), fc.integer())
    .chain(([output, threshold, seed]) =>
      fc
        .array(
          fc.oneof(
            { weight: 3, arbitrary: fc.integer({ min: 0, max: 14 }).map((p) => edited(output, p, seed + p)) },
            { weight: 2, arbitrary: textArb(0, 150) },
            { weight: 1, arbitrary: blankArb },
          ),
          { minLength: 1, maxLength: 5 },
        )
        .map((history) => ({ output, threshold, history })),
    );

  it("1,500 windows of 1–5 outputs: the loop, its similarity and index, and the state after", () => {
    fc.assert(
      fc.property(windowArb, ({ output, threshold, history }) => {
        const options = resolveSafetyOptions({ loopThreshold: threshold, logger: quiet });
        const check = detectLoopIn({ ...emptyLoopState(), recentOutputs: history }, output, options);
        const expected = seedLoop(history, output, threshold);
        expect(check.loop).toBe(expected.loop);
        if (expected.loop) {
          expect(check.similarity).toBe(expected.similarity);
          expect(check.index).toBe(expected.index);
          expect(check.state.recentOutputs).toEqual(history);
        } else {
          expect(check.similarity).toBeUndefined();
          expect(check.state.recentOutputs).toEqual(output ? [...history, output].slice(-5) : history);
        }
      }),
      { numRuns: 1_500 },
    );
  });
});

/**
 * Both scorers against fuzzball's, in both orders (partial_ratio is not symmetric for two strings of one length),
 * and their threshold-aware forms (the loop detector's) against the decision on fuzzball's score.
 */
function checkScorers(a: string, b: string, extraThreshold = 0.9): { partial: number; sorted: number } {
  const pair = JSON.stringify([a, b]);
  const reversed = JSON.stringify([b, a]);
  const partial = fuzz.partial_ratio(a, b);
  same(partialRatio(a, b), partial / 100, `partial_ratio of ${pair}`);
  same(partialRatio(b, a), fuzz.partial_ratio(b, a) / 100, `partial_ratio of ${reversed}`);
  const sorted = fuzz.token_sort_ratio(a, b);
  same(tokenSortRatio(a, b), sorted / 100, `token_sort_ratio of ${pair}`);
  same(tokenSortRatio(b, a), fuzz.token_sort_ratio(b, a) / 100, `token_sort_ratio of ${reversed}`);
  for (const t of [...THRESHOLDS, extraThreshold]) {
    same(partialRatioAtLeast(a, b, t), partial / 100 >= t ? partial / 100 : undefined, `threshold ${t}, ${pair}`);
    same(tokenSortRatioAtLeast(a, b, t), sorted / 100 >= t ? sorted / 100 : undefined, `threshold ${t}, ${pair}`);
  }
  return { partial, sorted };
}

/** An excerpt of a text (4–150 code units from anywhere), 0–12% of it edited, against the text, in either order:
 * partial_ratio's windows around the threshold. */
const excerptArb = (minLength: number, maxLength: number) =>
  fc
    .tuple(
      textArb(minLength, maxLength),
      fc.nat(),
      fc.integer({ min: 4, max: 150 }),
      fc.integer({ min: 0, max: 12 }),
      fc.integer(),
      fc.boolean(),
    )
    .map(([text, at, length, percent, seed, flip]) => {
      const start = at % Math.max(1, text.length);
      const piece = text.slice(start, start + length);
      const b = percent === 0 ? piece : edited(piece, percent, seed);
      return flip ? ([b, text] as const) : ([text, b] as const);
    });

/** The words of `text` (split on spaces) in a shuffled order. */
function shuffledWords(text: string, seed: number): string {
  const next = rng(seed);
  const words = text.split(" ");
  for (let i = words.length - 1; i > 0; i -= 1) {
    const j = Math.floor(next() * (i + 1));
    [words[i], words[j]] = [words[j] as string, words[i] as string];
  }
  return words.join(" ");
}

/** A text against its words shuffled, then 0–12% of it edited: token_sort_ratio around the threshold. */
const shuffledArb = fc
  .tuple(textArb(10, 150), fc.integer({ min: 0, max: 12 }), fc.integer())
  .map(([a, percent, seed]) => {
    const shuffled = shuffledWords(a, seed);
    return [a, percent === 0 ? shuffled : edited(shuffled, percent, seed)] as const;
  });

describe("partialRatio and tokenSortRatio equal fuzzball's partial_ratio and token_sort_ratio", () => {
  it("6,000 random pairs: ASCII, accents, CJK, emoji and lone surrogates, stripped characters, blanks, equal pairs", () => {
    fc.assert(
      fc.property(randomPairArb, thresholdArb, ([a, b], t) => {
        checkScorers(a, b, t);
      }),
      { numRuns: 6_000 },
    );
  });

  it("3,000 near-threshold pairs for partial_ratio: an excerpt of a text, 0–12% edited, against the text", () => {
    let near = 0;
    fc.assert(
      fc.property(excerptArb(10, 200), thresholdArb, ([a, b], t) => {
        const { partial } = checkScorers(a, b, t);
        if (partial >= 85 && partial <= 95) near += 1;
      }),
      { numRuns: 3_000 },
    );
    expect(near).toBeGreaterThan(500);
  });

  it("3,000 near-threshold pairs for token_sort_ratio: a text against its words shuffled, 0–12% edited", () => {
    let near = 0;
    fc.assert(
      fc.property(shuffledArb, thresholdArb, ([a, b], t) => {
        const { sorted } = checkScorers(a, b, t);
        if (sorted >= 85 && sorted <= 95) near += 1;
      }),
      { numRuns: 3_000 },
    );
    expect(near).toBeGreaterThan(500);
  });

  it("300 pairs of 200–1,000 characters, where difflib's autojunk (popular characters) decides the windows", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          excerptArb(150, 500),
          fc
            .tuple(textArb(150, 500), fc.integer({ min: 1, max: 12 }), fc.integer())
            .map(([a, percent, seed]) => [a, edited(a, percent, seed)] as const),
          fc.tuple(textArb(150, 500), textArb(20, 500)),
        ),
        ([a, b]) => {
          checkScorers(a, b);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("detectLoopIn with partial_ratio or token_sort_ratio answers as the seed's loop over fuzzball's scorer", () => {
  const quiet = { warn: () => {} };
  const windowArb = fc
    .tuple(textArb(1, 150), fc.constantFrom(...THRESHOLDS), fc.integer())
    .chain(([output, threshold, seed]) =>
      fc
        .array(
          fc.oneof(
            { weight: 3, arbitrary: fc.integer({ min: 0, max: 14 }).map((p) => edited(output, p, seed + p)) },
            { weight: 1, arbitrary: fc.integer({ min: 0, max: 14 }).map((p) => shuffledWords(output, seed + p)) },
            { weight: 2, arbitrary: textArb(0, 150) },
            { weight: 1, arbitrary: blankArb },
          ),
          { minLength: 1, maxLength: 5 },
        )
        .map((history) => ({ output, threshold, history })),
    );

  for (const [scorer, fuzzScore] of [
    ["partial_ratio", fuzz.partial_ratio],
    ["token_sort_ratio", fuzz.token_sort_ratio],
  ] as const) {
    it(`500 windows of 1–5 outputs with turns.scorer "${scorer}": the loop, its similarity and index`, () => {
      fc.assert(
        fc.property(windowArb, ({ output, threshold, history }) => {
          const options = resolveSafetyOptions({ loopThreshold: threshold, logger: quiet, scorer });
          const check = detectLoopIn({ ...emptyLoopState(), recentOutputs: history }, output, options);
          const index = history.findIndex((previous) => fuzzScore(output, previous) / 100 >= threshold);
          expect(check.loop).toBe(index >= 0);
          expect(check.index).toBe(index >= 0 ? index : undefined);
          const similarity = index >= 0 ? fuzzScore(output, history[index] as string) / 100 : undefined;
          expect(check.similarity).toBe(similarity);
        }),
        { numRuns: 500 },
      );
    });
  }
});
