/**
 * Issue 35, item 17: the answers say what is wrong. An unreadable folder is not "Not a folder"; a project root that
 * was removed is named as such by every tool (never "spawn bash ENOENT"), and a write never recreates it; and no
 * answer prints the root's absolute path.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempProjects } from "../support/projects.js";
import { directTools } from "./direct.js";

const { project } = tempProjects("lgg-messages-");

/** Whether the runner is root, whom the OS lets read and write past a file's permissions. */
const asRoot = process.getuid?.() === 0;

/**
 * The answers of `calls`, made in a process of their own whose file access the OS checks as it does any user's. As
 * root, that process stays root (it can still read this checkout, wherever it is) but without the capabilities that
 * override permissions (`setpriv`, util-linux): root's own files are then judged by their owner bits. Issue 61,
 * item 13: a process of the user `nobody` could not load a checkout under /root, and the tests failed as root.
 */
function asUnprivileged(prepare: () => void, root: string, calls: [string, Record<string, unknown>][]) {
  prepare();
  const child = ["--import", "tsx", "test/fs/tools-child.ts", root, JSON.stringify(calls)];
  const out = asRoot
    ? execFileSync("setpriv", [
        "--bounding-set=-dac_override,-dac_read_search,-fowner",
        "--",
        process.execPath,
        ...child,
      ])
    : execFileSync(process.execPath, child);
  return JSON.parse(out.toString()) as { text: string; status: string }[];
}

describe("answers that say what is wrong", () => {
  it("an unreadable folder or file is said to be not readable, not 'Not a folder'", () => {
    const root = project({ "locked/a.txt": "a\n", "secret.txt": "s\n", "open/b.txt": "b\n" });
    const prepare = () => {
      chmodSync(join(root, "locked"), 0o000);
      chmodSync(join(root, "secret.txt"), 0o000);
    };
    const [list, read, missing, file] = asUnprivileged(prepare, root, [
      ["list_files", { path: "locked" }],
      ["read_file", { path: "secret.txt" }],
      ["list_files", { path: "nowhere" }],
      ["list_files", { path: "open/b.txt" }],
    ]);
    chmodSync(join(root, "locked"), 0o755);
    expect(list?.text).toBe("locked is a folder, but it is not readable (permission denied).");
    expect(read?.text).toBe("secret.txt is not readable (permission denied).");
    expect(missing?.text).toBe("Folder not found: nowhere");
    expect(file?.text).toBe("Not a folder: open/b.txt is a file (use read_file).");
  });

  it("a root that was removed: every tool says so, and a write does not recreate it", async () => {
    const root = project({ "a.txt": "a\n" });
    const tools = directTools(root);
    expect((await tools.call("list_files", {})).status).toBe("success");
    rmSync(root, { recursive: true });
    const gone = "The project root no longer exists (it was removed or moved); nothing can be done in it.";
    const diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n";
    for (const [name, args] of [
      ["read_file", { path: "a.txt" }],
      ["list_files", {}],
      ["list_files", { path: "sub", recursive: true }],
      ["write_to_file", { path: "a.txt", content: "new\n" }],
      ["write_to_file", { path: "deep/er/b.txt", content: "new\n" }],
      ["apply_source_code_diff", { path: "a.txt", diff }],
      ["execute_command", { command: "echo hi" }],
    ] as const) {
      const answer = await tools.call(name, args);
      expect(answer.status, name).toBe("error");
      expect(answer.text, name).toBe(gone);
    }
    expect(existsSync(root)).toBe(false);
  });

  it("a file in the way of a path is named as such, and nothing is made for the refused write", async () => {
    const root = project({ "a.txt": "a\n" });
    const { call } = directTools(root);
    const inTheWay = "(ENOTDIR: a part of its path is a file, not a folder)";
    expect((await call("write_to_file", { path: "a.txt/deep/b.txt", content: "x" })).text).toBe(
      `Cannot write a.txt/deep/b.txt ${inTheWay}. Nothing was changed.`,
    );
    expect((await call("read_file", { path: "a.txt/b.txt" })).text).toBe(`Cannot read a.txt/b.txt ${inTheWay}.`);
    expect(readdirSync(root)).toEqual(["a.txt"]);
  });

  it("no answer prints the root's absolute path: outside paths are refused root-relatively", async () => {
    const root = project({ "a.txt": "a\n" });
    const { call } = directTools(root);
    const diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
    for (const path of ["../elsewhere/x.txt", "/etc/passwd", "../../x"]) {
      for (const [name, args] of [
        ["read_file", { path }],
        ["list_files", { path }],
        ["write_to_file", { path, content: "x" }],
        ["apply_source_code_diff", { path, diff }],
      ] as const) {
        const answer = await call(name, args);
        expect(answer.text).toBe(`The path ${path} is outside the project root; only files inside it can be used.`);
        expect(answer.text).not.toContain(root);
      }
    }
  });
});

describe("permissions hold (issue 45, item 1)", () => {
  it("a file the user may not write is refused as the OS would refuse it, before any temp file; others are written", () => {
    const root = project({ "theirs.txt": "root's\n", "mine.txt": "mine\n", "open.txt": "open\n" });
    const diff = (file: string) =>
      `--- a/${file}\n+++ b/${file}\n@@ -1 +1 @@\n-${file === "theirs.txt" ? "root's" : "mine"}\n+changed\n`;
    const prepare = () => {
      // Someone else's file, read-only for others: root gives it to nobody; a user cannot give a file away, so for
      // them it is one of their own that no one may write.
      if (asRoot) chownSync(join(root, "theirs.txt"), 65534, 65534);
      chmodSync(join(root, "theirs.txt"), asRoot ? 0o644 : 0o444);
      chmodSync(join(root, "mine.txt"), 0o444); // the user's own, after chmod a-w
    };
    const [theirs, theirsDiff, mine, mineDiff, open] = asUnprivileged(prepare, root, [
      ["write_to_file", { path: "theirs.txt", content: "changed\n" }],
      ["apply_source_code_diff", { path: "theirs.txt", diff: diff("theirs.txt") }],
      ["write_to_file", { path: "mine.txt", content: "changed\n" }],
      ["apply_source_code_diff", { path: "mine.txt", diff: diff("mine.txt") }],
      ["write_to_file", { path: "open.txt", content: "changed\n" }],
    ]);
    for (const answer of [theirs, theirsDiff, mine, mineDiff]) {
      expect(answer?.status).toBe("error");
      expect(answer?.text).toMatch(/cannot be (written|changed) \(permission denied/);
    }
    expect(open?.status).toBe("success");
    expect(readFileSync(join(root, "theirs.txt"), "utf8")).toBe("root's\n");
    expect(statSync(join(root, "theirs.txt")).uid).toBe(asRoot ? 65534 : process.getuid?.()); // not replaced
    expect(readFileSync(join(root, "mine.txt"), "utf8")).toBe("mine\n");
    expect(readdirSync(root).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });
});
