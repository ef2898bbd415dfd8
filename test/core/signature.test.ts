import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { digest } from "../../src/common/identity/signature.js";

/** The digest as it was first written: SHA-256 through `createHash`, hex, the first 128 bits. */
const reference = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 32);

describe("digest", () => {
  it("is the first 128 bits of SHA-256 in hex, as stored in existing checkpoints", () => {
    expect(digest("")).toBe("e3b0c44298fc1c149afbf4c8996fb924");
    expect(digest("abc")).toBe("ba7816bf8f01cfea414140de5dae2223");
  });

  it("equals the createHash digest for any text, non-ASCII and lone surrogates included", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.string({ unit: "binary" })), (text) => {
        expect(digest(text)).toBe(reference(text));
      }),
      { numRuns: 2_000 },
    );
  });

  it("gives the same digest on both sides of the one-shot limit", () => {
    for (const length of [999_999, 1_000_000, 1_000_001, 3_000_000]) {
      const text = "é".repeat(length);
      expect(digest(text)).toBe(reference(text));
    }
  });
});
