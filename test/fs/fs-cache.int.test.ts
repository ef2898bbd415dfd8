/**
 * Issue 5 groundwork: the file-cache reducer (batching-invariant), freshness rules, and read_file's line views;
 * issue 21: the cache holds no contents (old entries and writes with contents are made lean).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Annotation, type BaseCheckpointSaver, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { GuardState } from "../../src/channels/index.js";
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
  chars: content.length,
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
  it("is batching-invariant", () => {
    fc.assert(
      fc.property(fc.array(writeArb, { maxLength: 25 }), fc.nat(), (writes, cut) => {
        const at = writes.length === 0 ? 0 : cut % (writes.length + 1);
        const once = reduceFileCache(emptyFileCache(), writes);
        const twice = reduceFileCache(reduceFileCache(emptyFileCache(), writes.slice(0, at)), writes.slice(at));
        const nested = reduceFileCache(emptyFileCache(), [writes.slice(0, at), ...writes.slice(at)]);
        expect(twice).toEqual(once);
        expect(nested).toEqual(once);
        // The byte count always matches the entries' lengths.
        expect(once.bytes).toBe(Object.values(once.files).reduce((n, f) => n + f.chars, 0));
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

describe("entries without contents", () => {
  it("evicts the least recently used files beyond maxFiles", () => {
    const puts: FileCacheWrite[] = ["/a", "/b", "/c", "/d"].map((path) => ({
      op: "put",
      path,
      file: file("xy"),
      budget: 100,
      maxFiles: 3,
    }));
    const state = reduceFileCache(emptyFileCache(), [
      puts[0],
      puts[1],
      puts[2],
      { op: "touch", path: "/a" },
      puts[3],
    ] as FileCacheWrite[]);
    expect(Object.keys(state.files)).toEqual(["/c", "/a", "/d"]);
    expect(state.bytes).toBe(6);
  });
});

describe("checkpoint size with the cache in GuardState's channel", () => {
  const MB = 1_000_000;
  /** 5 puts of 200 KB files over 5 steps, then 10 more steps. */
  async function storedBytes(saver: BaseCheckpointSaver, measure: () => number) {
    const State = Annotation.Root({
      step: Annotation<number>({ reducer: (_, b) => b, default: () => 0 }),
      fileCache: GuardState.spec.fileCache,
    });
    const graph = new StateGraph(State)
      .addNode("read", (s: { step: number }) => ({
        step: s.step + 1,
        ...(s.step < 5
          ? {
              fileCache: {
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
    const restored = (await graph.getState({ configurable: { thread_id: "t" } })).values as {
      fileCache: FileCacheState;
    };
    expect(Object.keys(restored.fileCache.files)).toHaveLength(5);
    expect(restored.fileCache.bytes).toBe(MB); // the budget still counts characters
    expect(JSON.stringify(restored.fileCache)).not.toContain("xxxx");
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
    return size(saver.storage);
  };

  it("MemorySaver: no contents in any checkpoint", async () => {
    const saver = new MemorySaver();
    expect(await storedBytes(saver, memoryBytes(saver))).toBeLessThan(0.1 * MB); // 16 checkpoints of < 2 KB
  });

  it("SqliteSaver too, and the cache is restored", async () => {
    const path = join(dir, "plain.sqlite");
    const saver = SqliteSaver.fromConnString(path);
    const checkpoints = await storedBytes(saver, () => {
      const db = (saver as unknown as { db: { prepare(sql: string): { get(): { n: number } } } }).db;
      return db.prepare("SELECT SUM(LENGTH(checkpoint) + LENGTH(metadata)) AS n FROM checkpoints").get().n;
    });
    expect(checkpoints).toBeLessThan(0.1 * MB);
  });
});
