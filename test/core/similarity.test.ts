/** similarityRatio is exactly fuzzball.ratio / 100, and the upper bound used to skip pairs never undercuts it. */
import fc from "fast-check";
import * as fuzz from "fuzzball";
import { describe, expect, it } from "vitest";
import { lcsLength, similarityScore, similarityUpperBound } from "../../src/core/index.js";
import { isSimilar, similarityRatio } from "../../src/index.js";

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
});
