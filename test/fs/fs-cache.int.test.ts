/** Issue 5 groundwork: the file-cache reducer (DeltaChannel-ready), freshness rules, and read_file's line views. */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Annotation,
  type BaseCheckpointSaver,
  DeltaChannel,
  END,
  MemorySaver,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  type CachedFile,
  emptyFileCache,
  type FileCacheState,
  type FileCacheWrite,
  freshness,
  reduceFileCache,
} from "../../src/fs/cache.js";
import { looksBinary, splitLines, viewLines } from "../../src/fs/read.js";

const dir = mkdtempSync(join(tmpdir(), "lgg-fscache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (content: string, extra: Partial<CachedFile> = {}): CachedFile => ({
  content,
  hash: `h${content.length}`,
  mtimeMs: 1000,
  size: content.length,
  ino: 7,
  cachedAt: 10_000,
  ...extra,
});

const writeArb: fc.Arbitrary<FileCacheWrite> = fc.oneof(
  fc.record({
    op: fc.constant("put" as const),
    path: fc.constantFrom("/a", "/b", "/c", "/d"),
    file: fc.string({ maxLength: 30 }).map((c) => file(c)),
    budget: fc.integer({ min: 0, max: 80 }),
  }),
  fc.record({
    op: fc.constant("touch" as const),
    path: fc.constantFrom("/a", "/b", "/e"),
    ref: fc.option(fc.string(), { nil: undefined }),
  }),
  fc.record({ op: fc.constant("drop" as const), paths: fc.subarray(["/a", "/b", "/c", "/d"]) }),
  fc.record({
    op: fc.constant("verified" as const),
    path: fc.constantFrom("/a", "/b", "/e"),
    hash: fc.constantFrom("h0", "h3", "h5"),
    cachedAt: fc.nat(20_000),
    ctimeMs: fc.nat(20_000),
  }),
  fc.constant({ op: "dropAll" as const }),
  fc.record({ op: fc.constant("count" as const), hits: fc.nat(3), bytesSaved: fc.nat(100) }),
);

describe("file-cache reducer", () => {
  it("is batching-invariant, as DeltaChannel requires", () => {
    fc.assert(
      fc.property(fc.array(writeArb, { maxLength: 25 }), fc.nat(), (writes, cut) => {
        const at = writes.length === 0 ? 0 : cut % (writes.length + 1);
        const once = reduceFileCache(emptyFileCache(), writes);
        const twice = reduceFileCache(reduceFileCache(emptyFileCache(), writes.slice(0, at)), writes.slice(at));
        const nested = reduceFileCache(emptyFileCache(), [writes.slice(0, at), ...writes.slice(at)]);
        expect(twice).toEqual(once);
        expect(nested).toEqual(once);
        // The byte count always matches the contents, and never exceeds the last put's budget after that put.
        expect(once.bytes).toBe(Object.values(once.files).reduce((n, f) => n + f.content.length, 0));
      }),
      { numRuns: 2000 },
    );
  });

  it("evicts least recently used files beyond the byte budget; a touch makes a file recent", () => {
    let s: FileCacheState = emptyFileCache();
    s = reduceFileCache(s, [{ op: "put", path: "/a", file: file("aaaa"), budget: 10 }]);
    s = reduceFileCache(s, [{ op: "put", path: "/b", file: file("bbbb"), budget: 10 }]);
    s = reduceFileCache(s, [{ op: "touch", path: "/a", ref: "call_1" }]);
    s = reduceFileCache(s, [{ op: "put", path: "/c", file: file("cccc"), budget: 10 }]);
    expect(Object.keys(s.files)).toEqual(["/a", "/c"]);
    expect(s.bytes).toBe(8);
    expect(s.files["/a"]?.ref).toBe("call_1");
  });
});

describe("freshness", () => {
  const cached = file("x", { mtimeMs: 1000, ctimeMs: 1000, cachedAt: 10_000 });
  it("a changed mtime, size, inode or ctime is stale", () => {
    expect(freshness(cached, { mtimeMs: 1001, ctimeMs: 1000, size: 1, ino: 7 }, 2000)).toBe("stale");
    expect(freshness(cached, { mtimeMs: 1000, ctimeMs: 1000, size: 2, ino: 7 }, 2000)).toBe("stale");
    expect(freshness(cached, { mtimeMs: 1000, ctimeMs: 1000, size: 1, ino: 8 }, 2000)).toBe("stale");
    // Rewritten with the same size and the mtime restored (utimes): only the ctime, which no one can set, tells.
    expect(freshness(cached, { mtimeMs: 1000, ctimeMs: 12_000, size: 1, ino: 7 }, 2000)).toBe("stale");
  });
  it("a file modified long before it was cached is fresh; one modified in the racy window must be verified", () => {
    expect(freshness(cached, { mtimeMs: 1000, ctimeMs: 1000, size: 1, ino: 7 }, 2000)).toBe("fresh");
    const racy = file("x", { mtimeMs: 9_500, ctimeMs: 9_500, cachedAt: 10_000 });
    expect(freshness(racy, { mtimeMs: 9_500, ctimeMs: 9_500, size: 1, ino: 7 }, 2000)).toBe("verify");
    // An old mtime but a recent ctime (the mtime was set back): the ctime decides whether it is racy.
    const setBack = file("x", { mtimeMs: 1000, ctimeMs: 9_500, cachedAt: 10_000 });
    expect(freshness(setBack, { mtimeMs: 1000, ctimeMs: 9_500, size: 1, ino: 7 }, 2000)).toBe("verify");
  });
  it("an entry stored by an older version (no ctime) is always verified", () => {
    const old = file("x", { mtimeMs: 1000, cachedAt: 10_000 });
    expect(freshness(old, { mtimeMs: 1000, ctimeMs: 1000, size: 1, ino: 7 }, 2000)).toBe("verify");
    expect(freshness(old, { mtimeMs: 1001, ctimeMs: 1000, size: 1, ino: 7 }, 2000)).toBe("stale");
  });
});

describe("read_file views", () => {
  const content = `${Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n")}\n`;

  it("numbers lines, cuts ranges from the whole content, and hints where to continue", () => {
    const whole = viewLines(content);
    expect(whole.whole).toBe(true);
    expect(whole.text.split("\n")[0]).toBe("     1\tline 1");
    const range = viewLines(content, { offset: 4, limit: 3 });
    expect(range.text).toBe(
      "     4\tline 4\n     5\tline 5\n     6\tline 6\n\n(Showing lines 4-6 of 10. Continue with offset 7.)",
    );
    expect(range.whole).toBe(false);
    const tail = viewLines(content, { offset: 9 });
    expect(tail.text).toBe("     9\tline 9\n    10\tline 10\n\n(Showing lines 9-10 of 10.)");
    expect(viewLines(content, { offset: 11 }).text).toBe("(The file has 10 lines; offset 11 is past its end.)");
  });

  it("the default line limit, long lines, empty files and CRLF", () => {
    expect(viewLines(content, {}, { defaultLineLimit: 2, maxLineChars: 2000 }).text).toContain(
      "Continue with offset 3.",
    );
    expect(viewLines("x".repeat(30), {}, { defaultLineLimit: 10, maxLineChars: 10 }).text).toBe(
      `     1\t${"x".repeat(10)}… [line cut: 20 more characters]`,
    );
    expect(viewLines("").text).toBe("(empty file)");
    expect(splitLines("a\r\nb\r\n")).toEqual(["a", "b"]);
  });

  it("binary detection", () => {
    expect(looksBinary(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00]))).toBe(true);
    expect(looksBinary(new TextEncoder().encode("plain text\n"))).toBe(false);
  });
});

describe("checkpoint size with the cache in a DeltaChannel", () => {
  const MB = 1_000_000;
  /** 5 × 200 KB of file contents put over 5 steps, then 10 more steps: total bytes the saver stored. */
  async function storedBytes(useDelta: boolean, saver: BaseCheckpointSaver, measure: () => number) {
    const State = Annotation.Root({
      step: Annotation<number>({ reducer: (_, b) => b, default: () => 0 }),
      cache: useDelta
        ? new DeltaChannel<FileCacheState, FileCacheWrite>(reduceFileCache, { initialValueFactory: emptyFileCache })
        : Annotation<FileCacheState, FileCacheWrite>({
            reducer: (s, w) => reduceFileCache(s, [w]),
            default: emptyFileCache,
          }),
    });
    const graph = new StateGraph(State)
      .addNode("read", (s: { step: number }) => ({
        step: s.step + 1,
        ...(s.step < 5
          ? {
              cache: {
                op: "put",
                path: `/f${s.step}`,
                file: file("x".repeat(0.2 * MB)),
                budget: 10 * MB,
              } as FileCacheWrite,
            }
          : {}),
      }))
      .addEdge(START, "read")
      .addConditionalEdges("read", (s: { step: number }) => (s.step < 15 ? "read" : END), ["read", END])
      .compile({ checkpointer: saver });
    await graph.invoke({ step: 0 }, { configurable: { thread_id: "t" }, recursionLimit: 50 });
    const restored = (await graph.getState({ configurable: { thread_id: "t" } })).values as { cache: FileCacheState };
    expect(Object.keys(restored.cache.files)).toHaveLength(5);
    return measure();
  }

  const memoryBytes = (saver: MemorySaver) => () => {
    const size = (v: unknown): number =>
      v instanceof Uint8Array
        ? v.length
        : typeof v === "string"
          ? v.length
          : v && typeof v === "object"
            ? Object.values(v).reduce((n: number, x) => n + size(x), 0)
            : 0;
    return size(saver.storage) + size(saver.writes);
  };

  it("MemorySaver stores the contents once, not once per step", async () => {
    const delta = new MemorySaver();
    const plain = new MemorySaver();
    const withDelta = await storedBytes(true, delta, memoryBytes(delta));
    const without = await storedBytes(false, plain, memoryBytes(plain));
    expect(withDelta).toBeLessThan(1.2 * MB); // 1 MB of contents, written once
    expect(without).toBeGreaterThan(5 * withDelta); // every checkpoint copies the whole cache
  });

  it("SqliteSaver too, and the cache is rebuilt from the stored writes", async () => {
    const deltaFile = join(dir, "delta.sqlite");
    const plainFile = join(dir, "plain.sqlite");
    const withDelta = await storedBytes(true, SqliteSaver.fromConnString(deltaFile), () => statSync(deltaFile).size);
    const without = await storedBytes(false, SqliteSaver.fromConnString(plainFile), () => statSync(plainFile).size);
    expect(withDelta).toBeLessThan(1.3 * MB);
    expect(without).toBeGreaterThan(5 * withDelta);
  });
});
