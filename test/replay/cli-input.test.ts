/**
 * The replay CLI on incomplete input: message runs with tool calls that no result answers, and `.jsonl.gz` files
 * that end early or are damaged. Both are reported (which run and call; where the file broke) and exit 1, unless
 * `--lenient`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { callsWithoutResult, readRuns } from "../../src/replay/formats.js";
import type { ReplayRun } from "../../src/replay/replay.js";
import { cli } from "../support/cli.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "lgg-cli-input-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const file = (name: string, content: string | Buffer) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

/** A LangChain thread: call_1 and call_3 answered, call_2 (parallel to call_1) and call_4 not. */
const thread = {
  id: "thread-42",
  messages: [
    { type: "human", content: "Weather in Paris and Rome?" },
    {
      type: "ai",
      content: "",
      tool_calls: [
        { id: "call_1", name: "get_weather", args: { city: "Paris" } },
        { id: "call_2", name: "get_weather", args: { city: "Rome" } },
      ],
    },
    { type: "tool", tool_call_id: "call_1", name: "get_weather", content: "sunny" },
    { type: "ai", content: "", tool_calls: [{ id: "call_3", name: "search", args: { q: "Rome" } }] },
    { type: "tool", tool_call_id: "call_3", name: "search", content: "Rome: rain" },
    { type: "ai", content: "", tool_calls: [{ id: "call_4", name: "search", args: { q: "Rome" } }] },
  ],
};

const complete = {
  messages: [
    { type: "human", content: "List files" },
    { type: "ai", content: "", tool_calls: [{ id: "a", name: "ls", args: {} }] },
    { type: "tool", tool_call_id: "a", name: "ls", content: "a.py" },
    { type: "ai", content: "One file." },
  ],
};

/** A normalized run that repeats one call: the second is blocked (consecutive). */
const run = (i: number): ReplayRun => ({
  id: `run-${i}`,
  steps: [
    { role: "assistant", text: "", tool_calls: [{ name: "get_x", args: { i } }] },
    { role: "tool", ok: true, text: `x${"y".repeat(i * 37)}` },
    { role: "assistant", text: "", tool_calls: [{ name: "get_x", args: { i } }] },
    { role: "tool", ok: true, text: `x${"y".repeat(i * 37)}` },
  ],
});
const jsonl = (n: number) => `${Array.from({ length: n }, (_, i) => JSON.stringify(run(i))).join("\n")}\n`;

describe("tool calls without a result", () => {
  it("are reported per run (file, run, call ids) and exit 1; the run is still evaluated", async () => {
    const path = file("thread-42.json", JSON.stringify(thread));
    const out = await cli("replay", path, "--no-progress");
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(
      'langgraph-guards: thread-42.json (run "thread-42"): 2 tool calls have no result: ' +
        "call_2 (get_weather, message 2), call_4 (search, message 6)\n",
    );
    expect(out.stderr).toContain("--lenient accepts it");
    expect(out.stdout).toMatch(/\nall\s+1\s+2\s/); // one run, its two answered calls
  });

  it("with --lenient are warnings, exit 0", async () => {
    const path = file("thread-lenient.json", JSON.stringify(thread));
    const out = await cli("replay", path, "--no-progress", "--lenient");
    expect(out.code).toBe(0);
    expect(out.stderr).toMatch(/^langgraph-guards: warning: thread-lenient\.json \(run "thread-42"\): 2 tool calls/);
    expect(out.stderr).not.toContain("--lenient accepts it");
  });

  it("in JSON Lines name the line; --json lists them as errors, or warnings with --lenient", async () => {
    const lines = [JSON.stringify(complete), JSON.stringify({ ...thread, id: "t2" })].join("\n");
    const path = file("threads.jsonl", `${lines}\n`);
    const strict = await cli("replay", path, "--json");
    expect(strict.code).toBe(1);
    const parsed = JSON.parse(strict.stdout) as { errors: string[]; warnings: string[]; totals: { runs: number } };
    expect(parsed.totals.runs).toBe(2);
    expect(parsed.errors).toEqual([
      'threads.jsonl:2 (run "t2"): 2 tool calls have no result: call_2 (get_weather, message 2), call_4 (search, message 6)',
    ]);
    expect(parsed.warnings).toEqual([]);
    const lenient = JSON.parse((await cli("replay", path, "--json", "--lenient")).stdout) as typeof parsed;
    expect(lenient.errors).toEqual([]);
    expect(lenient.warnings).toEqual(parsed.errors);
  });

  it("more than 20 incomplete runs: 20 named and a count, still warnings with --lenient (exit 0)", async () => {
    const lines = Array.from({ length: 25 }, (_, i) => JSON.stringify({ ...thread, id: `t${i}` }));
    const path = file("many-incomplete.jsonl", `${lines.join("\n")}\n`);
    const strict = await cli("replay", path, "--json");
    expect(strict.code).toBe(1);
    const lenient = await cli("replay", path, "--json", "--lenient");
    expect(lenient.code).toBe(0);
    const parsed = JSON.parse(lenient.stdout) as { errors: string[]; warnings: string[] };
    expect(parsed.errors).toEqual([]);
    expect(parsed.warnings).toHaveLength(21);
    expect(parsed.warnings[20]).toBe("many-incomplete.jsonl: … and 5 more problems (the first 20 are above)");
  });

  it("one missing call is named alone; OpenAI messages are checked too; calls without an id never have one", async () => {
    const openai = [
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id: "c9", type: "function", function: { name: "ls", arguments: "{}" } }],
      },
    ];
    const out = await cli("replay", file("chat.json", JSON.stringify(openai)), "--no-progress");
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("langgraph-guards: chat.json: tool call c9 (ls, message 2) has no result\n");
    const noId = [{ type: "ai", content: "", tool_calls: [{ name: "ls", args: {} }] }];
    const [read] = readRuns(JSON.stringify(noId), { file: "x.json" }).runs;
    expect(callsWithoutResult(read as ReplayRun)?.calls).toEqual([{ id: undefined, name: "ls", message: 1 }]);
  });

  it("are not reported for complete threads, nor for normalized runs that end after a call", async () => {
    const ended: ReplayRun = {
      id: "ended",
      steps: [{ role: "assistant", text: "", tool_calls: [{ name: "ls", args: {} }] }],
    };
    const a = await cli("replay", file("complete.json", JSON.stringify(complete)), "--no-progress");
    const b = await cli("replay", file("ended.jsonl", `${JSON.stringify(ended)}\n`), "--no-progress");
    expect([a.code, a.stderr, b.code, b.stderr]).toEqual([0, "", 0, ""]);
  });
});

describe("a .jsonl.gz that ends early", () => {
  const text = jsonl(40);
  const gz = gzipSync(text);
  /** How many complete lines the first `bytes` bytes of the text hold. */
  const linesIn = (bytes: number) => text.slice(0, bytes).split("\n").length - 1;

  it("keeps every complete line, says where it broke, and exits 1", async () => {
    const path = file("trajectories.jsonl.gz", gz.subarray(0, Math.floor(gz.length * 0.6)));
    const out = await cli("replay", path, "--json");
    expect(out.code).toBe(1);
    const parsed = JSON.parse(out.stdout) as { errors: string[]; totals: { runs: number; calls: number } };
    expect(parsed.errors).toHaveLength(1);
    const m =
      /^trajectories\.jsonl\.gz: truncated after line (\d+) \(byte (\d+)\): (\d+) complete runs read \(gzip: unexpected end of file\)$/.exec(
        parsed.errors[0] ?? "",
      );
    expect(m, parsed.errors[0]).not.toBeNull();
    const [lines, bytes, runs] = [Number(m?.[1]), Number(m?.[2]), Number(m?.[3])];
    expect(lines).toBeGreaterThan(5);
    expect(lines).toBeLessThan(40);
    expect(runs).toBe(lines);
    expect(parsed.totals.runs).toBe(lines);
    expect(parsed.totals.calls).toBe(2 * lines);
    expect(text.slice(0, bytes).endsWith("\n")).toBe(true);
    expect(linesIn(bytes)).toBe(lines);
    expect(out.stderr).toContain("langgraph-guards: trajectories.jsonl.gz: truncated after line");
  });

  it("with --lenient is a warning, exit 0", async () => {
    const path = file("lenient.jsonl.gz", gz.subarray(0, Math.floor(gz.length * 0.5)));
    const out = await cli("replay", path, "--no-progress", "--lenient");
    expect(out.code).toBe(0);
    expect(out.stderr).toMatch(/^langgraph-guards: warning: lenient\.jsonl\.gz: truncated after line \d+ \(byte \d+\)/);
  });

  it("at any cut, reads exactly the complete lines before it (never more, never a partial line)", async () => {
    // A text far larger than zlib's window, so that cuts land in many deflate blocks.
    const big = jsonl(400);
    const bigGz = gzipSync(big);
    const cuts = [11, 100, 1000, ...Array.from({ length: 12 }, (_, k) => Math.floor((bigGz.length * (k + 1)) / 13))]
      .filter((cut) => cut < bigGz.length)
      .sort((a, b) => a - b);
    const full = big.split("\n").length - 1;
    let previous = -1;
    for (const cut of cuts) {
      const out = await cli("replay", file("cut.jsonl.gz", bigGz.subarray(0, cut)), "--json");
      const parsed = JSON.parse(out.stdout) as { errors: string[]; totals: { runs: number } };
      expect(out.code, `cut ${cut}`).toBe(1);
      const m = /truncated after line (\d+) \(byte (\d+)\): (\d+) complete runs? read/.exec(parsed.errors.at(-1) ?? "");
      expect(m, `cut ${cut}: ${parsed.errors.join("; ")}`).not.toBeNull();
      const lines = Number(m?.[1]);
      expect(big.slice(0, Number(m?.[2])).split("\n").length - 1).toBe(lines);
      expect(parsed.totals.runs).toBe(lines);
      expect(parsed.errors.filter((e) => !e.includes("truncated"))).toEqual([]); // no partial line read
      expect(lines).toBeGreaterThanOrEqual(previous);
      expect(lines).toBeLessThan(full);
      previous = lines;
    }
    expect(previous).toBeGreaterThan(full * 0.5);
  });

  it("damaged inside: the lines before the damage are read, and it says so", async () => {
    const big = jsonl(400);
    const damaged = Buffer.from(gzipSync(big));
    const at = Math.floor(damaged.length * 0.7);
    for (let k = 0; k < 64; k += 1) damaged[at + k] = (damaged[at + k] ?? 0) ^ 0x5a;
    const out = await cli("replay", file("damaged.jsonl.gz", damaged), "--json");
    expect(out.code).toBe(1);
    const parsed = JSON.parse(out.stdout) as { errors: string[]; totals: { runs: number } };
    const broke = parsed.errors.find((e) => e.startsWith("damaged.jsonl.gz: "));
    expect(broke).toMatch(
      /^damaged\.jsonl\.gz: (damaged|truncated) after line \d+ \(byte \d+\): \d+ complete runs read/,
    );
    expect(parsed.totals.runs).toBeGreaterThan(100);
  });

  it("a file that is not gzip at all is still unreadable; a complete one reads cleanly", async () => {
    const notGz = await cli("replay", file("plain.jsonl.gz", jsonl(2)), "--no-progress");
    expect(notGz.code).toBe(1);
    expect(notGz.stderr).toMatch(/plain\.jsonl\.gz: incorrect header check\n/);
    const whole = await cli("replay", file("whole.jsonl.gz", gz), "--no-progress");
    expect([whole.code, whole.stderr]).toEqual([0, ""]);
    expect(whole.stdout).toMatch(/\nall\s+40\s+80\s/);
  });
});

it("--help documents --lenient", async () => {
  const out = await cli("--help");
  expect(out.code).toBe(0);
  expect(out.stdout).toContain("--lenient");
});

describe("the replay CLI's small manners (issue 36, item 10)", () => {
  it("a missing file: says 'file not found', prints no table of zeros, exits 1", async () => {
    const out = await cli("replay", join(dir, "nope.jsonl"), "--no-progress");
    expect(out.code).toBe(1);
    expect(out.stdout).toBe("");
    expect(out.stderr).toMatch(/nope\.jsonl: file not found/);
  });

  it("--detail numbers calls from 1 and lists only runs with calls not run", async () => {
    const step = (text: string) => [
      { role: "assistant", text: "", tool_calls: [{ name: "get_order", args: { id: "A1" } }] },
      { role: "tool", ok: true, text },
    ];
    const looping = { id: "loops", steps: [{ role: "user", text: "Go." }, ...step("x"), ...step("x"), ...step("x")] };
    const fine = { id: "fine", steps: [{ role: "user", text: "Go." }, ...step("y")] };
    const path = file("detail.jsonl", `${JSON.stringify(looping)}\n${JSON.stringify(fine)}\n`);
    const out = await cli("replay", path, "--detail", "--no-progress");
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(
      "loops (detail.jsonl): 3 calls, 2 not run\n  call 2 get_order: blocked (consecutive)\n",
    );
    expect(out.stdout).not.toContain("fine (detail.jsonl)");
  });
});
