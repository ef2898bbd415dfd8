/**
 * Issue 35, item 16: `read_file` output is capped by characters as well as lines (`limits.maxReadChars`), so a huge
 * `limit` cannot put tens of millions of characters into the messages and every checkpoint; the answer says where
 * to read on, and reading on from there continues at the next line.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { viewLines } from "../../src/fs/read.js";
import { directTools } from "./direct.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "lgg-readcap-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The line numbers a `read_file` answer shows. */
const shownLines = (text: string) => [...text.matchAll(/^ *(\d+)\t/gm)].map((m) => Number(m[1]));

describe("read_file output is capped by characters", () => {
  it("a 10 MB file read with a huge limit answers at most limits.maxReadChars characters and says how to read on", async () => {
    const lines = Array.from({ length: 2_500_000 }, (_, i) => `x${i % 10}`); // 10 MB of short lines
    writeFileSync(join(root, "big.txt"), `${lines.join("\n")}\n`);
    const { call } = directTools(root, { limits: { maxFileBytes: 20_000_000 } });
    const answer = await call("read_file", { path: "big.txt", limit: 100_000_000 });
    expect(answer.status).toBe("success");
    expect(answer.text.length).toBeLessThanOrEqual(100_000 + 200);
    const shown = shownLines(answer.text);
    const last = shown.at(-1) as number;
    expect(shown[0]).toBe(1);
    expect(
      answer.text.endsWith(
        `\n\n(Showing lines 1-${last} of 2500000: the output is capped at 100000 characters. Continue with offset ${last + 1}.)`,
      ),
    ).toBe(true);
    const next = await call("read_file", { path: "big.txt", offset: last + 1, limit: 100_000_000 });
    expect(shownLines(next.text)[0]).toBe(last + 1);
  }, 20_000);

  it("the cap is an option, and a line longer than the cap is cut to it (at least one line is shown)", async () => {
    writeFileSync(join(root, "wide.txt"), `${"a".repeat(5000)}\n${"b".repeat(10)}\n`);
    const { call } = directTools(root, { limits: { maxReadChars: 1000, maxLineChars: 10_000 } });
    const answer = await call("read_file", { path: "wide.txt" });
    expect(shownLines(answer.text)).toEqual([1]);
    expect(answer.text.length).toBeLessThanOrEqual(1000 + 200);
    expect(answer.text).toMatch(/line cut: \d+ more characters/);
    expect(answer.text).toMatch(/Continue with offset 2\.\)$/);
  });

  it("a file within the cap is shown whole, as before", () => {
    const view = viewLines("a\nb\n", {}, { defaultLineLimit: 2000, maxLineChars: 2000, maxReadChars: 100_000 });
    expect(view).toMatchObject({ text: "     1\ta\n     2\tb", whole: true, to: 2 });
  });
});
