import { ToolMessage } from "@langchain/core/messages";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { viewLines } from "../../src/fs/read.js";
import { fileToolsHarness } from "../support/file-tools.js";
import { tempProjects } from "../support/projects.js";

const { project } = tempProjects("lgg-ref-");

/** A project with the given files, written an hour ago (outside the racy window), and its file tools in a graph. */
function setup(files: Record<string, string>) {
  return fileToolsHarness(project(files, { hourAgo: true }), { allowCommands: false });
}

/** Longer than any reference answer here (a short path, a short call id, the range sentence). */
const SURELY_LONGER = 300;

describe("read_file: a reference is never longer than what it replaces", () => {
  it("a 2-line range after a whole read comes back as the lines themselves (cached, no reference)", async () => {
    const call = setup({ "long.txt": `${Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n")}\n` });
    await call("read_file", { path: "long.txt" });
    const two = await call("read_file", { path: "long.txt", offset: 5, limit: 2 });
    expect(two.ref).toBeUndefined();
    expect(two.cached).toBe(true); // served from the cache, not read again
    expect(two.text).toBe("     5\tline 5\n     6\tline 6\n\n(Showing lines 5-6 of 30. Continue with offset 7.)");
  });

  it("a whole read of a tiny file repeats the content, not a reference", async () => {
    const call = setup({ "a.txt": "x\n" });
    const first = await call("read_file", { path: "a.txt" });
    const second = await call("read_file", { path: "a.txt" });
    expect(second.ref).toBeUndefined();
    expect(second.text).toBe(first.text);
  });

  it("property: over random file sizes and ranges, the answer is the content or a strictly shorter reference", async () => {
    const line = fc.string({ unit: fc.constantFrom("a", "b", " ", "é", "{", "}"), maxLength: 120 });
    const range = fc.option(
      fc.record({
        offset: fc.option(fc.integer({ min: 1, max: 260 }), { nil: undefined }),
        limit: fc.option(fc.integer({ min: 1, max: 260 }), { nil: undefined }),
      }),
      { nil: undefined },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 220 }), range, async (lines, r) => {
        const content = lines.length === 0 ? "" : `${lines.join("\n")}\n`;
        const call = setup({ "dir/f.txt": content });
        const whole = await call("read_file", { path: "dir/f.txt" });
        expect(whole.text).toBe(viewLines(content).text);
        const args = {
          path: "dir/f.txt",
          ...(r?.offset ? { offset: r.offset } : {}),
          ...(r?.limit ? { limit: r.limit } : {}),
        };
        const again = await call("read_file", args);
        const expected = viewLines(content, { offset: args.offset, limit: args.limit }).text;
        expect(again.text.length).toBeLessThanOrEqual(expected.length);
        if (again.ref !== undefined) {
          // A reference: strictly shorter than the lines it stands for, and it points at the whole content.
          expect(again.text.length).toBeLessThan(expected.length);
          const earlier = again.messages.find((m) => ToolMessage.isInstance(m) && m.tool_call_id === again.ref);
          expect(String(earlier?.content)).toBe(viewLines(content).text);
        } else {
          expect(again.text).toBe(expected);
          // The cache still earns its keep: content well above any reference's length is referred to.
          expect(expected.length).toBeLessThan(SURELY_LONGER);
        }
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});

describe("list_files: a repeat listing is never longer than a fresh one", () => {
  it("property: over random trees, a repeated listing equals the fresh listing (no reference is ever used)", async () => {
    const name = fc.constantFrom("a", "b", "c", "src", "lib", "x.ts", "y.md");
    const path = fc.array(name, { minLength: 1, maxLength: 3 }).map((parts) => `${parts.join("/")}.txt`);
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(path, { maxLength: 25 }), fc.boolean(), async (paths, recursive) => {
        // A file and a folder cannot share a name: keep the paths that no other path passes through.
        const files = paths.filter((p) => !paths.some((q) => q !== p && q.startsWith(`${p.slice(0, -4)}/`)));
        const call = setup(Object.fromEntries([["keep.txt", "k\n"], ...files.map((p) => [p, "x\n"])]));
        const fresh = await call("list_files", { recursive });
        const again = await call("list_files", { recursive });
        expect(again.ref).toBeUndefined();
        expect(again.text.length).toBeLessThanOrEqual(fresh.text.length);
        expect(again.text).toBe(fresh.text);
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
