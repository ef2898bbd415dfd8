import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { capText, cutEnd, truncate } from "../../src/common/texts/format.js";
import { guardStreamEvent } from "../../src/core/index.js";
import { echo } from "../../src/fs/echo.js";
import { viewLines } from "../../src/fs/read.js";
import { describeThrown } from "../../src/tool-calls/answers.js";

/** Text rich in surrogate pairs (emoji), with lone halves and plain characters between them. */
const text = fc.string({
  unit: fc.constantFrom("a", "é", "😀", "🎉", "\ud83d", "\ude00", "\n"),
  maxLength: 40,
});
const wellFormed = fc.string({ unit: fc.constantFrom("a", "é", "😀", "🎉", " "), maxLength: 40 });

/** Whether `s` holds a lone surrogate (a half of a pair without the other). */
function hasLoneSurrogate(s: string): boolean {
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
}

describe("cutting text never splits a surrogate pair", () => {
  it("cutEnd: at most max, at most one short of it, and never between the halves of a pair", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: -2, max: 45 }), (s, max) => {
        const end = cutEnd(s, max);
        const bound = Math.max(0, Math.min(s.length, max));
        expect(end).toBeLessThanOrEqual(bound);
        expect(end).toBeGreaterThanOrEqual(Math.max(0, bound - 1));
        if (end < bound) {
          // Only to keep a pair whole: a high half before the cut, its low half after it.
          expect(s.charCodeAt(end)).toBeGreaterThanOrEqual(0xd800);
          expect(s.charCodeAt(end)).toBeLessThanOrEqual(0xdbff);
          expect(s.charCodeAt(end + 1)).toBeGreaterThanOrEqual(0xdc00);
          expect(s.charCodeAt(end + 1)).toBeLessThanOrEqual(0xdfff);
        }
      }),
      { numRuns: 5_000 },
    );
  });

  it("capText and truncate keep well-formed text well-formed, and say what they left out", () => {
    fc.assert(
      fc.property(wellFormed, fc.integer({ min: 1, max: 45 }), (s, max) => {
        const capped = capText(s, max);
        expect(hasLoneSurrogate(capped)).toBe(false);
        expect(capped.length).toBeLessThanOrEqual(max);
        if (s.length <= max) expect(capped).toBe(s);
        else expect(s.startsWith(capped.slice(0, -1)) && capped.endsWith("…")).toBe(true);

        const cut = truncate(s, max);
        expect(hasLoneSurrogate(cut)).toBe(false);
        if (s.length <= max) {
          expect(cut).toBe(s);
        } else {
          const [, kept, rest] = /^([\s\S]*)… \[(\d+) more characters\]$/.exec(cut) ?? [];
          expect(s.startsWith(kept as string)).toBe(true);
          expect((kept as string).length + Number(rest)).toBe(s.length);
          expect((kept as string).length).toBeGreaterThanOrEqual(max - 1);
        }
      }),
      { numRuns: 5_000 },
    );
  });

  it("at every place the package cuts text: previews, echoes, long lines, thrown values, stream events", () => {
    // An emoji straddles each cut: the old cutters kept its first half.
    expect(truncate("ab😀", 3)).toBe("ab… [2 more characters]");
    expect(echo(`${"a".repeat(299)}😀b`)).toBe(`${"a".repeat(299)}… [302 characters]`);
    const line = `${"x".repeat(1_999)}😀tail`;
    expect(viewLines(`${line}\n`).text).toBe(`     1\t${"x".repeat(1_999)}… [line cut: 6 more characters]`);
    const thrown = describeThrown(`${"y".repeat(498)}😀😀`);
    expect(hasLoneSurrogate(thrown)).toBe(false);
    expect(thrown.length).toBeLessThanOrEqual(500);
    const event = guardStreamEvent({
      kind: "blocked",
      guard: "tool-calls",
      tool: "t",
      message: `${"m".repeat(298)}😀!`,
      args: { q: `${"q".repeat(190)}😀😀😀` },
    });
    expect(event.message).toBe(`${"m".repeat(298)}…`);
    expect(hasLoneSurrogate(event.args ?? "")).toBe(false);
    expect((event.args ?? "").length).toBeLessThanOrEqual(200);
  });
});
