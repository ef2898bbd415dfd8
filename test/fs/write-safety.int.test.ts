/**
 * Issue 35, the write path: edits of one file in one model response are serialized (none is lost), a write replaces
 * the file atomically (its mode kept; one that fails half-way changes nothing), a write or diff of a file changed on
 * disk since the model last read it is refused with the new content, and a diff that changes nothing is an error.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, readdirSync, readFileSync, rmSync, statSync, watch, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { writeFileAtomic } from "../../src/fs/atomic-write.js";
import { problemMessage } from "../../src/fs/io.js";
import { createFileTools, type FileToolsOptions } from "../../src/fs/tools.js";
import { GuardedToolNode, GuardMessagesState } from "../../src/index.js";
import { fileToolsMiddleware, guardMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { tempProjects } from "../support/projects.js";
import { directTools } from "./direct.js";

const { project } = tempProjects("lgg-writes-");

type Call = { name: string; args: Record<string, unknown> };

/** A graph START → tools → END on one thread: each `respond` is one AI message with all its tool calls. */
function responses(root: string, options: Partial<FileToolsOptions> = {}, guarded = true) {
  const tools = createFileTools({ root, allowCommands: true, ...options });
  const graph = new StateGraph(GuardMessagesState)
    .addNode("tools", guarded ? new GuardedToolNode(tools) : new ToolNode(tools))
    .addEdge(START, "tools")
    .addEdge("tools", END)
    .compile({ checkpointer: new MemorySaver() });
  let n = 0;
  return async (...calls: Call[]) => {
    const ids = calls.map(() => `call_${++n}`);
    const ai = new AIMessage({
      content: "",
      tool_calls: calls.map((c, i) => ({ ...c, id: ids[i] as string, type: "tool_call" as const })),
    });
    const out = await graph.invoke({ messages: [ai] }, { configurable: { thread_id: "t" } });
    const messages = out.messages as BaseMessage[];
    return ids.map((id) => {
      const reply = messages.find((m) => ToolMessage.isInstance(m) && m.tool_call_id === id) as ToolMessage;
      return { text: String(reply.content), status: reply.status };
    });
  };
}

const lines = (n: number, tag = "line") => Array.from({ length: n }, (_, i) => `${tag} ${i + 1}\n`).join("");
const diffOf = (path: string, hunks: string) => `--- a/${path}\n+++ b/${path}\n${hunks}`;
/** Files in a folder other than the listed ones: temporary files left behind. */
const leftovers = (dir: string, expected: string[]) => readdirSync(dir).filter((name) => !expected.includes(name));

describe("edits of one file in one response are serialized", () => {
  it.each([
    ["never read, GuardedToolNode", false, true],
    ["read first, GuardedToolNode", true, true],
    ["read first, ToolNode", true, false],
  ])("two diffs to one file in one response both apply (%s)", async (_what, readFirst, guarded) => {
    const root = project({ "a.txt": lines(12) });
    const respond = responses(root, {}, guarded);
    if (readFirst) await respond({ name: "read_file", args: { path: "a.txt" } });
    const first = diffOf("a.txt", "@@ -1,3 +1,3 @@\n line 1\n-line 2\n+LINE TWO\n line 3\n");
    const second = diffOf("a.txt", "@@ -9,3 +9,3 @@\n line 9\n-line 10\n+LINE TEN\n line 11\n");
    const answers = await respond(
      { name: "apply_source_code_diff", args: { path: "a.txt", diff: first } },
      { name: "apply_source_code_diff", args: { path: "a.txt", diff: second } },
    );
    expect(answers.map((a) => a.status)).toEqual(["success", "success"]);
    const after = readFileSync(join(root, "a.txt"), "utf8");
    expect(after).toBe(lines(12).replace("line 2\n", "LINE TWO\n").replace("line 10\n", "LINE TEN\n"));
    // The next response sees the file as both diffs left it: a further diff against it applies.
    const third = diffOf("a.txt", "@@ -1,2 +1,2 @@\n-line 1\n+LINE ONE\n LINE TWO\n");
    const [next] = await respond({ name: "apply_source_code_diff", args: { path: "a.txt", diff: third } });
    expect(next?.status).toBe("success");
  });

  it("two diffs to one file in one response both apply in createAgent with fileToolsMiddleware", async () => {
    const root = project({ "a.txt": lines(12) });
    const first = diffOf("a.txt", "@@ -1,3 +1,3 @@\n line 1\n-line 2\n+LINE TWO\n line 3\n");
    const second = diffOf("a.txt", "@@ -9,3 +9,3 @@\n line 9\n-line 10\n+LINE TEN\n line 11\n");
    const llm = new ScriptedChatModel(
      [
        { toolCalls: [{ name: "read_file", args: { path: "a.txt" }, id: "r1" }] },
        {
          toolCalls: [
            { name: "apply_source_code_diff", args: { path: "a.txt", diff: first }, id: "d1" },
            { name: "apply_source_code_diff", args: { path: "a.txt", diff: second }, id: "d2" },
          ],
        },
        { content: "done" },
      ],
      { whenExhausted: "throw" },
    );
    const agent = createAgent({
      model: llm,
      tools: [],
      middleware: [guardMiddleware(), fileToolsMiddleware({ root })],
      checkpointer: new MemorySaver(),
    });
    const out = await agent.invoke(
      { messages: [{ role: "user", content: "edit" }] },
      { configurable: { thread_id: "m" } },
    );
    const statuses = (out.messages as BaseMessage[])
      .filter((m): m is ToolMessage => ToolMessage.isInstance(m) && m.tool_call_id.startsWith("d"))
      .map((m) => m.status);
    expect(statuses).toEqual(["success", "success"]);
    const after = readFileSync(join(root, "a.txt"), "utf8");
    expect(after).toBe(lines(12).replace("line 2\n", "LINE TWO\n").replace("line 10\n", "LINE TEN\n"));
  });

  it("five diffs to one file in one response all apply, in the order of the response", async () => {
    const root = project({ "a.txt": lines(50) });
    const respond = responses(root);
    await respond({ name: "read_file", args: { path: "a.txt" } });
    const calls = [3, 13, 23, 33, 43].map((k) => ({
      name: "apply_source_code_diff",
      args: { path: "a.txt", diff: diffOf("a.txt", `@@ -${k},1 +${k},2 @@\n line ${k}\n+added after ${k}\n`) },
    }));
    const answers = await respond(...calls);
    expect(answers.map((a) => a.status)).toEqual(Array(5).fill("success"));
    const after = readFileSync(join(root, "a.txt"), "utf8");
    for (const k of [3, 13, 23, 33, 43]) expect(after).toContain(`line ${k}\nadded after ${k}\n`);
  });

  it("a second diff that no longer applies after the first is refused with a clear answer", async () => {
    const root = project({ "a.txt": lines(5) });
    const respond = responses(root);
    await respond({ name: "read_file", args: { path: "a.txt" } });
    const one = diffOf("a.txt", "@@ -2 +2 @@\n-line 2\n+first\n");
    const other = diffOf("a.txt", "@@ -2 +2 @@\n-line 2\n+second\n");
    const answers = await respond(
      { name: "apply_source_code_diff", args: { path: "a.txt", diff: one } },
      { name: "apply_source_code_diff", args: { path: "a.txt", diff: other } },
    );
    expect(answers[0]?.status).toBe("success");
    expect(answers[1]).toMatchObject({ status: "error" });
    expect(answers[1]?.text).toMatch(/^The diff does not apply to a\.txt/);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe(lines(5).replace("line 2\n", "first\n"));
  });

  it("a write and a diff of one file in one response run one after the other", async () => {
    const root = project({ "a.txt": "old\n" });
    const respond = responses(root);
    await respond({ name: "read_file", args: { path: "a.txt" } });
    const answers = await respond(
      { name: "write_to_file", args: { path: "a.txt", content: "one\ntwo\n" } },
      { name: "apply_source_code_diff", args: { path: "a.txt", diff: diffOf("a.txt", "@@ -2 +2 @@\n-two\n+2\n") } },
    );
    expect(answers.map((a) => a.status)).toEqual(["success", "success"]);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("one\n2\n");
  });
});

describe("a write replaces the file atomically", () => {
  it("keeps the file's mode, and leaves no temporary file", async () => {
    const root = project({ "run.sh": "#!/bin/sh\necho 1\n", "private.txt": "secret\n" });
    chmodSync(join(root, "run.sh"), 0o754);
    chmodSync(join(root, "private.txt"), 0o600);
    const { call } = directTools(root);
    expect((await call("write_to_file", { path: "run.sh", content: "#!/bin/sh\necho 2\n" })).status).toBe("success");
    const diff = diffOf("private.txt", "@@ -1 +1 @@\n-secret\n+still secret\n");
    expect((await call("apply_source_code_diff", { path: "private.txt", diff })).status).toBe("success");
    expect(statSync(join(root, "run.sh")).mode & 0o7777).toBe(0o754);
    expect(statSync(join(root, "private.txt")).mode & 0o7777).toBe(0o600);
    expect(readFileSync(join(root, "private.txt"), "utf8")).toBe("still secret\n");
    expect(leftovers(root, ["run.sh", "private.txt"])).toEqual([]);
  });

  it("a write that fails half-way (EFBIG) leaves the original intact and removes its temporary file", () => {
    const root = project({ "big.txt": "original\n" });
    // The child's file size limit is 64 KB (ulimit -f 128 blocks): the 1 MB write fails part-way with EFBIG.
    const out = execFileSync(
      "bash",
      [
        "-c",
        'ulimit -f 128 && exec "$0" --import tsx test/fs/write-child.ts once "$1" big.txt 1048576',
        process.execPath,
        root,
      ],
      { cwd: join(import.meta.dirname, "..", ".."), encoding: "utf8" },
    );
    expect(out).toMatch(/^Cannot write big\.txt \(EFBIG\)\. Nothing was changed\.$/m);
    expect(readFileSync(join(root, "big.txt"), "utf8")).toBe("original\n");
    expect(leftovers(root, ["big.txt"])).toEqual([]);
  });
});

describe("a file changed on disk since the model read it is not overwritten", () => {
  it("writeFileAtomic refuses a file whose stat is no longer the one it was checked with", async () => {
    const root = project({ "a.txt": "one\n" });
    const path = join(root, "a.txt");
    const checked = statSync(path);
    writeFileSync(path, "two!\n");
    const options = { root, timeoutMs: 10_000, refuseHardLinks: false, expected: checked };
    const written = await writeFileAtomic(path, Buffer.from("mine\n"), options);
    expect(written).toEqual({ ok: false, problem: { kind: "changed", removed: false } });
    expect(problemMessage("a.txt", { kind: "changed", removed: false }, "written")).toBe(
      "a.txt was changed on disk while it was being written (by another program). Nothing was changed: read it again.",
    );
    expect(readFileSync(path, "utf8")).toBe("two!\n");
    expect(leftovers(root, ["a.txt"])).toEqual([]);
  });

  it("a write that runs out of time changes nothing and leaves no temporary file", async () => {
    const root = project({ "a.txt": "old\n" });
    const path = join(root, "a.txt");
    const big = Buffer.alloc(32 * 1024 * 1024, 0x61);
    // The abandoned work goes on in the background: its end is the temporary file's removal (or its rename over the
    // original), seen as the second rename event of its name, however long a loaded machine takes.
    const renames: string[] = [];
    const watcher = watch(root, (type, name) => {
      if (type === "rename" && name !== null && name !== "a.txt") renames.push(name);
    });
    const written = await writeFileAtomic(path, big, { root, timeoutMs: 1, refuseHardLinks: false });
    await expect.poll(() => renames.length, { timeout: 60_000, interval: 20 }).toBeGreaterThanOrEqual(2);
    watcher.close();
    if (written.ok) expect(readFileSync(path).equals(big)).toBe(true);
    else {
      expect(written.problem).toEqual({ kind: "timeout", ms: 1 });
      expect(readFileSync(path, "utf8")).toBe("old\n");
    }
    expect(leftovers(root, ["a.txt"])).toEqual([]);
  });

  it("a file grown past limits.maxFileBytes since it was read is not overwritten unseen", async () => {
    const root = project({ "a.txt": "small\n" });
    const { call } = directTools(root, { limits: { maxFileBytes: 100 } });
    await call("read_file", { path: "a.txt" });
    writeFileSync(join(root, "a.txt"), "x".repeat(500));
    const refused = await call("write_to_file", { path: "a.txt", content: "mine\n" });
    expect(refused.text).toBe(
      "a.txt changed on disk since you last read or wrote it through the tools; nothing was written. It is now 500 bytes, more than the tools read (100).",
    );
    expect((await call("write_to_file", { path: "a.txt", content: "mine\n" })).status).toBe("success");
  });

  it("write_to_file after an outside change is refused, with the new content; the retry writes", async () => {
    const root = project({ "a.py": "x = 1\n" });
    const { call } = directTools(root);
    await call("read_file", { path: "a.py" });
    writeFileSync(join(root, "a.py"), "x = 1\ny = 2\n"); // someone else's edit
    const refused = await call("write_to_file", { path: "a.py", content: "x = 3\n" });
    expect(refused.status).toBe("error");
    expect(refused.text).toBe(
      "a.py changed on disk since you last read or wrote it through the tools; nothing was written. Its current content is below: make your change against it.\n\n     1\tx = 1\n     2\ty = 2",
    );
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("x = 1\ny = 2\n");
    // The refusal showed the new content: the next write goes through.
    expect((await call("write_to_file", { path: "a.py", content: "x = 3\n" })).status).toBe("success");
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("x = 3\n");
  });

  it("apply_source_code_diff after an outside change is refused, even when the diff would apply", async () => {
    const root = project({ "a.py": "x = 1\nz = 0\n" });
    const { call } = directTools(root);
    await call("read_file", { path: "a.py" });
    writeFileSync(join(root, "a.py"), "x = 1\nz = 0\nsecret = 42\n");
    const diff = diffOf("a.py", "@@ -1,2 +1,2 @@\n-x = 1\n+x = 2\n z = 0\n");
    const refused = await call("apply_source_code_diff", { path: "a.py", diff });
    expect(refused.status).toBe("error");
    expect(refused.text).toMatch(/^a\.py changed on disk since you last read or wrote it through the tools/);
    expect(refused.text).toContain("     3\tsecret = 42");
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("x = 1\nz = 0\nsecret = 42\n");
    expect((await call("apply_source_code_diff", { path: "a.py", diff })).status).toBe("success");
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("x = 2\nz = 0\nsecret = 42\n");
  });

  it("a change after the tools' own write is seen too; a long file is offered from its start", async () => {
    const root = project();
    const { call } = directTools(root, { limits: { defaultLineLimit: 3 } });
    expect((await call("write_to_file", { path: "n.txt", content: "mine\n" })).status).toBe("success");
    writeFileSync(join(root, "n.txt"), lines(10, "theirs"));
    const refused = await call("write_to_file", { path: "n.txt", content: "mine again\n" });
    expect(refused.status).toBe("error");
    expect(refused.text).toContain("     1\ttheirs 1\n     2\ttheirs 2\n     3\ttheirs 3\n\n(Showing lines 1-3 of 10.");
  });

  it("a file removed since it was read is not silently recreated", async () => {
    const root = project({ "gone.txt": "here\n" });
    const { call } = directTools(root);
    await call("read_file", { path: "gone.txt" });
    rmSync(join(root, "gone.txt"));
    const refused = await call("write_to_file", { path: "gone.txt", content: "back\n" });
    expect(refused.status).toBe("error");
    expect(refused.text).toMatch(/^gone\.txt was removed on disk since you last read or wrote it/);
    expect((await call("write_to_file", { path: "gone.txt", content: "back\n" })).status).toBe("success");
  });

  it("with the cache off, or for a file never read, a write proceeds as before", async () => {
    const root = project({ "a.txt": "1\n", "b.txt": "1\n" });
    const off = directTools(root, { cache: false });
    await off.call("read_file", { path: "a.txt" });
    writeFileSync(join(root, "a.txt"), "2\n");
    expect((await off.call("write_to_file", { path: "a.txt", content: "3\n" })).status).toBe("success");
    const on = directTools(root);
    writeFileSync(join(root, "b.txt"), "2\n");
    expect((await on.call("write_to_file", { path: "b.txt", content: "3\n" })).status).toBe("success");
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("3\n");
  });

  it("an edit in another response, after the tools' write in this one, is seen", async () => {
    const root = project({ "a.txt": "0\n" });
    const respond = responses(root);
    await respond({ name: "read_file", args: { path: "a.txt" } });
    const [wrote] = await respond({ name: "write_to_file", args: { path: "a.txt", content: "1\n" } });
    expect(wrote?.status).toBe("success");
    writeFileSync(join(root, "a.txt"), "outside\n");
    const [refused] = await respond({ name: "write_to_file", args: { path: "a.txt", content: "2\n" } });
    expect(refused?.text).toMatch(/^a\.txt changed on disk since you last read or wrote it/);
  });
});

describe("a diff that changes nothing is an error", () => {
  it.each([
    ["prose", "Please change x to 2 in a.py."],
    ["an empty diff", ""],
    ["headers only", "--- a/a.py\n+++ b/a.py\n"],
  ])("%s: no hunks, nothing applied", async (_what, diff) => {
    const root = project({ "a.py": "x = 1\n" });
    const before = statSync(join(root, "a.py"));
    const answer = await directTools(root).call("apply_source_code_diff", { path: "a.py", diff });
    expect(answer.status).toBe("error");
    expect(answer.text).toMatch(/^The diff has no hunks \(no @@ lines\)/);
    expect(statSync(join(root, "a.py")).ino).toBe(before.ino);
  });

  it("a hunk that removes and adds the same line changes nothing: an error", async () => {
    const root = project({ "a.py": "x = 1\n" });
    const diff = diffOf("a.py", "@@ -1 +1 @@\n-x = 1\n+x = 1\n");
    const answer = await directTools(root).call("apply_source_code_diff", { path: "a.py", diff });
    expect(answer.status).toBe("error");
    expect(answer.text).toBe(
      "The diff changes nothing in a.py: its hunks leave the file as it is. Nothing was written.",
    );
  });
});
