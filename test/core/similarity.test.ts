/**
 * similarityRatio is exactly fuzzball.ratio / 100, the upper bound used to skip pairs never undercuts it, and the
 * threshold-aware decision (similarityAtLeast, isSimilar) rounds as fuzzball does at every threshold; the two other
 * scorers, partialRatio and tokenSortRatio, are fuzzball's partial_ratio and token_sort_ratio on known cases (difflib's
 * matching blocks, its autojunk heuristic, the order of two strings of one length). The property tests against
 * fuzzball, near the threshold too, are in similarity-property.test.ts.
 */
import fc from "fast-check";
import * as fuzz from "fuzzball";
import { describe, expect, it } from "vitest";
import { matchingBlocks } from "../../src/common/similarity/matching-blocks.js";
import { lcsLength, similarityAtLeast, similarityUpperBound } from "../../src/common/similarity/similarity.js";
import { isSimilar, partialRatio, similarityRatio, similarityScore, tokenSortRatio } from "../../src/core/index.js";

const pieces = ["a", "b", "c", "e", "z", "A", "Z", "0", "7", " ", "  ", "\t", "\n", ".", ",", "!", "?", "-", "_", "'"];
const unicode = [
  "é",
  "É",
  "ß",
  "İ",
  "ı",
  "Σ",
  "σ",
  "ς",
  "ж",
  "中",
  "文",
  "😀",
  "👍🏽",
  "\u00a0",
  "\u3000",
  "\u200b",
  "\u0301",
  "ﬁ",
];
const charArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...pieces) },
  { weight: 2, arbitrary: fc.constantFrom(...unicode) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 1 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 1 }) },
);
const textArb = (max: number) => fc.array(charArb, { maxLength: max }).map((cs) => cs.join(""));

/** b as a near-duplicate of a: a few edits. */
const nearDuplicateArb = textArb(200).chain((a) =>
  fc
    .array(fc.tuple(fc.nat(), fc.constantFrom("insert", "delete", "replace"), textArb(3)), { maxLength: 6 })
    .map((edits) => {
      let b = a;
      for (const [at, kind, text] of edits) {
        const i = b.length === 0 ? 0 : at % b.length;
        if (kind === "insert") b = b.slice(0, i) + text + b.slice(i);
        else if (kind === "delete") b = b.slice(0, i) + b.slice(i + 1);
        else b = b.slice(0, i) + text + b.slice(i + 1);
      }
      return [a, b] as const;
    }),
);

const pairArb = fc.oneof(
  fc.tuple(textArb(60), textArb(60)),
  nearDuplicateArb,
  fc.tuple(textArb(5), textArb(400)), // very different lengths
  fc.tuple(fc.string({ maxLength: 80 }), fc.string({ maxLength: 80 })),
  fc.tuple(fc.string({ unit: "grapheme", maxLength: 40 }), fc.string({ unit: "grapheme", maxLength: 40 })),
);

describe("similarityRatio", () => {
  it("equals fuzzball.ratio / 100 on 10,000 random pairs (ASCII, Unicode, punctuation, near-duplicates, lengths)", () => {
    fc.assert(
      fc.property(pairArb, ([a, b]) => {
        const expected = fuzz.ratio(a, b);
        expect(similarityScore(a, b)).toBe(expected);
        expect(similarityRatio(a, b)).toBe(expected / 100);
        expect(similarityUpperBound(a, b)).toBeGreaterThanOrEqual(expected);
        expect(isSimilar(a, b, 0.9)).toBe(expected / 100 >= 0.9);
      }),
      { numRuns: 10_000 },
    );
  });

  it("is exact on long texts, where the bit-parallel LCS spans many 32-bit words", () => {
    const words = "the quick brown fox jumps over a lazy dog while agents loop".split(" ");
    const text = (seed: number, n: number) =>
      Array.from({ length: n }, (_, i) => words[(i * 7 + seed * 13 + ((i * i) % 11)) % words.length]).join(" ");
    for (const [a, b] of [
      [text(1, 400), text(2, 400)],
      [text(3, 400), `${text(3, 200)} INSERTED ${text(3, 400).slice(900)}`],
      [text(4, 300), text(4, 300).split("").reverse().join("")],
    ] as const) {
      expect(similarityScore(a, b)).toBe(fuzz.ratio(a, b));
    }
  });

  it("is exact for lengths around the 30-bit word boundaries", () => {
    const alphabet = "abcab cbaxy";
    for (const n of [29, 30, 31, 59, 60, 61, 89, 90, 91]) {
      for (let seed = 1; seed <= 5; seed += 1) {
        const a = Array.from({ length: n }, (_, i) => alphabet[(i * seed * 7 + seed) % alphabet.length]).join("");
        const b = Array.from({ length: n + seed }, (_, i) => alphabet[(i * (seed + 3) + 1) % alphabet.length]).join("");
        expect(similarityScore(a, b)).toBe(fuzz.ratio(a, b));
      }
    }
  });

  it("lcsLength on small known cases", () => {
    expect(lcsLength("kitten", "sitting")).toBe(4);
    expect(lcsLength("", "abc")).toBe(0);
    expect(lcsLength("abc", "abc")).toBe(3);
    expect(lcsLength("a".repeat(70), "a".repeat(33))).toBe(33);
  });

  it("lcsLength: equal strings, disjoint alphabets, one string inside the other", () => {
    expect(lcsLength("abc".repeat(40), "abc".repeat(40))).toBe(120);
    expect(lcsLength("abc".repeat(40), "xyz".repeat(50))).toBe(0);
    expect(lcsLength("a-b-c-".repeat(20), "abc".repeat(20))).toBe(60);
  });
});

describe("similarityAtLeast: the decision similarityRatio >= threshold, with the similarity of a passing pair", () => {
  it("returns the exact similarity of a passing pair and undefined otherwise", () => {
    expect(similarityAtLeast("Checking the database...", "Checking the database!", 0.9)).toBe(1);
    expect(similarityAtLeast("Checking the database...", "Writing the report...", 0.9)).toBeUndefined();
    const [a, b] = ["Processing the user data...", "Processing user data now..."]; // fuzz.ratio 83
    expect(similarityAtLeast(a, b, 0.83)).toBe(0.83);
    expect(similarityAtLeast(a, b, 0.8301)).toBeUndefined();
    expect(similarityAtLeast(a, b, 0)).toBe(0.83);
  });

  it("scores an empty (or emptied) string 0, as fuzzball does, so it passes only a threshold of 0", () => {
    for (const [a, b] of [
      ["", ""],
      ["", "abc"],
      ["...", "..."],
      ["  \t", "abc"],
    ] as const) {
      expect(fuzz.ratio(a, b)).toBe(0);
      expect(similarityAtLeast(a, b, 0)).toBe(0);
      expect(similarityAtLeast(a, b, 0.01)).toBeUndefined();
      expect(isSimilar(a, b, 0)).toBe(true);
    }
  });

  it("rounds at the threshold as fuzzball: every LCS around 0.5, 0.8, 0.9 and 0.95 for many lengths", () => {
    // a and b share `lcs` characters in order (x's between mismatching blocks), so fuzz.ratio is
    // round(100·2·lcs / (n + m)); the thresholds are each score / 100 and the doubles just beside it.
    let checked = 0;
    for (const n of [20, 33, 59, 61, 97, 150, 199, 200, 201, 333]) {
      for (const extra of [0, 1, 7, 30]) {
        const m = n + extra;
        for (const ratio of [0.5, 0.8, 0.9, 0.95]) {
          const center = Math.round((ratio * (n + m)) / 2);
          for (let lcs = Math.max(0, center - 3); lcs <= Math.min(n, center + 3); lcs += 1) {
            const half = lcs >> 1;
            const a = `${"x".repeat(half)}${"a".repeat(n - lcs)}${"x".repeat(lcs - half)}`;
            const b = `${"b".repeat(m - lcs - ((m - lcs) >> 1))}${"x".repeat(half)}${"x".repeat(lcs - half)}${"b".repeat((m - lcs) >> 1)}`;
            const score = fuzz.ratio(a, b);
            for (const t of [score / 100, score / 100 - 1e-12, score / 100 + 1e-12, (score - 0.5) / 100, ratio]) {
              expect(similarityAtLeast(a, b, t), `n ${n}, m ${m}, lcs ${lcs}, t ${t}`).toBe(
                score / 100 >= t ? score / 100 : undefined,
              );
              checked += 1;
            }
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(4_000);
  });

  it("is exact at 30-bit word boundaries and on long near-duplicates, where the band and the cut-off apply", () => {
    const alphabet = "abcab cbaxy";
    for (const n of [29, 30, 31, 59, 60, 61, 89, 90, 91, 600, 601]) {
      for (let seed = 1; seed <= 5; seed += 1) {
        const a = Array.from({ length: n }, (_, i) => alphabet[(i * seed * 7 + seed) % alphabet.length]).join("");
        const b = Array.from({ length: n + seed }, (_, i) =>
          i % (seed + 9) === 0 ? "z" : alphabet[(i * seed * 7 + seed) % alphabet.length],
        ).join("");
        const score = fuzz.ratio(a, b);
        for (const t of [0.5, 0.8, 0.85, 0.9, 0.95, 1, score / 100]) {
          expect(similarityAtLeast(a, b, t)).toBe(score / 100 >= t ? score / 100 : undefined);
        }
      }
    }
  });

  it("does not care about the order of its arguments, nor about a NaN threshold (never similar)", () => {
    const a = "the agent reads the file and writes a patch";
    const b = "the agent read a file and wrote the patch";
    for (const t of [0.5, 0.8, 0.9]) expect(similarityAtLeast(a, b, t)).toBe(similarityAtLeast(b, a, t));
    expect(similarityAtLeast(a, a, Number.NaN)).toBeUndefined();
    expect(isSimilar(a, a, Number.NaN)).toBe(false);
  });
});

describe("matchingBlocks: difflib's SequenceMatcher(None, a, b).get_matching_blocks()", () => {
  it("gives Python's blocks on the examples of its documentation, the sentinel last", () => {
    expect(matchingBlocks("abxcd", "abcd")).toEqual([
      [0, 0, 2],
      [3, 2, 2],
      [5, 4, 0],
    ]);
    expect(matchingBlocks(" abcd", "abcd abcd")).toEqual([
      [0, 4, 5],
      [5, 9, 0],
    ]);
    expect(matchingBlocks("qabxcd", "abycdf")).toEqual([
      [1, 0, 2],
      [4, 3, 2],
      [6, 6, 0],
    ]);
    expect(matchingBlocks("", "abc")).toEqual([[0, 3, 0]]);
    expect(matchingBlocks("abc", "")).toEqual([[3, 0, 0]]);
  });

  it("autojunk: from 200 characters of b on, a character found more than 1% + 1 times in b is not matched", () => {
    // Python: [Match(a=4, b=301, size=0)] and [Match(a=0, b=1, size=4), Match(a=4, b=199, size=0)].
    expect(matchingBlocks("aaaa", `x${"a".repeat(300)}`)).toEqual([[4, 301, 0]]);
    expect(matchingBlocks("aaaa", `x${"a".repeat(198)}`)).toEqual([
      [0, 1, 4],
      [4, 199, 0],
    ]);
    // A popular character still extends a match found on a rare one, on both sides.
    expect(matchingBlocks("aazaa", `${"a".repeat(150)}z${"a".repeat(150)}`)).toEqual([
      [0, 148, 5],
      [5, 301, 0],
    ]);
  });
});

describe("partialRatio: fuzzball's partial_ratio / 100", () => {
  it("scores the best window of the longer string, after fuzzball's processing", () => {
    expect(partialRatio("user data", "Processing the user data...")).toBe(1);
    for (const [a, b] of [
      ["abcd", "bcda"],
      ["the cat sat", "sat the cat"],
      ["fuzzy wuzzy was a bear", "wuzzy fuzzy was a bear"],
      ["Checking the database...", "Checking the database connection again"],
      ["中文字 テスト", "これは中文字のテストです"],
    ] as const) {
      expect(partialRatio(a, b), `${a} / ${b}`).toBe(fuzz.partial_ratio(a, b) / 100);
      expect(partialRatio(b, a)).toBe(fuzz.partial_ratio(b, a) / 100);
    }
  });

  it("takes the first string as the shorter one when both have one length, as fuzzball does", () => {
    expect(fuzz.partial_ratio("baaaaa", "aaaaaa")).toBe(83);
    expect(fuzz.partial_ratio("aaaaaa", "baaaaa")).toBe(91);
    expect(partialRatio("baaaaa", "aaaaaa")).toBe(0.83);
    expect(partialRatio("aaaaaa", "baaaaa")).toBe(0.91);
  });

  it("keeps difflib's autojunk quirk: a string inside a longer one can score low", () => {
    // "aaaa" is in the longer string, but from 200 characters on 'a' and 'y' are popular and 'x' is not in "aaaa":
    // difflib finds no block, and the only window scored is the last one ("yyyy").
    const longer = `xaaaa${"y".repeat(250)}`;
    expect(fuzz.partial_ratio("aaaa", longer)).toBe(0);
    expect(partialRatio("aaaa", longer)).toBe(0);
  });

  it("scores an empty (or emptied) string and a non-string 0", () => {
    for (const [a, b] of [
      ["", ""],
      ["", "abc"],
      ["...", "abc"],
      ["abc", "  \t"],
    ] as const) {
      expect(fuzz.partial_ratio(a, b)).toBe(0);
      expect(partialRatio(a, b)).toBe(0);
    }
    expect(partialRatio(undefined as unknown as string, "abc")).toBe(0);
  });
});

describe("tokenSortRatio: fuzzball's token_sort_ratio / 100", () => {
  it("ignores word order, after fuzzball's processing", () => {
    expect(tokenSortRatio("user data processing", "processing user data")).toBe(1);
    expect(tokenSortRatio("Data, user: processing!", "processing user data")).toBe(1);
    for (const [a, b] of [
      ["the cat sat", "sat the cat on the mat"],
      ["fuzzy wuzzy was a bear", "wuzzy fuzzy was a bear"],
      ["Zeta alpha Éclair éclair", "éclair alpha zeta"],
      ["ab cd", "cd ab ab"],
    ] as const) {
      expect(tokenSortRatio(a, b), `${a} / ${b}`).toBe(fuzz.token_sort_ratio(a, b) / 100);
    }
  });

  it("sorts by UTF-16 code units, as JavaScript's default sort", () => {
    const [a, b] = ["z 😀 é a 中", "中 a é z 😀"];
    expect(tokenSortRatio(a, b)).toBe(1);
    expect(tokenSortRatio("𝔘x ﬃy", "ﬃy 𝔘x")).toBe(fuzz.token_sort_ratio("𝔘x ﬃy", "ﬃy 𝔘x") / 100);
  });

  it("scores an empty (or emptied) string and a non-string 0", () => {
    expect(tokenSortRatio("", "abc")).toBe(0);
    expect(tokenSortRatio("!!!", "!!!")).toBe(0);
    expect(tokenSortRatio(undefined as unknown as string, "abc")).toBe(0);
  });
});
