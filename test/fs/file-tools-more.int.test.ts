/** Issue 5: ignore rules, caps, commands, logging, and cache hits as free turns for the loop guard. */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { afterAll, describe, expect, it } from "vitest";
import { changedPaths } from "../../src/common/identity/shell/index.js";
import { resolveFileToolsOptions } from "../../src/fs/options.js";
import { viewLines } from "../../src/fs/read.js";
import { createFileTools } from "../../src/fs/tools.js";
import { GuardedToolNode, GuardMessagesState, GuardOptionsError, loopDetectHook } from "../../src/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { fileToolsHarness } from "../support/file-tools.js";

const base = realpathSync(mkdtempSync(join(tmpdir(), "lgg-more-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let count = 0;

function tree(files: Record<string, string>): string {
  count += 1;
  const root = join(base, `t${count}`);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
  const old = new Date(Date.now() - 3_600_000);
  utimesSync(root, old, old);
  return root;
}

const harness = fileToolsHarness;

describe("ignore rules", () => {
  it("honours .gitignore files at every level and the default ignore list", async () => {
    const root = tree({
      ".gitignore": "*.log\nbuild/\n",
      "app.py": "",
      "debug.log": "",
      "build/out.js": "",
      "node_modules/pkg/index.js": "",
      ".git/HEAD": "ref: x\n",
      "src/.gitignore": "secret.txt\n!keep.log\n",
      "src/main.py": "",
      "src/secret.txt": "",
      "src/keep.log": "",
      "src/deep/secret.txt": "",
      "src/deep/ok.py": "",
    });
    const call = harness(root);
    expect((await call("list_files", { recursive: true })).text.split("\n")).toEqual([
      ".gitignore",
      "app.py",
      "src/",
      "src/.gitignore",
      "src/deep/",
      "src/deep/ok.py",
      "src/keep.log",
      "src/main.py",
    ]);
  });
});

describe("caps", () => {
  it("a listing is capped with a clear 'more' line", async () => {
    const files = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${String(i).padStart(2, "0")}.txt`, ""]));
    const call = harness(tree(files), { limits: { listLimit: 10 } });
    const text = (await call("list_files", {})).text.split("\n");
    expect(text).toHaveLength(11);
    expect(text[10]).toBe("... and 20 more entries (list a subfolder to see them)");
  });

  it("beyond the scan's entry cap the tree is not cached, and listings still work", async () => {
    const files = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`d${i % 3}/f${i}.txt`, ""]));
    const call = harness(tree(files), { cache: { scanEntryCap: 10 } });
    const listing = await call("list_files", { path: "d1" });
    expect(listing.text.split("\n")).toHaveLength(10);
    expect(listing.out.fileCache.tree).toBeNull();
  });

  it("files over the size cap are refused with a clear message", async () => {
    const call = harness(tree({ "big.txt": "x".repeat(2000) }), { limits: { maxFileBytes: 1000 } });
    expect((await call("read_file", { path: "big.txt" })).text).toBe(
      "big.txt is too large to read (2000 bytes; the limit is 1000).",
    );
  });
});

describe("execute_command", () => {
  it("reports the exit code, caps the output, and times out", async () => {
    // 1.5 s: long enough for `cat` on a loaded 2-core machine (300 ms timed it out once), short enough for `sleep 5`.
    const call = harness(tree({ "a.txt": "a\n" }), { commands: { maxOutputChars: 20, timeoutMs: 1500 } });
    const ok = await call("execute_command", { command: "cat a.txt" });
    expect(ok.text).toBe("Exit code 0.\na");
    const failing = await call("execute_command", { command: "cat missing.txt" });
    expect(failing.status).toBe("error");
    expect(failing.text).toMatch(/^Exit code 1\./);
    const long = await call("execute_command", { command: "seq 1 100" });
    expect(long.text).toMatch(/\.\.\. \[\d+ more characters cut\]$/);
    const slow = await call("execute_command", { command: "sleep 5" });
    expect(slow.text).toBe("Timed out after 1500 ms. The command and everything it started were stopped.");
    // A compound command is ended whole: its background child does not outlive the timeout.
    const started = Date.now();
    const compound = await call("execute_command", { command: "sleep 5 & sleep 5; wait" });
    expect(compound.text).toBe("Timed out after 1500 ms. The command and everything it started were stopped.");
    expect(Date.now() - started).toBeLessThan(4500);
  });

  it("keeps a character whose bytes arrive in two chunks whole, and never cuts the output inside one", async () => {
    const call = harness(tree({ "a.txt": "a\n" }), { commands: { maxOutputChars: 5 } });
    // The emoji's four bytes written in two parts, a pause between: two chunks of output.
    const split = await call("execute_command", { command: "printf '\\xf0\\x9f'; sleep 0.2; printf '\\x98\\x80'" });
    expect(split.text).toBe("Exit code 0.\n😀");
    // The cap falls between the halves of the third emoji: the output ends before it, and counts the rest.
    const capped = await call("execute_command", { command: "printf '😀ab😀c'" });
    expect(capped.text).toBe("Exit code 0.\n😀ab\n... [3 more characters cut]");
    // Stdout and stderr are decoded apart: bytes of one do not join the other's.
    const both = await call("execute_command", {
      command: "printf '\\xc3' >&2; sleep 0.2; printf 'x'; sleep 0.2; printf '\\xa9' >&2",
    });
    expect(both.text).toBe("Exit code 0.\nxé");
  });

  it("is only created with allowCommands: true", () => {
    expect(createFileTools({ root: base }).map((t) => t.name)).toEqual([
      "read_file",
      "list_files",
      "write_to_file",
      "apply_source_code_diff",
    ]);
    expect(createFileTools({ root: base, allowCommands: true }).map((t) => t.name)).toContain("execute_command");
  });

  it("understood commands invalidate their paths; others invalidate everything", () => {
    expect(changedPaths("rm -f a.txt && touch b/c.txt", "/r")).toEqual(["/r/a.txt", "/r/b/c.txt"]);
    expect(changedPaths("mv x.py y.py", "/r")).toEqual(["/r/x.py", "/r/y.py"]);
    expect(changedPaths("echo hi > out.txt", "/r")).toEqual(["/r/out.txt"]);
    expect(changedPaths("sed -i 's/a/b/' src/x.py", "/r")).toEqual(["/r/src/x.py"]);
    expect(changedPaths("cat a.txt | grep x", "/r")).toEqual([]);
    expect(changedPaths("git checkout main", "/r")).toEqual(["/r"]); // moves the working tree (issue 43, class 4)
    expect(changedPaths("git checkout -- src/a.py b.py", "/r")).toEqual(["/r/src/a.py", "/r/b.py"]);
    expect(changedPaths("git restore --staged x.py", "/r")).toEqual(["/r/x.py"]);
    expect(changedPaths("git reset --hard", "/r")).toEqual(["/r"]);
    expect(changedPaths("git status", "/r")).toEqual([]);
    expect(changedPaths("python build.py", "/r")).toBeUndefined();
    expect(changedPaths("rm $(ls)", "/r")).toBeUndefined();
  });
});

describe("logging and counters", () => {
  it("logs in the seed's format and keeps counters in state", async () => {
    const lines: string[] = [];
    const main = Array.from({ length: 30 }, (_, i) => `print(${i})\n`).join("");
    const root = tree({ "main.py": main, "src/x.py": "" });
    const call = harness(root, { feedback: { logger: { info: (l) => lines.push(l) } } });
    await call("read_file", { path: "main.py" });
    const second = await call("read_file", { path: "main.py" });
    await call("list_files", {});
    await call("write_to_file", { path: "src/new.py", content: "" });
    await call("execute_command", { command: "make" });
    expect(lines).toEqual([
      "[TOOL_RUNNER][CACHE_MISS] Read main.py from disk",
      "[TOOL_RUNNER][CACHE_HIT] Returned cached content for main.py",
      "[TOOL_RUNNER][DIR_CACHE] Initialized directory cache (2 folders)",
      "[TOOL_RUNNER][DIR_CACHE] Updated directory cache for created file: src/new.py",
      "[TOOL_RUNNER][DIR_CACHE] Invalidating directory cache due to execute_command",
    ]);
    expect(second.out.fileCache.stats).toEqual({
      hits: 1,
      misses: 1,
      staleRefreshes: 0,
      bytesSaved: viewLines(main).text.length - second.text.length, // the repeat was answered with a reference
    });
  });

  it("options are validated, groups included", () => {
    expect(() => createFileTools({ root: "" })).toThrow(GuardOptionsError);
    expect(() => createFileTools({ root: base, limits: { listLimit: 0 } })).toThrow(/limits\.listLimit/);
    expect(() => createFileTools({ root: base, commands: { timeoutMs: -1 } })).toThrow(/commands\.timeoutMs/);
    expect(() => createFileTools({ root: base, feedback: { events: 1 as never } })).toThrow(/feedback\.events/);
    // A bad field of the cache's settings is named as that field; a value of no allowed shape says what is allowed.
    expect(() => createFileTools({ root: base, cache: { budgetChars: -1 } })).toThrow(
      /- cache\.budgetChars: Too small/,
    );
    expect(() => createFileTools({ root: base, cache: { maxFiles: 1.5 } })).toThrow(
      /- cache\.maxFiles: .*expected int/,
    );
    expect(() => createFileTools({ root: base, cache: "on" as never })).toThrow(/cache: expected true, false or \{/);
    // An unknown key inside a group is rejected, not ignored.
    for (const group of ["cache", "commands", "limits", "feedback"]) {
      expect(() => createFileTools({ root: base, [group]: { timeout: 5 } })).toThrow(
        new RegExp(`${group}: Unrecognized key: "timeout"`),
      );
    }
  });

  it("an option written outside its group is refused by name", () => {
    const outside = [
      "cacheBudgetChars",
      "cacheMaxFiles",
      "racyWindowMs",
      "scanEntryCap",
      "commandTimeoutMs",
      "maxCommandOutputChars",
      "maxFileBytes",
      "maxIgnoreFileBytes",
      "ioTimeoutMs",
      "defaultLineLimit",
      "maxLineChars",
      "listLimit",
      "logger",
      "events",
    ];
    for (const key of outside) {
      const options = { root: base, [key]: key === "logger" ? console : key === "events" ? false : 10 };
      expect(() => createFileTools(options as never)).toThrow(GuardOptionsError);
      expect(() => createFileTools(options as never)).toThrow(new RegExp(`unrecognized option: ${key}$`, "m"));
    }
  });

  it("cache: false turns the cache off; its settings turn it on, the others defaulted", () => {
    expect(resolveFileToolsOptions({ root: base, cache: false }).cache.enabled).toBe(false);
    expect(resolveFileToolsOptions({ root: base }).cache.enabled).toBe(true);
    expect(resolveFileToolsOptions({ root: base, cache: { maxFiles: 5 } }).cache).toEqual({
      enabled: true,
      budgetChars: 50_000_000,
      maxFiles: 5,
      racyWindowMs: 2000,
      scanEntryCap: 100_000,
    });
  });
});

describe("with the loop guard", () => {
  it("turns answered entirely from the cache do not count as iterations (seed 001: no inner cycle cost)", async () => {
    const root = tree({ "a.py": "a = 1\n", "b.py": "b = 2\n", "c.py": "c = 3\n" });
    const steps = [
      { content: "First, the a module to see its value.", toolCalls: [{ name: "read_file", args: { path: "a.py" } }] },
      {
        content: "Checking module a one more time, just in case.",
        toolCalls: [{ name: "read_file", args: { path: "a.py" } }],
      },
      {
        content: "Then the b module for its constant value.",
        toolCalls: [{ name: "read_file", args: { path: "b.py" } }],
      },
      {
        content: "Finally module c, the last one in the list.",
        toolCalls: [{ name: "read_file", args: { path: "c.py" } }],
      },
      "Done.",
    ];
    const llm = new ScriptedChatModel(steps);
    const agent = createReactAgent({
      llm,
      tools: new GuardedToolNode(createFileTools({ root })),
      stateSchema: GuardMessagesState,
      postModelHook: loopDetectHook({
        maxIterations: 4,
        turns: { minOutputLength: 10_000 },
        feedback: { logger: { warn: () => {} } },
      }),
    });
    const out = await agent.invoke({ messages: [{ role: "user", content: "Read the modules." }] });
    // Turn 2 was answered from the cache, so after turn 4 only 3 of 4 iterations are spent and the run finishes
    // (without the refund, turn 4 would reach the limit and stop the run).
    expect(String(out.messages.at(-1)?.content)).toBe("Done.");
    expect(llm.stepsTaken).toBe(5);
  });
});
