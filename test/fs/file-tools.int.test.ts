/** Issue 5: the cache-serving file tools, through real graphs on a real temporary project. */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AIMessage, type BaseMessage, RemoveMessage, ToolMessage } from "@langchain/core/messages";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { createFileTools, type FileToolsOptions } from "../../src/fs/tools.js";
import { GuardedToolNode, GuardMessagesState } from "../../src/index.js";
import { tempProjects } from "../support/projects.js";

/** A file long enough that a reference to an earlier read is shorter than its content. */
const LONG = { "src/long.py": Array.from({ length: 40 }, (_, i) => `def f${i}():\n    return ${i}\n`).join("\n") };

const projects = tempProjects("lgg-tools-");

/** A fresh project folder with a few files, made an hour ago (a project exists before the agent starts). */
function project(files: Record<string, string> = {}): string {
  const all = {
    "config.json": '{ "debug": true }\n',
    "src/main.py": "import utils\n\nprint('hello')\n",
    "src/utils/helper.py": "def help():\n    return 1\n",
    "src/utils/config.py": "DEBUG = True\n",
    "tests/test_main.py": "def test_main():\n    assert True\n",
    ...files,
  };
  return projects.project(all, { hourAgo: true });
}

type Call = { name: string; args: Record<string, unknown> };

/** A graph START → tools → END on one thread: each `call` is one AI message with one tool call. */
function harness(root: string, options: Partial<FileToolsOptions> = {}, guarded = true) {
  const tools = createFileTools({ root, allowCommands: true, ...options });
  const graph = new StateGraph(GuardMessagesState)
    .addNode("tools", guarded ? new GuardedToolNode(tools) : new ToolNode(tools))
    .addEdge(START, "tools")
    .addEdge("tools", END)
    .compile({ checkpointer: new MemorySaver() });
  let n = 0;
  const call = async (c: Call, thread = "t") => {
    n += 1;
    const id = `call_${thread}_${n}`;
    const ai = new AIMessage({ content: "", tool_calls: [{ ...c, id, type: "tool_call" }] });
    const out = await graph.invoke({ messages: [ai] }, { configurable: { thread_id: thread } });
    const reply = out.messages.find(
      (m: BaseMessage) => ToolMessage.isInstance(m) && m.tool_call_id === id,
    ) as ToolMessage;
    return {
      reply,
      text: String(reply.content),
      artifact: reply.artifact as { cached?: boolean; content_ref?: string } | undefined,
      out,
    };
  };
  return { graph, call };
}

const fresh = (root: string, rel: string) => readFileSync(join(root, rel), "utf8");

describe("seed 001 example flows", () => {
  it("read cache: first read hits the disk, the second is served from the cache, a write updates it", async () => {
    const root = project(LONG);
    const { call } = harness(root);
    const first = await call({ name: "read_file", args: { path: "config.json" } });
    expect(first.text).toBe('     1\t{ "debug": true }');
    expect(first.artifact?.cached).toBe(false);
    const second = await call({ name: "read_file", args: { path: "config.json" } });
    expect(second.artifact?.cached).toBe(true);
    // 20 characters: the content itself is shorter than a reference to the earlier result would be.
    expect(second.artifact?.content_ref).toBeUndefined();
    expect(second.text).toBe(first.text);
    const long = await call({ name: "read_file", args: { path: "src/long.py" } });
    const again = await call({ name: "read_file", args: { path: "src/long.py" } });
    expect(again.artifact?.content_ref).toBe(long.reply.tool_call_id); // a reference to the earlier result
    expect(again.text.length).toBeLessThan(long.text.length);
    await call({ name: "write_to_file", args: { path: "config.json", content: '{ "debug": false }\n' } });
    const third = await call({ name: "read_file", args: { path: "config.json" } });
    expect(third.text).toBe('     1\t{ "debug": false }');
    expect(third.out.fileCache.stats.hits).toBeGreaterThanOrEqual(1);
  });

  it("list cache: one scan of the root serves every later listing; writes add entries; commands invalidate", async () => {
    const root = project();
    // utimes set the project's mtimes an hour back, but not its ctimes (no one can): the clock moves on past the
    // racy window, as if the project had been made a while before the agent started.
    const { call } = harness(root, { clock: () => Date.now() + 5_000 });
    const src = await call({ name: "list_files", args: { path: "src", recursive: false } });
    expect(src.text).toBe("main.py\nutils/");
    expect(Object.keys(src.out.fileCache.tree ?? {})).toEqual(
      expect.arrayContaining(["", "src", "src/utils", "tests"]),
    );
    const tests = await call({ name: "list_files", args: { path: "tests", recursive: true } });
    expect(tests.text).toBe("test_main.py");
    expect(tests.artifact?.cached).toBe(true);
    expect((await call({ name: "list_files", args: { path: "src/utils" } })).text).toBe("config.py\nhelper.py");
    await call({ name: "write_to_file", args: { path: "src/new_module.py", content: "x = 1\n" } });
    expect((await call({ name: "list_files", args: { path: "src" } })).text).toBe("main.py\nnew_module.py\nutils/");
    const cmd = await call({ name: "execute_command", args: { command: "echo test" } });
    expect(cmd.text).toBe("Exit code 0.\ntest");
    expect((await call({ name: "list_files", args: { path: "src" } })).text).toBe("main.py\nnew_module.py\nutils/");
  });
});

describe("never stale", () => {
  it("an edit outside the tools, same size, right after a read, is seen", async () => {
    const root = project();
    const { call } = harness(root);
    await call({ name: "read_file", args: { path: "config.json" } });
    writeFileSync(join(root, "config.json"), '{ "debug": 1234 }\n'); // same length as before
    const again = await call({ name: "read_file", args: { path: "config.json" } });
    expect(again.text).toBe('     1\t{ "debug": 1234 }');
    expect(again.out.fileCache.stats.staleRefreshes).toBe(1);
  });

  it("sed -i and git checkout through execute_command are seen", async () => {
    const root = project();
    execFileSync("git", ["init", "-q"], { cwd: root });
    execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", "add", "."], { cwd: root });
    execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"], { cwd: root });
    const { call } = harness(root);
    await call({ name: "read_file", args: { path: "src/utils/config.py" } });
    await call({ name: "execute_command", args: { command: "sed -i 's/True/False/' src/utils/config.py" } });
    expect((await call({ name: "read_file", args: { path: "src/utils/config.py" } })).text).toBe(
      "     1\tDEBUG = False",
    );
    await call({ name: "execute_command", args: { command: "git checkout -- src/utils/config.py" } });
    expect((await call({ name: "read_file", args: { path: "src/utils/config.py" } })).text).toBe(
      "     1\tDEBUG = True",
    );
  });

  it("files and folders created or removed outside the tools show in the next listing", async () => {
    const root = project();
    const { call } = harness(root);
    await call({ name: "list_files", args: { recursive: true } });
    writeFileSync(join(root, "src", "late.py"), "");
    rmSync(join(root, "tests"), { recursive: true });
    mkdirSync(join(root, "docs"));
    writeFileSync(join(root, "docs", "index.md"), "# docs\n");
    const listing = await call({ name: "list_files", args: { recursive: true } });
    expect(listing.text.split("\n")).toEqual([
      "config.json",
      "docs/",
      "docs/index.md",
      "src/",
      "src/late.py",
      "src/main.py",
      "src/utils/",
      "src/utils/config.py",
      "src/utils/helper.py",
    ]);
  });
});

describe("ranges", () => {
  const long = `${Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n")}\n`;

  it("a range read after a whole read, and a whole read after a range read, return the right lines", async () => {
    const root = project({ "long.txt": long });
    const { call } = harness(root);
    const range1 = await call({ name: "read_file", args: { path: "long.txt", offset: 5, limit: 2 } });
    expect(range1.text).toBe("     5\tline 5\n     6\tline 6\n\n(Showing lines 5-6 of 30. Continue with offset 7.)");
    const whole = await call({ name: "read_file", args: { path: "long.txt" } });
    expect(whole.text.split("\n")).toHaveLength(30); // a partial read never posed as the whole file
    expect(whole.text.split("\n")[29]).toBe("    30\tline 30");
    const range2 = await call({ name: "read_file", args: { path: "long.txt", offset: 11 } });
    expect(range2.artifact?.cached).toBe(true);
    expect(range2.text).toContain(`unchanged since your earlier read`);
    expect(range2.text).toContain("Lines 11-30 are among them.");
  });
});

describe("sandbox through the tools", () => {
  it.each([["../x"], ["/etc/passwd"], ["link-out/secret.txt"], ["link-dir/inner.txt"], ["a\0b"]])(
    "refuses %j with an error ToolMessage",
    async (path) => {
      const root = project();
      const outside = projects.outside({ "secret.txt": "secret", "sub/inner.txt": "secret" });
      symlinkSync(outside, join(root, "link-out"));
      symlinkSync(join(outside, "sub"), join(root, "link-dir"));
      const { call } = harness(root);
      const read = await call({ name: "read_file", args: { path } });
      expect(read.reply.status).toBe("error");
      expect(read.text).not.toContain("TOPSECRET");
      const write = await call({ name: "write_to_file", args: { path, content: "x" } });
      expect(write.reply.status).toBe("error");
    },
  );

  it("a prefix sibling is outside; [...slug].tsx is allowed", async () => {
    const root = project();
    mkdirSync(`${root}2`, { recursive: true });
    writeFileSync(`${root}2/x.txt`, "sibling");
    const { call } = harness(root);
    expect((await call({ name: "read_file", args: { path: `${root}2/x.txt` } })).reply.status).toBe("error");
    await call({ name: "write_to_file", args: { path: "pages/[...slug].tsx", content: "export default 1;\n" } });
    expect((await call({ name: "read_file", args: { path: "pages/[...slug].tsx" } })).text).toBe(
      "     1\texport default 1;",
    );
  });

  it("binary files, folders and missing files get clear errors", async () => {
    const root = project();
    writeFileSync(join(root, "logo.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]));
    const { call } = harness(root);
    expect((await call({ name: "read_file", args: { path: "logo.png" } })).text).toMatch(/binary file/);
    expect((await call({ name: "read_file", args: { path: "src" } })).text).toMatch(/is a folder/);
    expect((await call({ name: "read_file", args: { path: "nope.py" } })).text).toBe("File not found: nope.py");
  });
});

describe("apply_source_code_diff", () => {
  it("applies a unified diff and updates the cache; a failed diff changes nothing and says why", async () => {
    const root = project();
    const { call } = harness(root);
    await call({ name: "read_file", args: { path: "src/main.py" } });
    const diff =
      "--- a/src/main.py\n+++ b/src/main.py\n@@ -1,3 +1,3 @@\n import utils\n \n-print('hello')\n+print('goodbye')\n";
    expect((await call({ name: "apply_source_code_diff", args: { path: "src/main.py", diff } })).text).toBe(
      "Applied the diff to src/main.py (now 3 lines).",
    );
    expect(fresh(root, "src/main.py")).toBe("import utils\n\nprint('goodbye')\n");
    const stale = diff.replace("-print('hello')\n+print('goodbye')", "-print('hi there')\n+print('bye')");
    const again = await call({ name: "apply_source_code_diff", args: { path: "src/main.py", diff: stale } });
    expect(again.reply.status).toBe("error");
    expect(again.text).toMatch(/does not apply.*Nothing was changed/s);
    expect(fresh(root, "src/main.py")).toBe("import utils\n\nprint('goodbye')\n");
    expect((await call({ name: "read_file", args: { path: "src/main.py" } })).text).toContain("goodbye");
  });
});

describe("reference answers", () => {
  it("are used only while the earlier full content is still in messages", async () => {
    const root = project(LONG);
    const { call, graph } = harness(root);
    const first = await call({ name: "read_file", args: { path: "src/long.py" } });
    const second = await call({ name: "read_file", args: { path: "src/long.py" } });
    expect(second.artifact?.content_ref).toBe(first.reply.tool_call_id);
    // The earlier result is trimmed from the conversation: the next read returns the content again.
    await graph.updateState(
      { configurable: { thread_id: "t" } },
      { messages: [new RemoveMessage({ id: first.reply.id as string })] },
    );
    const third = await call({ name: "read_file", args: { path: "src/long.py" } });
    expect(third.text).toBe(first.text);
    expect(third.artifact?.content_ref).toBeUndefined();
  });
});

describe("threads and guards", () => {
  it("two threads on one graph never see each other's cache", async () => {
    const root = project();
    const { call } = harness(root);
    await call({ name: "read_file", args: { path: "config.json" } }, "a");
    const b = await call({ name: "read_file", args: { path: "config.json" } }, "b");
    expect(b.artifact?.cached).toBe(false);
    expect(Object.keys(b.out.fileCache.files)).toEqual([join(root, "config.json")]);
    expect(b.out.fileCache.stats.misses).toBe(1);
  });

  it("inside GuardedToolNode a cached re-read is not also blocked by the redundancy guard", async () => {
    const root = project();
    const { call } = harness(root);
    await call({ name: "read_file", args: { path: "config.json" } });
    await call({ name: "list_files", args: {} });
    const again = await call({ name: "read_file", args: { path: "config.json" } });
    expect((again.reply.artifact as { guard?: unknown }).guard).toBeUndefined();
    expect(again.artifact?.cached).toBe(true);
  });

  it("cache: false reads from disk every time and writes no cache state", async () => {
    const root = project();
    const { call } = harness(root, { cache: false });
    await call({ name: "read_file", args: { path: "config.json" } });
    const again = await call({ name: "read_file", args: { path: "config.json" } });
    expect(again.artifact?.cached).toBe(false);
    expect(again.out.fileCache.files).toEqual({});
  });
});
