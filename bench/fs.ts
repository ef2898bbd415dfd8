/**
 * bench/fs: the file tools on a generated tree of 50,000 files in 1,051 folders (`--quick`: 5,000 in 111), with a
 * root `.gitignore` of 26 rules, a `node_modules` and ignored files, side by side in one run (medians, the compared
 * variants interleaved so that machine noise hits both alike):
 *
 * 1. the first `list_files` (a scan of the whole root) vs a plain fdir crawl of the same tree (goal <= 1.3x); the
 *    scan's listing must hold exactly fdir's paths less the ignored ones (filtered with the `ignore` package);
 * 2. a cached recursive listing of the root vs its floor (an `lstat` of every folder, which a listing that is never
 *    stale cannot skip) and vs a fresh scan; a cached listing of one folder vs a fresh scan of that folder and vs a
 *    no-op tool call (the floor of any tool call);
 * 3. a cached `read_file` of 100 KB vs a fresh read and vs its floor (a `stat`, and the numbered lines built);
 * 4. checkpoint bytes per step after 5 MB of reads (0.4 MB with `--quick`), caching on / off
 *    (goal: on within 1.2x of off), and what the cache weighs in state (its entries; the directory tree).
 *
 * The tools are called as ToolNode calls them (with the thread's state in the runtime), so graph overhead does not
 * blur the comparison. Exits 1 only on a wrong result (a listing or a read that differs from the fresh one).
 * Run: npm run bench:fs [-- --quick]
 */
import { lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { AIMessage, type ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { fdir } from "fdir";
import ignore from "ignore";
import { z } from "zod";
import { emptyFileCache, type FileCacheState, type FileCacheWrite, reduceFileCache } from "../src/fs/cache.js";
import { viewLines } from "../src/fs/read.js";
import { createFileTools } from "../src/fs/tools.js";
import { DEFAULT_IGNORED } from "../src/fs/tree.js";
import { GuardedToolNode, GuardMessagesState } from "../src/index.js";
import { type Figure, fmtMs, fmtRatio, median, quick, report } from "./report.js";

const PACKAGES = quick ? 10 : 50;
const MODULES = quick ? 10 : 20;
const FILES = 50;
const listedFiles = PACKAGES * MODULES * FILES;
const folders = 1 + PACKAGES + PACKAGES * MODULES;
const count = (n: number) => n.toLocaleString("en-US");
const SIZE = `${count(listedFiles)} files`;

const GITIGNORE = `# Dependencies
node_modules/

# Build output and what npm pack writes
dist/
*.tsbuildinfo
*.tgz

# Test coverage
coverage/

# Generated docs
/docs/api/
/temp/

# Notebook checkpoints
.ipynb_checkpoints/

# Temporary and scratch projects
.vitest-tmp/
.scratch/
.tmp/
tmp/

# Local databases
*.sqlite
*.sqlite-*
*.sqlite3
*.db
*.db-*

# Logs, caches and local files
*.log
!keep.log
.cache/
.eslintcache
.DS_Store
.idea/
.vscode/
`;

const started = performance.now();
const progress = (text: string) =>
  process.stderr.write(`... ${((performance.now() - started) / 1000).toFixed(1)} s: ${text}\n`);
let wrong = 0;
function mustEqual(what: string, ours: unknown, expected: unknown): void {
  const a = JSON.stringify(ours);
  const b = JSON.stringify(expected);
  if (a === b) return;
  wrong += 1;
  console.error(`WRONG RESULT: ${what}\n  ours:     ${a.slice(0, 400)}\n  expected: ${b.slice(0, 400)}`);
}

// ---------------------------------------------------------------------------------------------------------------
// The tree: listed files, and a few ignored ones (by .gitignore, and node_modules by the defaults)
// ---------------------------------------------------------------------------------------------------------------

const root = mkdtempSync(join(tmpdir(), "lgg-bench-fs-"));
const hourAgo = new Date(Date.now() - 3_600_000);
process.on("exit", () => rmSync(root, { recursive: true, force: true }));

progress(`generating ${SIZE} in ${count(folders)} folders, and ignored ones`);
for (let a = 0; a < PACKAGES; a += 1) {
  for (let b = 0; b < MODULES; b += 1) {
    const dir = join(root, `pkg${a}`, `mod${b}`);
    mkdirSync(dir, { recursive: true });
    for (let c = 0; c < FILES - (b === 0 ? 1 : 0); c += 1) {
      writeFileSync(join(dir, `file${c}.ts`), `export const v${c} = ${c};\n`);
    }
    if (b === 0) writeFileSync(join(dir, "keep.log"), "kept by !keep.log\n"); // listed: the 50th file
    if (b === 1) writeFileSync(join(dir, "debug.log"), "ignored\n");
    utimesSync(dir, hourAgo, hourAgo);
  }
  utimesSync(join(root, `pkg${a}`), hourAgo, hourAgo);
}
for (const dir of ["node_modules/dep", "dist"]) {
  mkdirSync(join(root, dir), { recursive: true });
  for (let c = 0; c < 10; c += 1) writeFileSync(join(root, dir, `f${c}.js`), "x\n");
}
writeFileSync(join(root, ".gitignore"), GITIGNORE);
const big = Array.from({ length: 2000 }, (_, i) => `const line${i} = "${"x".repeat(40)}";`).join("\n");
writeFileSync(join(root, "big.ts"), big.slice(0, 100_000));
for (const p of ["big.ts", ".gitignore", "dist", "node_modules/dep", "node_modules", ""]) {
  utimesSync(join(root, p), hourAgo, hourAgo);
}

type AnyTool = { name: string; invoke: (input: unknown, config?: unknown) => Promise<unknown> };
// The tree is made just before it is measured: a clock ahead of it keeps the cache's racy window (which ctime, unlike
// mtime, cannot be set back to escape) from turning every cached answer into a re-read.
const later = () => Date.now() + 5000;
// The 100 KB file is read whole (its numbered lines are 114,000 characters, over the default limits.maxReadChars).
const tools = (cache: boolean) =>
  createFileTools({
    root,
    cache,
    limits: { listLimit: 100, maxReadChars: 200_000 },
    clock: later,
  }) as unknown as AnyTool[];
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
const textOf = (output: unknown) => String(messageOf(output).content);
const cachedOf = (output: unknown) => (messageOf(output).artifact as { cached?: boolean } | undefined)?.cached;

/**
 * Medians of interleaved runs of each variant (each run timed alone; the order rotates), after `warmup` runs of
 * each (so that the code compared is compiled by then, as it is in a process that has listed a few times).
 */
async function interleaved(
  variants: Record<string, () => unknown>,
  runs: number,
  warmup = 3,
): Promise<Record<string, number>> {
  const names = Object.keys(variants);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let w = 0; w < warmup; w += 1) for (const n of names) await variants[n]?.();
  for (let i = 0; i < runs; i += 1) {
    for (let k = 0; k < names.length; k += 1) {
      const name = names[(i + k) % names.length] as string;
      const start = performance.now();
      await variants[name]?.();
      samples[name]?.push(performance.now() - start);
    }
  }
  return Object.fromEntries(names.map((n) => [n, median(samples[n] ?? [])]));
}

const rows: string[][] = [];
const figures: Figure[] = [];
/** A row of the bench's own table, and (unless `headline` is false) a figure of the report. */
function row(
  measure: string,
  ours: number,
  anchor: number,
  anchorName: string,
  goal?: { max: number; text: string },
  headline = true,
) {
  const ratio = ours / anchor;
  const met = goal === undefined ? null : ratio <= goal.max;
  rows.push([
    measure,
    fmtMs(ours),
    `${fmtMs(anchor)} ${anchorName}`,
    fmtRatio(ratio),
    goal?.text ?? "",
    met === null ? "info" : quick ? "not judged (quick)" : met ? "met" : "MISSED",
  ]);
  if (!headline) return;
  figures.push({
    bench: "fs",
    figure: measure,
    ours: fmtMs(ours),
    anchor: `${fmtMs(anchor)} ${anchorName}`,
    ratio: fmtRatio(ratio),
    goal: goal?.text ?? "",
    met,
  });
}

// ---------------------------------------------------------------------------------------------------------------
// 1. The first scan vs a plain fdir crawl, and what it lists vs fdir's paths less the ignored ones
// ---------------------------------------------------------------------------------------------------------------

const crawl = () => new fdir().withRelativePaths().withDirs().crawl(root).sync();
const fresh = () => ({ fileCache: emptyFileCache(), messages: [] });
const scanTool = byName(tools(true), "list_files");
const firstScan = () => callTool(scanTool, {}, fresh());

progress("first scan vs fdir");
const warm = cacheAfter(emptyFileCache(), await firstScan());
{
  const rules = ignore().add(GITIGNORE);
  // fdir ends the paths of folders with a slash, as the ignore package wants them.
  const expected = crawl()
    .filter((p) => p !== "." && p !== "")
    .filter((p) => !p.split("/").some((segment) => DEFAULT_IGNORED.includes(segment)))
    .filter((p) => !rules.ignores(p))
    .map((p) => p.replace(/\/$/, ""))
    .sort();
  const listed: string[] = [];
  for (const [rel, node] of Object.entries(warm.tree ?? {})) {
    for (const entry of node.entries) listed.push(`${rel === "" ? "" : `${rel}/`}${entry.replace(/\/$/, "")}`);
  }
  mustEqual("the first scan lists fdir's paths less the ignored ones", listed.sort(), expected);
  mustEqual("the number of listed files", listed.length - folders + 1 - 2, listedFiles); // less big.ts, .gitignore
}
// A small tree is scanned in a few ms: more warm-up runs, or the median falls among runs not yet compiled.
const first = await interleaved({ fdir: crawl, scan: firstScan }, quick ? 31 : 15, quick ? 40 : 3);
row(`list_files first scan, ${SIZE}`, first.scan as number, first.fdir as number, "fdir", {
  max: 1.3,
  text: "<= 1.3x",
});

// ---------------------------------------------------------------------------------------------------------------
// 2. Cached listings vs their floors and vs fresh scans
// ---------------------------------------------------------------------------------------------------------------

progress("cached listings");
const cachedList = byName(tools(true), "list_files");
const freshList = byName(tools(false), "list_files");
const folderPaths = Object.keys(warm.tree ?? {}).map((rel) => (rel === "" ? root : join(root, rel)));
mustEqual("one lstat per folder of the tree", folderPaths.length, folders);
const statLoop = () => {
  for (const p of folderPaths) lstatSync(p);
};
{
  const cached = await callTool(cachedList, { recursive: true }, { fileCache: warm, messages: [] });
  const uncached = await callTool(freshList, { recursive: true }, fresh());
  mustEqual("a cached recursive listing is the fresh one", textOf(cached), textOf(uncached));
  mustEqual("a recursive listing of an unchanged tree is served from the cache", cachedOf(cached), true);
}
// Against its floor apart from the fresh scans: the garbage a 50,000-entry scan leaves would be collected during
// the next (short) run, whichever it is.
const cachedRecursive = () => callTool(cachedList, { recursive: true }, { fileCache: warm, messages: [] });
const recursive = await interleaved({ cached: cachedRecursive, floor: statLoop }, quick ? 15 : 41);
const recursiveFresh = await interleaved(
  { cached: cachedRecursive, fresh: () => callTool(freshList, { recursive: true }, fresh()) },
  quick ? 7 : 15,
);
row(
  `cached recursive listing, ${count(folders)} folders, vs lstat of each`,
  recursive.cached as number,
  recursive.floor as number,
  "lstat loop",
);
row(
  `cached recursive listing, ${count(folders)} folders, vs fresh scan`,
  recursiveFresh.cached as number,
  recursiveFresh.fresh as number,
  "fresh scan",
);

// The floor of any tool call: a tool that does nothing, called the same way.
const noop = tool(async () => "ok", {
  name: "noop",
  description: "Does nothing.",
  schema: z.object({ path: z.string().optional() }),
}) as unknown as AnyTool;
const one = { path: "pkg7/mod3" };
{
  const cached = await callTool(cachedList, one, { fileCache: warm, messages: [] });
  mustEqual(
    "a cached one-folder listing is the fresh one",
    textOf(cached),
    textOf(await callTool(freshList, one, fresh())),
  );
  mustEqual("a one-folder listing of an unchanged tree is served from the cache", cachedOf(cached), true);
}
const single = await interleaved(
  {
    cached: () => callTool(cachedList, one, { fileCache: warm, messages: [] }),
    fresh: () => callTool(freshList, one, fresh()),
    noop: () => callTool(noop, one, { messages: [] }),
  },
  quick ? 25 : 101,
);
row("cached one-folder listing vs fresh scan of it", single.cached as number, single.fresh as number, "fresh scan");
row(
  "cached one-folder listing vs a no-op tool call",
  single.cached as number,
  single.noop as number,
  "no-op tool",
  undefined,
  false,
);

// ---------------------------------------------------------------------------------------------------------------
// 3. Cached read_file vs a fresh read and vs its floor
// ---------------------------------------------------------------------------------------------------------------

progress("cached reads");
const read = byName(tools(true), "read_file");
const freshRead = byName(tools(false), "read_file");
const bigPath = join(root, "big.ts");
const firstRead = await callTool(read, { path: "big.ts" }, fresh());
const withFile = cacheAfter(emptyFileCache(), firstRead);
const earlier = messageOf(firstRead);
{
  const full = await callTool(read, { path: "big.ts" }, { fileCache: withFile, messages: [] });
  mustEqual(
    "a cached read is the fresh one",
    textOf(full),
    textOf(await callTool(freshRead, { path: "big.ts" }, fresh())),
  );
  mustEqual("a read of an unchanged file is served from the cache", cachedOf(full), true);
  const ref = await callTool(read, { path: "big.ts" }, { fileCache: withFile, messages: [earlier] });
  mustEqual(
    "a repeat read answers with a reference",
    (messageOf(ref).artifact as { content_ref?: string })?.content_ref,
    earlier.tool_call_id,
  );
}
const content = big.slice(0, 100_000);
const reads = await interleaved(
  {
    full: () => callTool(read, { path: "big.ts" }, { fileCache: withFile, messages: [] }),
    reference: () => callTool(read, { path: "big.ts" }, { fileCache: withFile, messages: [earlier] }),
    fresh: () => callTool(freshRead, { path: "big.ts" }, fresh()),
    floor: () => {
      statSync(bigPath);
      return viewLines(content).text.length;
    },
  },
  quick ? 25 : 101,
);
row("cached read_file 100 KB vs fresh read", reads.full as number, reads.fresh as number, "fresh read");
row("cached read_file 100 KB vs stat + lines", reads.full as number, reads.floor as number, "floor");
row(
  "cached read_file 100 KB, reference answer, vs fresh read",
  reads.reference as number,
  reads.fresh as number,
  "fresh read",
  undefined,
  false,
);

// ---------------------------------------------------------------------------------------------------------------
// 4. Checkpoint bytes per step after 5 MB of reads
// ---------------------------------------------------------------------------------------------------------------

progress("checkpoint bytes");
const BLOBS = quick ? 4 : 10;
const BLOB_BYTES = quick ? 100_000 : 500_000;
const AFTER = quick ? 3 : 5;
for (let i = 0; i < BLOBS; i += 1) {
  const line = `${String(i).repeat(40)} some source text of file ${i}\n`;
  writeFileSync(join(root, `blob${i}.txt`), line.repeat(Math.ceil(BLOB_BYTES / line.length)));
}
async function checkpointBytes(
  kind: "on" | "off",
): Promise<{ ckpt: number; writes: number; tree: number; files: number }> {
  const saver = new MemorySaver();
  const node = new GuardedToolNode(
    createFileTools({
      root,
      cache: kind !== "off",
      limits: { defaultLineLimit: 100_000, maxLineChars: 100_000 },
      clock: later,
    }),
  );
  const graph = new StateGraph(GuardMessagesState)
    .addNode("tools", node as never)
    .addEdge(START, "tools")
    .addEdge("tools", END)
    .compile({ checkpointer: saver });
  const steps = [
    ...Array.from({ length: BLOBS }, (_, i) => ({ name: "read_file", args: { path: `blob${i}.txt` } })),
    ...Array.from({ length: AFTER }, () => ({ name: "list_files", args: { path: "pkg1/mod1" } })),
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
  for (const [i, c] of steps.entries()) {
    const ai = new AIMessage({ content: "", tool_calls: [{ ...c, id: `k${i}`, type: "tool_call" }] });
    await graph.invoke({ messages: [ai] }, { configurable: { thread_id: "t" } });
    const now = { ckpt: size(saver.storage), writes: size(saver.writes) };
    perStep.push({ ckpt: now.ckpt - before.ckpt, writes: now.writes - before.writes });
    before = now;
  }
  const after = perStep.slice(BLOBS); // the steps after the reads
  // What the cache weighs in each checkpoint: its files' entries (no contents) and the directory tree.
  const cache = (await graph.getState({ configurable: { thread_id: "t" } })).values.fileCache;
  return {
    ckpt: median(after.map((s) => s.ckpt)),
    writes: median(after.map((s) => s.writes)),
    tree: JSON.stringify(cache.tree ?? {}).length,
    files: JSON.stringify(cache.files).length,
  };
}
const kb = (n: number) => `${(n / 1000).toFixed(0)} KB`;
const on = await checkpointBytes("on");
const off = await checkpointBytes("off");
const readMb = `${(BLOBS * BLOB_BYTES) / 1e6} MB`;
progress("done");
figures.push({
  bench: "fs",
  figure: `checkpoint bytes per step after ${readMb} of reads, cache on / off`,
  ours: kb(on.ckpt),
  anchor: `${kb(off.ckpt)} off`,
  ratio: fmtRatio(on.ckpt / off.ckpt),
  goal: "<= 1.2x",
  met: on.ckpt / off.ckpt <= 1.2,
});

// ---------------------------------------------------------------------------------------------------------------
// The bench's own table, then the headline figures
// ---------------------------------------------------------------------------------------------------------------

const header = ["measure", "ours", "compared with", "ours / it", "goal", "result"];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
const line = (r: string[]) =>
  r
    .map((c, i) => c.padEnd(widths[i] as number))
    .join("  ")
    .trimEnd();
console.log(`File tools on a tree of ${SIZE} in ${count(folders)} folders (medians${quick ? ", quick sizes" : ""})\n`);
console.log(line(header));
console.log("-".repeat(line(header).length));
for (const r of rows) console.log(line(r));
console.log(
  `\nCheckpoint bytes per step after ${readMb} of reads (MemorySaver; median of the ${AFTER} steps that follow)\n`,
);
console.log(`  caching on:  checkpoint ${kb(on.ckpt)}, writes ${kb(on.writes)}`);
console.log(`  caching off: checkpoint ${kb(off.ckpt)}, writes ${kb(off.writes)}`);
console.log(
  `  the cache in state (caching on): files ${kb(on.files)} (${BLOBS} entries, no contents), directory tree ${kb(on.tree)}`,
);
console.log(`  on / off: ${fmtRatio(on.ckpt / off.ckpt)} (goal <= 1.2x)`);
report(figures);
if (wrong > 0) {
  console.error(`\n${wrong} wrong result(s)`);
  process.exitCode = 1;
}
