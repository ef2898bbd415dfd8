/**
 * Model-based property test of the file tools: random interleavings of tool reads (whole and ranges), writes,
 * diffs, commands, listings and edits made outside the tools. Every read must show what is on disk now (or
 * refer to an earlier result that does), and every listing must equal a fresh scan.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { viewLines } from "../../src/fs/read.js";
import { createFileTools } from "../../src/fs/tools.js";
import { DEFAULT_IGNORED, renderListing, scanTree } from "../../src/fs/tree.js";
import { GuardedToolNode, GuardMessagesState } from "../../src/index.js";

const base = realpathSync(mkdtempSync(join(tmpdir(), "lgg-model-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const FILES = ["a.txt", "b.txt", "sub/c.txt", "sub/deep/d.txt", "other/e.txt"];
const DIRS = [".", "sub", "sub/deep", "other"];
const lineArb = fc.constantFrom("alpha", "beta", "gamma", "delta", "", "x = 1", "yyyy");
const contentArb = fc
  .array(lineArb, { minLength: 0, maxLength: 6 })
  .map((ls) => (ls.length ? `${ls.join("\n")}\n` : ""));

type Op =
  | { kind: "read"; file: string; offset?: number; limit?: number }
  | { kind: "list"; dir: string; recursive: boolean }
  | { kind: "write"; file: string; content: string }
  | { kind: "diff"; file: string; line: string }
  | { kind: "command"; command: string }
  | { kind: "outsideWrite"; file: string; content: string }
  | { kind: "outsideSameSize"; file: string }
  | { kind: "outsideRemove"; file: string }
  | { kind: "outsideMkdir"; dir: string };

const fileArb = fc.constantFrom(...FILES);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("read" as const),
      file: fileArb,
      offset: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
      limit: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("list" as const),
      dir: fc.constantFrom(...DIRS),
      recursive: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("write" as const), file: fileArb, content: contentArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("diff" as const), file: fileArb, line: lineArb }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("command" as const),
      command: fc.constantFrom(
        "sed -i 's/alpha/ALPHA/' a.txt",
        "sed -i 's/beta/B/g' sub/c.txt",
        "rm -f b.txt",
        "touch sub/new.txt",
        "mkdir -p other/more && echo hi > other/more/f.txt",
        "echo appended >> a.txt",
        "mv other/e.txt other/e2.txt",
        "cat a.txt",
        "printf 'zz\\n' > sub/deep/d.txt",
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("outsideWrite" as const), file: fileArb, content: contentArb }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("outsideSameSize" as const), file: fileArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("outsideRemove" as const), file: fileArb }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("outsideMkdir" as const), dir: fc.constantFrom("x", "sub/y", "other/z") }),
  },
);

let runs = 0;

async function check(ops: Op[]): Promise<void> {
  runs += 1;
  const root = join(base, `r${runs}`);
  for (const f of FILES) {
    mkdirSync(join(root, f, ".."), { recursive: true });
    writeFileSync(join(root, f), "alpha\nbeta\ngamma\n");
  }
  const graph = new StateGraph(GuardMessagesState)
    .addNode(
      "tools",
      new GuardedToolNode(createFileTools({ root, allowCommands: true }), { repetitionThreshold: 1000 }),
    )
    .addEdge(START, "tools")
    .addEdge("tools", END)
    .compile({ checkpointer: new MemorySaver() });
  let n = 0;
  const call = async (name: string, args: Record<string, unknown>) => {
    n += 1;
    const id = `c${n}`;
    const out = await graph.invoke(
      { messages: [new AIMessage({ content: "", tool_calls: [{ name, args, id, type: "tool_call" }] })] },
      { configurable: { thread_id: "t" } },
    );
    const messages = out.messages as BaseMessage[];
    const reply = messages.find((m) => ToolMessage.isInstance(m) && m.tool_call_id === id) as ToolMessage;
    return { reply, messages };
  };
  const onDisk = (file: string): string | undefined => {
    try {
      return readFileSync(join(root, file), "utf8");
    } catch {
      return undefined;
    }
  };
  for (const op of ops) {
    switch (op.kind) {
      case "read": {
        const { reply, messages } = await call("read_file", { path: op.file, offset: op.offset, limit: op.limit });
        const disk = onDisk(op.file);
        if (disk === undefined) {
          expect(reply.status).toBe("error");
          break;
        }
        const ref = (reply.artifact as { content_ref?: string } | undefined)?.content_ref;
        if (ref !== undefined) {
          const earlier = messages.find((m) => ToolMessage.isInstance(m) && m.tool_call_id === ref);
          expect(String(earlier?.content)).toBe(viewLines(disk).text); // the referenced copy is what is on disk
        } else {
          expect(String(reply.content)).toBe(viewLines(disk, { offset: op.offset, limit: op.limit }).text);
        }
        break;
      }
      case "list": {
        const { reply } = await call("list_files", { path: op.dir, recursive: op.recursive });
        const rel = op.dir === "." ? "" : op.dir;
        const scan = scanTree(root, "", { ignored: DEFAULT_IGNORED, entryCap: 1e9, now: Date.now() }) ?? {};
        if (!(rel in scan)) expect(reply.status).toBe("error");
        else expect(String(reply.content)).toBe(renderListing(scan, rel, op.recursive, 500));
        break;
      }
      case "write":
        await call("write_to_file", { path: op.file, content: op.content });
        break;
      case "diff": {
        const disk = onDisk(op.file);
        if (disk === undefined || disk === "") break;
        const first = disk.split("\n")[0] as string;
        const diff = `--- a/${op.file}\n+++ b/${op.file}\n@@ -1,1 +1,1 @@\n-${first}\n+${op.line}\n`;
        const { reply } = await call("apply_source_code_diff", { path: op.file, diff });
        if (reply.status === "success") expect(onDisk(op.file)?.split("\n")[0]).toBe(op.line);
        break;
      }
      case "command":
        await call("execute_command", { command: op.command });
        break;
      case "outsideWrite":
        mkdirSync(join(root, op.file, ".."), { recursive: true });
        writeFileSync(join(root, op.file), op.content);
        break;
      case "outsideSameSize": {
        const disk = onDisk(op.file);
        if (disk === undefined || disk.length === 0) break;
        // Same size, same clock tick: only the racy check can catch this one.
        const flipped = disk[0] === "Q" ? `R${disk.slice(1)}` : `Q${disk.slice(1)}`;
        writeFileSync(join(root, op.file), flipped);
        break;
      }
      case "outsideRemove":
        rmSync(join(root, op.file), { force: true });
        break;
      case "outsideMkdir":
        mkdirSync(join(root, op.dir), { recursive: true });
        break;
    }
  }
}

describe("file tools against a model of the disk", () => {
  it("never serve a stale read or a listing that differs from a fresh scan", async () => {
    await fc.assert(fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), check), { numRuns: 120 });
  }, 240_000);
});
