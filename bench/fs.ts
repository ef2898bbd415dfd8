/**
 * bench/fs: the file tools on a generated tree of 50,000 files, side by side in one run (medians):
 * - the first list_files scan vs a plain fdir crawl of the same tree (goal <= 1.5x);
 * - a cached listing vs a fresh scan (goal >= 100x faster);
 * - a cached read_file vs a fresh read of a 100 KB file;
 * - checkpoint bytes per step after 5 MB of reads, caching on / off / in an ordinary reducer channel.
 *
 * The tools are called as ToolNode calls them (with the thread's state in the runtime), so graph overhead does
 * not blur the comparison. Run: npm run bench:fs
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { AIMessage, type ToolMessage } from "@langchain/core/messages";
import { Annotation, Command, END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { fdir } from "fdir";
import { emptyFileCache, type FileCacheState, type FileCacheWrite, reduceFileCache } from "../src/fs/cache.js";
import { createFileTools } from "../src/fs/tools.js";
import { GuardedToolNode, GuardMessagesState, GuardState } from "../src/index.js";

const root = mkdtempSync(join(tmpdir(), "lgg-bench-fs-"));
const hourAgo = new Date(Date.now() - 3_600_000);
process.on("exit", () => rmSync(root, { recursive: true, force: true }));

console.error("... generating 50,000 files");
for (let a = 0; a < 50; a += 1) {
  for (let b = 0; b < 20; b += 1) {
    const dir = join(root, `pkg${a}`, `mod${b}`);
    mkdirSync(dir, { recursive: true });
    for (let c = 0; c < 50; c += 1) writeFileSync(join(dir, `file${c}.ts`), `export const v${c} = ${c};\n`);
    utimesSync(dir, hourAgo, hourAgo);
  }
  utimesSync(join(root, `pkg${a}`), hourAgo, hourAgo);
}
const big = Array.from({ length: 2000 }, (_, i) => `const line${i} = "${"x".repeat(40)}";`).join("\n");
writeFileSync(join(root, "big.ts"), big.slice(0, 100_000));
utimesSync(join(root, "big.ts"), hourAgo, hourAgo);
utimesSync(root, hourAgo, hourAgo);

type AnyTool = { name: string; invoke: (input: unknown, config?: unknown) => Promise<unknown> };
// The tree is made just before it is measured: a clock ahead of it keeps the cache's racy window (which ctime, unlike
// mtime, cannot be set back to escape) from turning every cached answer into a re-read.
const later = () => Date.now() + 5000;
const tools = (cache: boolean) =>
  createFileTools({ root, cache, listLimit: 100, clock: later }) as unknown as AnyTool[];
const byName = (list: AnyTool[], name: string) => list.find((t) => t.name === name) as AnyTool;

/** Calls a tool as ToolNode does, with a state; returns the tool's Command/ToolMessage. */
let calls = 0;
async function callTool(t: AnyTool, args: Record<string, unknown>, state: Record<string, unknown>) {
  calls += 1;
  const toolCall = { name: t.name, args, id: `b${calls}`, type: "tool_call" as const };
  return t.invoke(toolCall, { toolCallId: toolCall.id, toolCall, state });
}
function cacheAfter(state: FileCacheState, output: unknown): FileCacheState {
  const update = (output as Command).update as { fileCache?: FileCacheWrite[] } | undefined;
  return update?.fileCache ? reduceFileCache(state, [update.fileCache]) : state;
}
function messageOf(output: unknown): ToolMessage {
  if (output instanceof Command) return (output.update as { messages: ToolMessage[] }).messages[0] as ToolMessage;
  return output as ToolMessage;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}
async function time(fn: () => unknown, runs: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  return median(samples);
}
const fmt = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(ms < 10 ? 2 : 1)} ms`);
const rows: string[][] = [];
const row = (measure: string, ours: number, other: number, otherName: string, goal: string, met: boolean | null) =>
  rows.push([
    measure,
    fmt(ours),
    `${fmt(other)} (${otherName})`,
    `${(other / ours).toFixed(other / ours < 10 ? 2 : 0)}x`,
    goal,
    met === null ? "info" : met ? "met" : "MISSED",
  ]);

// 1. First scan vs plain fdir crawl.
const fdirCrawl = () => new fdir().withRelativePaths().withDirs().crawl(root).sync().length;
const scanTool = byName(tools(true), "list_files");
const firstScan = async () => callTool(scanTool, {}, { fileCache: emptyFileCache(), messages: [] });
// Interleave the two so machine noise hits both alike.
const crawlSamples: number[] = [];
const scanSamples: number[] = [];
for (let i = 0; i < 9; i += 1) {
  crawlSamples.push(await time(fdirCrawl, 1));
  scanSamples.push(await time(firstScan, 1));
}
const crawlMs = median(crawlSamples);
const scanMs = median(scanSamples);
row(
  "first list_files scan (50,000 files) vs plain fdir crawl",
  scanMs,
  crawlMs,
  "fdir",
  "<= 1.5x",
  scanMs <= 1.5 * crawlMs,
);
rows[rows.length - 1]![3] = `${(scanMs / crawlMs).toFixed(2)}x of fdir`;

// 2. Cached listing vs fresh scan.
const cachedTools = tools(true);
const warm = cacheAfter(emptyFileCache(), await firstScan());
const freshTools = tools(false);
// The seed's uncached list_files scans the whole root for any listing; a scan of only the listed folder is the
// cheapest uncached answer. Both are shown.
const rootScan = await time(
  () => callTool(byName(freshTools, "list_files"), { recursive: true }, { fileCache: emptyFileCache(), messages: [] }),
  7,
);
for (const [label, args] of [
  ["list_files pkg7/mod3 (one folder)", { path: "pkg7/mod3" }],
  ["list_files root recursive (1,051 folders checked)", { recursive: true }],
] as const) {
  const cached = await time(
    () => callTool(byName(cachedTools, "list_files"), args, { fileCache: warm, messages: [] }),
    15,
  );
  row(`cached ${label} vs fresh root scan`, cached, rootScan, "root scan", ">= 100x", rootScan / cached >= 100);
  if ("path" in args) {
    const folderOnly = await time(
      () => callTool(byName(freshTools, "list_files"), args, { fileCache: emptyFileCache(), messages: [] }),
      15,
    );
    row(`cached ${label} vs fresh scan of that folder only`, cached, folderOnly, "folder scan", "", null);
  }
}

// 3. Cached read_file vs fresh read (100 KB).
const read = byName(cachedTools, "read_file");
const first = await callTool(read, { path: "big.ts" }, { fileCache: emptyFileCache(), messages: [] });
const withFile = cacheAfter(emptyFileCache(), first);
const earlier = messageOf(first);
const freshRead = await time(
  () => callTool(byName(freshTools, "read_file"), { path: "big.ts" }, { fileCache: emptyFileCache(), messages: [] }),
  25,
);
const refRead = await time(() => callTool(read, { path: "big.ts" }, { fileCache: withFile, messages: [earlier] }), 25);
const fullHit = await time(() => callTool(read, { path: "big.ts" }, { fileCache: withFile, messages: [] }), 25);
row("cached read_file 100 KB, reference answer", refRead, freshRead, "fresh read", "", null);
row("cached read_file 100 KB, full content from cache", fullHit, freshRead, "fresh read", "", null);

// 4. Checkpoint bytes per step after 5 MB of reads.
for (let i = 0; i < 10; i += 1) {
  const line = `${String(i).repeat(40)} some source text of file ${i}\n`;
  writeFileSync(join(root, `blob${i}.txt`), line.repeat(Math.ceil(500_000 / line.length)));
}
const OrdinaryState = Annotation.Root({
  ...MessagesAnnotation.spec,
  ...GuardState.spec,
  fileCache: Annotation<FileCacheState, FileCacheWrite | FileCacheWrite[]>({
    reducer: (s, w) => reduceFileCache(s, [w]),
    default: emptyFileCache,
  }),
});
async function checkpointBytes(kind: "on" | "off" | "ordinary"): Promise<{ ckpt: number; writes: number }> {
  const saver = new MemorySaver();
  const node = new GuardedToolNode(
    createFileTools({
      root,
      cache: kind !== "off",
      defaultLineLimit: 100_000,
      maxLineChars: 100_000,
      clock: later,
    }),
  );
  // Both states have the same channels; only fileCache's kind differs.
  const graph = new StateGraph((kind === "ordinary" ? OrdinaryState : GuardMessagesState) as typeof GuardMessagesState)
    .addNode("tools", node as never)
    .addEdge(START, "tools")
    .addEdge("tools", END)
    .compile({ checkpointer: saver });
  const calls = [
    ...Array.from({ length: 10 }, (_, i) => ({ name: "read_file", args: { path: `blob${i}.txt` } })),
    ...Array.from({ length: 5 }, () => ({ name: "list_files", args: { path: "pkg1/mod1" } })),
  ];
  const size = (v: unknown): number =>
    v instanceof Uint8Array
      ? v.length
      : v && typeof v === "object"
        ? Object.values(v).reduce((n: number, x) => n + size(x), 0)
        : typeof v === "string"
          ? v.length
          : 0;
  let before = { ckpt: 0, writes: 0 };
  const perStep: { ckpt: number; writes: number }[] = [];
  for (const [i, c] of calls.entries()) {
    const ai = new AIMessage({ content: "", tool_calls: [{ ...c, id: `k${i}`, type: "tool_call" }] });
    await graph.invoke({ messages: [ai] }, { configurable: { thread_id: "t" } });
    const now = { ckpt: size(saver.storage), writes: size(saver.writes) };
    perStep.push({ ckpt: now.ckpt - before.ckpt, writes: now.writes - before.writes });
    before = now;
  }
  const after = perStep.slice(10); // the steps after the 5 MB of reads
  return { ckpt: median(after.map((s) => s.ckpt)), writes: median(after.map((s) => s.writes)) };
}
const kb = (n: number) => `${(n / 1000).toFixed(0)} KB`;
const on = await checkpointBytes("on");
const off = await checkpointBytes("off");
const ordinary = await checkpointBytes("ordinary");

const header = ["measure", "ours", "compared with", "ratio", "goal", "result"];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i] as number)).join("  ");
console.log("File tools on a tree of 50,000 files (medians)\n");
console.log(line(header));
console.log("-".repeat(line(header).length));
for (const r of rows) console.log(line(r));
console.log("\nCheckpoint bytes per step after 5 MB of reads (MemorySaver; median of the 5 steps that follow)\n");
console.log(`  caching on (DeltaChannel):          checkpoint ${kb(on.ckpt)}, writes ${kb(on.writes)}`);
console.log(`  caching off:                        checkpoint ${kb(off.ckpt)}, writes ${kb(off.writes)}`);
console.log(`  cache in an ordinary reducer channel: checkpoint ${kb(ordinary.ckpt)}, writes ${kb(ordinary.writes)}`);
console.log(`  on / off: ${(on.ckpt / off.ckpt).toFixed(2)}x (goal <= 1.2x)`);
