/**
 * A reference answer is given only when the earlier result holds exactly the content served now. Two calls of one
 * step run on the same state: a `read_file` served from the cache (which notes its result as the one to refer to)
 * and a `write_to_file` of the same file. Applied in the order of the calls, the write's new entry gets the read's
 * note; the next read must not answer "unchanged since your earlier read" with a reference to the old content.
 */
import { mkdtempSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { emptyFileCache, type FileCacheState, type FileCacheWrite, reduceFileCache } from "../../src/fs/cache.js";
import { viewLines } from "../../src/fs/read.js";
import { createFileTools } from "../../src/fs/tools.js";

const base = realpathSync(mkdtempSync(join(tmpdir(), "lgg-ref-race-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));

type Invocable = { name: string; invoke(input: unknown, config?: unknown): Promise<unknown> };
type Update = { messages: ToolMessage[]; fileCache?: FileCacheWrite[] };

describe("read_file: a reference never points to content other than what is served", () => {
  it("a read and a write of the same file in one step: the next read shows the new content", async () => {
    const root = mkdtempSync(join(base, "p"));
    const lines = (word: string) => `${Array.from({ length: 40 }, (_, i) => `${word} line ${i}`).join("\n")}\n`;
    const [before, after] = [lines("old"), lines("new")];
    writeFileSync(join(root, "a.txt"), before);
    utimesSync(join(root, "a.txt"), 1_700_000_000, 1_700_000_000);
    // A clock ahead of the files: the cached entry is trusted on its stat.
    const tools = createFileTools({ root, clock: () => Date.now() + 10_000 }) as unknown as Invocable[];
    const byName = (name: string) => tools.find((t) => t.name === name) as Invocable;
    let n = 0;
    const call = async (name: string, args: Record<string, unknown>, state: Record<string, unknown>) => {
      n += 1;
      const toolCall = { name, args, id: `c${n}`, type: "tool_call" as const };
      const out = await byName(name).invoke(toolCall, { toolCallId: toolCall.id, toolCall, state });
      return out instanceof Command ? (out.update as Update) : { messages: [out as ToolMessage] };
    };
    let cache: FileCacheState = emptyFileCache();
    const messages: ToolMessage[] = [];
    const first = await call("read_file", { path: "a.txt" }, { fileCache: cache, messages: [] });
    cache = reduceFileCache(cache, [first.fileCache ?? []]);
    messages.push(...first.messages);

    // One step: both calls see the same state (the read is answered with the whole content, from the cache).
    const state = { fileCache: cache, messages: [] };
    const [read, write] = await Promise.all([
      call("read_file", { path: "a.txt" }, state),
      call("write_to_file", { path: "a.txt", content: after }, state),
    ]);
    expect(String(read.messages[0]?.content)).toBe(viewLines(before).text);
    messages.push(...read.messages, ...write.messages);
    cache = reduceFileCache(cache, [write.fileCache ?? [], read.fileCache ?? []]);

    const next = await call("read_file", { path: "a.txt" }, { fileCache: cache, messages });
    const reply = next.messages[0] as ToolMessage;
    expect((reply.artifact as { content_ref?: string } | undefined)?.content_ref).toBeUndefined();
    expect(String(reply.content)).toBe(viewLines(after).text);

    // Once a result holds the new content, a repeat refers to it.
    messages.push(reply);
    cache = reduceFileCache(cache, [next.fileCache ?? []]);
    const repeat = await call("read_file", { path: "a.txt" }, { fileCache: cache, messages });
    expect((repeat.messages[0]?.artifact as { content_ref?: string } | undefined)?.content_ref).toBe(
      reply.tool_call_id,
    );
  });
});
