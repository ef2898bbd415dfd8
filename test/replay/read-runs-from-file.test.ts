/**
 * `readRunsFromFile` (langgraph-guards/replay), the streaming reader behind the CLI: a file read a line at a time
 * (gunzipped as a stream) gives the same runs and the same errors as `readRuns` on the file's whole text, for every
 * input format; its caps are options, and a file that is not a regular file is refused.
 */
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReplayInputItem, readRuns, readRunsFromFile } from "../../src/replay/index.js";
import type { ReplayRun } from "../../src/replay/replay.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "lgg-read-file-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (i: number): ReplayRun => ({
  id: `run-${i}`,
  source: "s",
  steps: [
    { role: "user", text: "go" },
    { role: "assistant", text: "é ✓", tool_calls: [{ name: "get_x", args: { i } }] },
    { role: "tool", ok: true, text: "ünïcode 🙂" },
  ],
});
const openai = [
  { role: "user", content: "hi" },
  {
    role: "assistant",
    content: "",
    tool_calls: [{ id: "a", type: "function", function: { name: "ls", arguments: "{}" } }],
  },
  { role: "tool", tool_call_id: "a", content: "a.py" },
];

/** Inputs of every shape `readRuns` distinguishes, by name. */
const inputs: Record<string, string> = {
  "JSON Lines": `${[run(1), run(2), run(3)].map((r) => JSON.stringify(r)).join("\n")}\n`,
  "JSON Lines, CRLF, blank lines, no final newline": `\r\n${JSON.stringify(run(1))}\r\n\r\n${JSON.stringify(run(2))}`,
  "JSON Lines with bad lines": `${JSON.stringify(run(1))}\n{oops\n[1]\n${JSON.stringify({ steps: [{ role: "tool" }] })}\n`,
  "JSON Lines whose first line is bad": `{oops\n${JSON.stringify(run(1))}\n${JSON.stringify(openai)}\n`,
  "one line": JSON.stringify(run(7)),
  "one line, then blank lines": `${JSON.stringify(openai)}\n\n\n`,
  "a pretty-printed list of runs": JSON.stringify([run(1), run(2)], null, 2),
  "a pretty-printed thread": JSON.stringify({ id: "t", messages: openai }, null, 2),
  "pretty-printed, not JSON": '{\n  "a": 1,\n',
  empty: "",
  blank: "\n \n",
};

/** The runs (as JSON) and error messages of an item list. */
function summary(items: ReplayInputItem[]) {
  return {
    runs: items.flatMap((i) => ("run" in i ? [JSON.stringify(i.run)] : [])),
    errors: items.flatMap((i) => ("error" in i ? [i.error.message] : [])),
  };
}

async function collect(path: string, options?: Parameters<typeof readRunsFromFile>[1]) {
  const items: ReplayInputItem[] = [];
  for await (const item of readRunsFromFile(path, options)) items.push(item);
  return items;
}

describe("readRunsFromFile", () => {
  for (const [name, text] of Object.entries(inputs)) {
    it(`reads what readRuns reads: ${name} (plain and gzip)`, async () => {
      const expected = readRuns(text, { file: "in.jsonl" });
      const want = { runs: expected.runs.map((r) => JSON.stringify(r)), errors: expected.errors.map((e) => e.message) };
      writeFileSync(join(dir, "in.jsonl"), text);
      writeFileSync(join(dir, "in.jsonl.gz"), gzipSync(text));
      expect(summary(await collect(join(dir, "in.jsonl")))).toEqual(want);
      expect(summary(await collect(join(dir, "in.jsonl.gz"), { file: "in.jsonl" }))).toEqual(want);
    });
  }

  it("passes the format on, as readRuns does", async () => {
    writeFileSync(join(dir, "chat.json"), JSON.stringify(openai));
    const items = await collect(join(dir, "chat.json"), { format: "langchain" });
    expect(summary(items).errors).toEqual(["chat.json: this is openai input, not langchain"]);
  });

  it("takes its caps as options: maxLineBytes skips a line, maxBytes stops the file, maxDocumentBytes refuses", async () => {
    const path = join(dir, "caps.jsonl");
    writeFileSync(path, `${JSON.stringify(run(1))}\n${JSON.stringify({ ...run(2), pad: "x".repeat(600) })}\n`);
    const long = summary(await collect(path, { maxLineBytes: 512 }));
    expect(long.runs).toHaveLength(1);
    expect(long.errors).toEqual([
      "caps.jsonl:2: a line longer than 512 B (the cap on one line: --max-line-bytes, option maxLineBytes): skipped",
    ]);
    const total = summary(await collect(path, { maxBytes: 300 }));
    expect(total.runs).toHaveLength(1);
    expect(total.errors).toEqual([
      "caps.jsonl: more than 300 B of text (the cap on one file: --max-bytes, option maxBytes): stopped after line 1, 1 run read",
    ]);
    const doc = join(dir, "doc.json");
    writeFileSync(doc, JSON.stringify([run(1), run(2)], null, 2));
    const refused = summary(await collect(doc, { maxDocumentBytes: 100 }));
    expect(refused.runs).toEqual([]);
    expect(refused.errors[0]).toMatch(
      /^doc\.json: a JSON document of more than 100 B .* write large input as JSON Lines/,
    );
  });

  it("refuses what is not a regular file, as an error item", async () => {
    const link = join(dir, "zero.jsonl");
    symlinkSync("/dev/zero", link);
    const items = await collect(link);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ incomplete: false });
    expect(summary(items).errors).toEqual([
      `${link}: not a regular file (a symlink to /dev/zero, a character device): replay reads regular files only`,
    ]);
  });

  it("a truncated .gz: the complete lines, then an incomplete-input item saying where it broke", async () => {
    const text = `${Array.from({ length: 200 }, (_, i) => JSON.stringify(run(i))).join("\n")}\n`;
    const gz = gzipSync(text);
    writeFileSync(join(dir, "cut.jsonl.gz"), gz.subarray(0, Math.floor(gz.length / 2)));
    const items = await collect(join(dir, "cut.jsonl.gz"));
    const last = items.at(-1);
    expect(last && "error" in last ? [last.incomplete, last.error.message] : last).toEqual([
      true,
      expect.stringMatching(/^cut\.jsonl\.gz: truncated after line \d+ \(byte \d+\): \d+ complete runs read/),
    ]);
    expect(items.slice(0, -1).every((i) => "run" in i)).toBe(true);
  });
});
