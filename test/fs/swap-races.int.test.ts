/**
 * Issue 35, items 7 and 8: another process swaps a folder of the project for a symlink to an outside folder and
 * back, as fast as it can, while the tools write and list. Whatever the timing, nothing is created outside the root,
 * no name from outside is listed, and every answer says what happened. Each race runs for a bounded time and asserts
 * the invariant, not a count.
 */
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { createFileTools, type FileToolsOptions } from "../../src/fs/tools.js";
import { tempProjects } from "../support/projects.js";
import { directTools } from "./direct.js";
import { everything, startSwapper } from "./swapper.js";

const projects = tempProjects("lgg-swap-");

/** A project with the given files, and a folder outside it holding `outsideFiles`. */
function project(files: Record<string, string>, outsideFiles: Record<string, string>) {
  const root = projects.project(files);
  return { root, outside: projects.outside(outsideFiles) };
}

type Invocable = { name: string; invoke(input: unknown): Promise<unknown> };

/** The tools over `root`, called as a tool node calls them (a tool call, no graph state): the reply's text and status. */
function toolsOf(root: string, options: Partial<FileToolsOptions> = {}) {
  const tools = createFileTools({ root, ...options }) as unknown as Invocable[];
  let n = 0;
  return async (name: string, args: Record<string, unknown>) => {
    const tool = tools.find((t) => t.name === name) as Invocable;
    n += 1;
    const reply = (await tool.invoke({ id: `c${n}`, name, args, type: "tool_call" })) as ToolMessage;
    return { text: String(reply.content), status: reply.status };
  };
}

/** The fewest steps a race takes: the tests check it ran. */
const MIN_STEPS = 100;

/** Runs `step` over and over, `width` at a time, for `ms` (and at least `MIN_STEPS`, or `max` steps): a race of bounded length. */
async function during<T>(ms: number, max: number, width: number, step: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  const deadline = Date.now() + ms;
  let i = 0;
  // At least MIN_STEPS steps however slow the machine is (the race must run), then until the time is up.
  while (i < max && (Date.now() < deadline || out.length <= MIN_STEPS)) {
    const batch = Array.from({ length: width }, () => step(++i));
    out.push(...(await Promise.all(batch)));
  }
  return out;
}

describe("a folder swapped for a symlink by another process", () => {
  it("during writes: nothing is created outside the root, and every answer is true", async () => {
    const { root, outside } = project({ "d/own.txt": "mine\n" }, { "marker.txt": "outside\n" });
    const call = toolsOf(root, { cache: false });
    const swapper = await startSwapper(root, "d", outside);
    let answers: { i: number; text: string; status: string | undefined }[];
    try {
      answers = await during(4000, 3000, 8, async (i) => {
        const answer = await call("write_to_file", { path: `d/w${i}/deep/f${i}.txt`, content: `content ${i}\n` });
        return { i, ...answer };
      });
    } finally {
      await swapper.stop();
    }
    // Nothing outside: not a file, not a folder, not a temporary file.
    expect(everything(outside)).toEqual(["marker.txt"]);
    const inside = everything(root);
    expect(inside.filter((p) => p.endsWith(".tmp"))).toEqual([]);
    const byName = new Map(inside.map((p) => [basename(p), p]));
    for (const { i, text, status } of answers) {
      if (status === "success") {
        // "Wrote ..." and the file is inside the root, with that content (its folder may have been moved since).
        expect(text).toBe(`Wrote 1 lines (${`content ${i}\n`.length} characters) to d/w${i}/deep/f${i}.txt.`);
        const where = byName.get(`f${i}.txt`);
        expect(where, text).toBeDefined();
        expect(readFileSync(join(root, where as string), "utf8")).toBe(`content ${i}\n`);
      } else {
        // A refusal says nothing was written, and nothing was: no file, no folder it would have made.
        expect(text).toMatch(/outside the project root|[Nn]othing was (written|changed)|cannot be resolved/);
        expect(byName.has(`f${i}.txt`), text).toBe(false);
        expect(byName.has(`w${i}`), text).toBe(false);
      }
    }
    expect(answers.length).toBeGreaterThan(MIN_STEPS); // the race ran
  }, 120_000);

  it("during listings: no name from outside the root is ever listed, with the cache on or off", async () => {
    // The outside folder mirrors the folders below d: a read of d/sN through a swapped d would find outside/sN.
    const files: Record<string, string> = { "d/inside.txt": "", "top.txt": "" };
    const outsideFiles: Record<string, string> = { "OUTSIDE-secret.txt": "" };
    for (let n = 0; n < 40; n += 1) {
      files[`d/s${n}/inside-${n}.txt`] = "";
      outsideFiles[`s${n}/OUTSIDE-${n}.txt`] = "";
    }
    const { root, outside } = project(files, outsideFiles);
    const uncached = toolsOf(root, { cache: false });
    const cached = directTools(root); // one thread: the tree in state, refreshed folder by folder
    const swapper = await startSwapper(root, "d", outside);
    let listings: string[];
    try {
      const calls: [string, Record<string, unknown>][] = [
        ["uncached", { recursive: true }],
        ["uncached", { path: "d" }],
        ["uncached", { path: "d/s7" }],
        ["cached", { recursive: true }],
        ["cached", { path: "d", recursive: true }],
      ];
      listings = await during(4000, 20_000, 1, async (i) => {
        const [which, args] = calls[i % calls.length] as [string, Record<string, unknown>];
        const answer = which === "cached" ? await cached.call("list_files", args) : await uncached("list_files", args);
        return answer.text;
      });
    } finally {
      await swapper.stop();
    }
    const leaked = listings.filter((text) => text.includes("OUTSIDE"));
    expect(leaked.slice(0, 3)).toEqual([]);
    expect(listings.length).toBeGreaterThan(MIN_STEPS); // the race ran
  }, 120_000);
});
