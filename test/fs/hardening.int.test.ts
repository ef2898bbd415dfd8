/**
 * Issue 15 (an outside review's findings): special files and huge inputs neither crash nor hang the tools, every
 * echoed value is capped, every path the tools touch (refreshes too) is confined to the root, `.git` is protected
 * at any depth, hard links can be refused, and no cached read or listing is served stale when only the ctime tells.
 */
import { execFileSync } from "node:child_process";
import {
  linkSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { basename, join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { FileCacheState } from "../../src/fs/cache.js";
import { MAX_ECHO_CHARS } from "../../src/fs/echo.js";
import { withTimeout } from "../../src/fs/io.js";
import { createSandbox } from "../../src/fs/sandbox.js";
import { DEFAULT_IGNORED, refreshTree, scanTree } from "../../src/fs/tree.js";
import { tempProjects } from "../support/projects.js";
import { directTools } from "./direct.js";

const projects = tempProjects("lgg-hard-");
const { base } = projects;
const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) s.close();
});
const isRoot = process.getuid?.() === 0;

/** A fresh project with the given files, and an outside folder next to it holding `secret.txt`. */
function project(files: Record<string, string> = {}) {
  const root = projects.project(files);
  return { root, outside: projects.outside({ "secret.txt": "TOPSECRET\n" }) };
}

/** The tools, with a clock past the racy window: a matching stat is trusted (the stat path, not the hash). */
const trusting = (root: string, options = {}) => directTools(root, { clock: () => Date.now() + 60_000, ...options });

const mkfifo = (path: string) => execFileSync("mkfifo", [path]);
async function socketAt(path: string): Promise<void> {
  const server = createServer();
  servers.push(server);
  await new Promise<void>((done) => server.listen(path, done));
}

describe("special files: listed with a marker, never opened, never waited on", () => {
  it("a FIFO, a socket and a device in the tree: list_files, read_file, apply_source_code_diff, write_to_file", async () => {
    const { root } = project({ "a.txt": "a\n", "sub/b.txt": "b\n" });
    mkfifo(join(root, "pipe"));
    mkfifo(join(root, "sub", "pipe2"));
    await socketAt(join(root, "sock"));
    if (isRoot) execFileSync("mknod", [join(root, "zero"), "c", "1", "5"]); // a /dev/zero inside the root
    symlinkSync("pipe", join(root, "to-pipe"));
    const { call } = directTools(root);
    const listing = await call("list_files", { recursive: true });
    expect(listing.text.split("\n")).toEqual([
      "a.txt",
      "pipe [fifo]",
      "sock [socket]",
      "sub/",
      "sub/b.txt",
      "sub/pipe2 [fifo]",
      "to-pipe",
      ...(isRoot ? ["zero [character device]"] : []),
    ]);
    for (const [path, kind] of [
      ["pipe", "fifo"],
      ["to-pipe", "fifo"],
      ["sub/pipe2", "fifo"],
      ["sock", "socket"],
      ...(isRoot ? [["zero", "character device"]] : []),
    ]) {
      const read = await call("read_file", { path });
      expect(read.status).toBe("error");
      expect(read.text).toBe(`${path} is a ${kind}, not a regular file: only regular files can be read.`);
      const diff = await call("apply_source_code_diff", { path, diff: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n" });
      expect(diff.status).toBe("error");
      expect(diff.text).toMatch(/not a regular file/);
      const write = await call("write_to_file", { path, content: "x" });
      expect(write.status).toBe("error");
      expect(write.text).toMatch(new RegExp(`is a (fifo|socket|${kind})`));
    }
    // The listing is served from the tree afterwards, markers and all.
    expect((await call("list_files", { path: "sub" })).text).toBe("b.txt\npipe2 [fifo]");
  });

  it("a .gitignore that links to /dev/zero, that is a FIFO, a folder or too large is not applied, with a note", async () => {
    const { root } = project({ "a.log": "", "b.txt": "", "sub/c.log": "", "deep/d.log": "", "big/e.log": "" });
    symlinkSync("/dev/zero", join(root, ".gitignore"));
    mkfifo(join(root, "sub", ".gitignore"));
    mkdirSync(join(root, "deep", ".gitignore"));
    writeFileSync(join(root, "big", ".gitignore"), `*.log\n${"#".repeat(3000)}\n`);
    const { call } = directTools(root, { limits: { maxIgnoreFileBytes: 2000 } });
    const started = Date.now();
    const listing = await call("list_files", { recursive: true });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(listing.text.split("\n")).toEqual([
      ".gitignore",
      "a.log",
      "b.txt",
      "big/",
      "big/.gitignore",
      "big/e.log",
      "deep/",
      "deep/.gitignore/",
      "deep/d.log",
      "sub/",
      "sub/.gitignore [fifo]",
      "sub/c.log",
      "(note: .gitignore is not applied: it links outside the project root.)",
      "(note: big/.gitignore is not applied: it has 3007 bytes, over the limit of 2000 (limits.maxIgnoreFileBytes).)",
      "(note: deep/.gitignore is not applied: it is a folder.)",
      "(note: sub/.gitignore is not applied: it is a fifo, not a regular file.)",
    ]);
    // A listing of a subfolder carries the notes of the .gitignore files above it.
    expect((await call("list_files", { path: "sub" })).text).toBe(
      [
        ".gitignore [fifo]",
        "c.log",
        "(note: .gitignore is not applied: it links outside the project root.)",
        "(note: sub/.gitignore is not applied: it is a fifo, not a regular file.)",
      ].join("\n"),
    );
    expect((await call("read_file", { path: ".gitignore" })).text).toMatch(/outside the project root/);
  });

  it("withTimeout ends a read that never finishes", async () => {
    const started = Date.now();
    await expect(withTimeout(new Promise(() => {}), 50)).rejects.toThrow(/timed out after 50 ms/);
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(withTimeout(Promise.resolve(7), 50)).resolves.toBe(7);
  });

  it("apply_source_code_diff refuses a file over limits.maxFileBytes, as read_file does", async () => {
    const { root } = project({ "big.txt": "x\n".repeat(600) });
    const { call } = directTools(root, { limits: { maxFileBytes: 1000 } });
    const diff = await call("apply_source_code_diff", { path: "big.txt", diff: "--- a/big.txt\n+++ b/big.txt\n" });
    expect(diff.text).toBe("big.txt is too large to change (1200 bytes; the limit is 1000).");
  });
});

describe("echoed values are capped", () => {
  const bound = 3 * MAX_ECHO_CHARS + 400; // root and path echoed (each capped), and the sentence around them

  it("a 1 MB path comes back as 300 characters and its length, once", async () => {
    const { root } = project({ "a.txt": "a\n" });
    const { call } = directTools(root);
    const huge = "a/".repeat(500_000);
    for (const [name, args] of [
      ["read_file", { path: huge }],
      ["list_files", { path: huge }],
      ["write_to_file", { path: huge, content: "x" }],
      ["apply_source_code_diff", { path: huge, diff: "" }],
    ] as const) {
      const answer = await call(name, args);
      expect(answer.status).toBe("error");
      expect(answer.text.length).toBeLessThan(bound);
      expect(answer.text).toContain("… [1000000 characters]");
    }
  });

  it("property: whatever the path, no tool's answer grows with it", async () => {
    const { root } = project({ "a.txt": "a\n", "sub/b.txt": "b\n" });
    const { call } = directTools(root);
    const segment = fc.oneof(
      fc.constantFrom("..", ".", "sub", "a.txt", "", "x".repeat(300), "\0", "[...slug]"),
      fc.string({ maxLength: 40 }),
    );
    const pathArb = fc
      .tuple(fc.array(segment, { minLength: 1, maxLength: 30 }), fc.boolean(), fc.nat(5000))
      .map(([parts, absolute, pad]) => `${absolute ? "/" : ""}${parts.join("/")}${"y".repeat(pad)}`);
    await fc.assert(
      fc.asyncProperty(pathArb, fc.constantFrom("read_file", "list_files", "write_to_file"), async (path, name) => {
        const args = name === "write_to_file" ? { path, content: "x" } : { path };
        const answer = await call(name, args);
        if (answer.status === "error") expect(answer.text.length).toBeLessThan(bound);
        else expect(answer.text.length).toBeLessThan(bound + 200); // a summary names the path once, capped
      }),
      { numRuns: 150, seed: 15 },
    );
  });
});

describe("sandbox: every path the tools touch is confined, refreshes too", () => {
  it("a folder swapped for a symlink to an outside folder (parent's mtime restored) is never listed", async () => {
    const { root, outside } = project({ "sub/inner/own.txt": "", "sub/x.txt": "" });
    utimesSync(join(root, "sub"), 1_700_000_000, 1_700_000_000);
    const { call } = trusting(root);
    expect((await call("list_files", { recursive: true })).text).toBe("sub/\nsub/inner/\nsub/inner/own.txt\nsub/x.txt");
    rmSync(join(root, "sub", "inner"), { recursive: true });
    symlinkSync(outside, join(root, "sub", "inner"));
    utimesSync(join(root, "sub"), 1_700_000_000, 1_700_000_000);
    const recursive = await call("list_files", { recursive: true });
    expect(recursive.text).not.toContain("secret");
    expect(recursive.text).toBe("sub/\nsub/inner\nsub/x.txt");
    expect((await call("list_files", { path: "sub/inner" })).text).toMatch(/outside the project root/);
  });

  it("refreshTree never reads through a folder swapped for a symlink, even if its parent looked unchanged", () => {
    const { root, outside } = project({ "sub/inner/own.txt": "", "sub/x.txt": "" });
    const options = { ignored: DEFAULT_IGNORED, entryCap: 1000, now: Date.now(), racyWindowMs: 0 };
    const tree = scanTree(root, "", options) ?? {};
    rmSync(join(root, "sub", "inner"), { recursive: true });
    symlinkSync(outside, join(root, "sub", "inner"));
    // Forge the parent's node as if nothing had changed (its stat matches now): only the child's check is left.
    const now = lstatSync(join(root, "sub"));
    const sub = { ...tree.sub, mtimeMs: now.mtimeMs, ctimeMs: now.ctimeMs, ino: now.ino, scannedAt: Date.now() + 1e6 };
    const forged = { ...tree, sub: sub as (typeof tree)[string] };
    const changes = refreshTree(root, forged, "", true, { ...options, now: Date.now() + 1e6 });
    expect(changes["sub/inner"]).toBeNull();
    expect(JSON.stringify(changes)).not.toContain("secret");
    // A scan from a symlinked folder finds nothing.
    expect(scanTree(root, "sub/inner", options)).toEqual({});
  });

  it("a .gitignore is read only inside the root (a link to an outside file is not applied)", async () => {
    const { root, outside } = project({ "a.txt": "", "b.log": "" });
    writeFileSync(join(outside, "rules"), "*.txt\n");
    symlinkSync(join(outside, "rules"), join(root, ".gitignore"));
    const { call } = directTools(root);
    expect((await call("list_files", {})).text).toBe(
      ".gitignore\na.txt\nb.log\n(note: .gitignore is not applied: it links outside the project root.)",
    );
  });

  it("static escapes are refused by every tool, and no outside content is ever shown", async () => {
    const { root, outside } = project({ "sub/a.txt": "a\n" });
    symlinkSync(outside, join(root, "link-out"));
    symlinkSync(join(outside, "secret.txt"), join(root, "file-out"));
    symlinkSync(join(outside, "missing.txt"), join(root, "dangling-out"));
    symlinkSync("..", join(root, "sub", "up"));
    symlinkSync("../..", join(root, "sub", "up2"));
    const name = outside.slice(base.length + 1);
    const targets = ["secret.txt", "missing.txt", "new/deep.txt"];
    const forms = [
      (t: string) => `../${name}/${t}`,
      (t: string) => `../../${base.slice(1)}/${name}/${t}`,
      (t: string) => `./../${name}/${t}`,
      (t: string) => `sub/../../${name}/${t}`,
      (t: string) => `sub//..//..//${name}/${t}`,
      (t: string) => `${root}/../${name}/${t}`,
      (t: string) => `${outside}/${t}`,
      (t: string) => `link-out/${t}`,
      (t: string) => `sub/../link-out/${t}`,
      (t: string) => `sub/up2/${name}/${t}`,
      (t: string) => `sub/up/link-out/${t}`,
      (t: string) => `${root}2/${t}`,
      (t: string) => `../${basename(root)}2/${t}`,
      (t: string) => `sub/a.txt\0/../../${name}/${t}`,
      (t: string) => `file-out${t === "secret.txt" ? "" : `/${t}`}`,
    ];
    const paths = [...forms.flatMap((f) => targets.map(f)), "dangling-out", "/etc/passwd", "sub/up2", "link-out"];
    const { call } = directTools(root);
    let refused = 0;
    for (const path of paths) {
      for (const [tool, args] of [
        ["read_file", { path }],
        ["list_files", { path }],
        ["write_to_file", { path, content: "PWNED" }],
        ["apply_source_code_diff", { path, diff: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-TOPSECRET\n+PWNED\n" }],
      ] as const) {
        const answer = await call(tool, args);
        expect(answer.status, `${tool} ${path}`).toBe("error");
        expect(answer.text).not.toContain("TOPSECRET");
        refused += 1;
      }
    }
    expect(refused).toBe(paths.length * 4); // 49 paths × 4 tools = 196 refusals
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("TOPSECRET\n");
    expect(execFileSync("ls", [outside]).toString()).toBe("secret.txt\n");
  });
});

describe("hard links", () => {
  it("are read through by default (documented); a write replaces the link; refuseHardLinks refuses it", async () => {
    const { root, outside } = project({ "own.txt": "mine\n" });
    linkSync(join(outside, "secret.txt"), join(root, "linked.txt"));
    const open = directTools(root);
    expect((await open.call("read_file", { path: "linked.txt" })).text).toBe("     1\tTOPSECRET");
    await open.call("write_to_file", { path: "linked.txt", content: "CHANGED\n" });
    // A write puts a new file in place of the link (issue 35: atomic writes): the outside file keeps its content.
    expect(readFileSync(join(root, "linked.txt"), "utf8")).toBe("CHANGED\n");
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("TOPSECRET\n");
    rmSync(join(root, "linked.txt"));
    linkSync(join(outside, "secret.txt"), join(root, "linked.txt"));

    writeFileSync(join(outside, "secret.txt"), "TOPSECRET\n");
    const strict = directTools(root, { refuseHardLinks: true });
    const write = await strict.call("write_to_file", { path: "linked.txt", content: "AGAIN\n" });
    expect(write.status).toBe("error");
    expect(write.text).toMatch(/^linked\.txt has 2 hard links \(refuseHardLinks is on\)/);
    const diff = "--- a/linked.txt\n+++ b/linked.txt\n@@ -1 +1 @@\n-TOPSECRET\n+AGAIN\n";
    expect((await strict.call("apply_source_code_diff", { path: "linked.txt", diff })).status).toBe("error");
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("TOPSECRET\n");
    // Files with one link are written as usual.
    expect((await strict.call("write_to_file", { path: "own.txt", content: "still mine\n" })).status).toBe("success");
    expect((await strict.call("write_to_file", { path: "new.txt", content: "new\n" })).status).toBe("success");
  });
});

describe(".git is protected at any depth", () => {
  it("write_to_file and apply_source_code_diff refuse sub/.git/hooks/*, and allow .github, .gitignore", async () => {
    const { root } = project({ "sub/.git/hooks/pre-commit.sample": "#!/bin/sh\n", "vendor/lib/.git": "gitdir: x\n" });
    const { call } = directTools(root);
    for (const path of [
      ".git/config",
      "sub/.git/hooks/pre-commit",
      "sub/.git/hooks/pre-commit.sample",
      "a/b/c/.git/HEAD",
      "vendor/lib/.git",
      "sub/.GIT/hooks/post-checkout",
    ]) {
      const write = await call("write_to_file", { path, content: "#!/bin/sh\necho pwned\n" });
      expect(write.status, path).toBe("error");
      expect(write.text).toMatch(/^Writing to .* is not allowed\.$/);
    }
    const diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-#!/bin/sh\n+echo pwned\n";
    expect((await call("apply_source_code_diff", { path: "sub/.git/hooks/pre-commit.sample", diff })).status).toBe(
      "error",
    );
    expect(readFileSync(join(root, "sub/.git/hooks/pre-commit.sample"), "utf8")).toBe("#!/bin/sh\n");
    for (const path of [".github/workflows/ci.yml", "sub/.gitignore", "sub/.gitkeep", "my.git/x", "git/x"]) {
      expect((await call("write_to_file", { path, content: "ok\n" })).status, path).toBe("success");
    }
  });

  it("property: with the default deny list, a write is refused exactly when a segment is .git", () => {
    const { root } = project();
    const sandbox = createSandbox({ root });
    const segment = fc.constantFrom(".git", ".GIT", "src", ".github", "git", ".gitignore", "a.git", "hooks", "x");
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 6 }), (parts) => {
        const refused = !sandbox.resolve(parts.join("/"), { write: true }).ok;
        expect(refused).toBe(parts.some((p) => p.toLowerCase() === ".git"));
        expect(sandbox.resolve(parts.join("/")).ok).toBe(true); // reads stay allowed
      }),
      { numRuns: 500, seed: 15 },
    );
  });
});

describe("stale reads: the ctime tells what size and a restored mtime hide", () => {
  it("a file rewritten with the same size and its mtime restored exactly is read again", async () => {
    const { root } = project({ "a.txt": "aaaa\n" });
    utimesSync(join(root, "a.txt"), 1_700_000_000, 1_700_000_000);
    const { call } = trusting(root);
    expect((await call("read_file", { path: "a.txt" })).text).toBe("     1\taaaa");
    const ino = statSync(join(root, "a.txt")).ino;
    writeFileSync(join(root, "a.txt"), "bbbb\n");
    utimesSync(join(root, "a.txt"), 1_700_000_000, 1_700_000_000);
    expect(statSync(join(root, "a.txt")).ino).toBe(ino);
    expect(statSync(join(root, "a.txt")).mtimeMs).toBe(1_700_000_000_000);
    const again = await call("read_file", { path: "a.txt" });
    expect(again.text).toBe("     1\tbbbb");
    expect(again.cached).toBe(false);
  });

  it("a file added outside the tools, the folder's mtime restored, shows in the next listing", async () => {
    const { root } = project({ "sub/a.txt": "" });
    utimesSync(join(root, "sub"), 1_700_000_000, 1_700_000_000);
    const { call } = trusting(root);
    expect((await call("list_files", { path: "sub" })).text).toBe("a.txt");
    writeFileSync(join(root, "sub", "added.txt"), "");
    renameSync(join(root, "sub", "a.txt"), join(root, "sub", "moved.txt"));
    utimesSync(join(root, "sub"), 1_700_000_000, 1_700_000_000);
    expect(statSync(join(root, "sub")).mtimeMs).toBe(1_700_000_000_000);
    expect((await call("list_files", { path: "sub" })).text).toBe("added.txt\nmoved.txt");
  });

  it("a new, changed or removed .gitignore above a cached listing applies to it", async () => {
    const { root } = project({ "sub/a.txt": "", "sub/b.log": "", "sub/deep/c.log": "" });
    const { call } = trusting(root);
    expect((await call("list_files", { path: "sub" })).text).toBe("a.txt\nb.log\ndeep/");
    writeFileSync(join(root, ".gitignore"), "*.log\n");
    expect((await call("list_files", { path: "sub" })).text).toBe("a.txt\ndeep/");
    expect((await call("list_files", { path: "sub/deep" })).text).toBe("(empty folder)");
    // Same size, mtime restored: the ctime still tells.
    utimesSync(join(root, ".gitignore"), 1_700_000_000, 1_700_000_000);
    expect((await call("list_files", { path: "sub" })).text).toBe("a.txt\ndeep/");
    writeFileSync(join(root, ".gitignore"), "*.txt\n");
    utimesSync(join(root, ".gitignore"), 1_700_000_000, 1_700_000_000);
    expect((await call("list_files", { path: "sub" })).text).toBe("b.log\ndeep/");
    rmSync(join(root, ".gitignore"));
    expect((await call("list_files", { path: "sub", recursive: true })).text).toBe("a.txt\nb.log\ndeep/\ndeep/c.log");
    // A .gitignore in the listed folder itself, and one below it for a recursive listing.
    writeFileSync(join(root, "sub", "deep", ".gitignore"), "c.log\n");
    expect((await call("list_files", { path: "sub", recursive: true })).text).toBe(
      "a.txt\nb.log\ndeep/\ndeep/.gitignore",
    );
  });

  it("a cache stored by an older version (no ctimes, no .gitignore signatures) is verified, never trusted", async () => {
    const { root } = project({ "a.txt": "aaaa\n", "sub/x.txt": "" });
    utimesSync(join(root, "a.txt"), 1_700_000_000, 1_700_000_000);
    utimesSync(join(root, "sub"), 1_700_000_000, 1_700_000_000);
    const tools = trusting(root);
    await tools.call("read_file", { path: "a.txt" });
    await tools.call("list_files", { recursive: true });
    const current = tools.cache();
    const old: FileCacheState = {
      ...current,
      files: Object.fromEntries(Object.entries(current.files).map(([k, { ctimeMs: _c, ...f }]) => [k, f])),
      tree: Object.fromEntries(
        Object.entries(current.tree ?? {}).map(([k, { ctimeMs: _c, ino: _i, gitignore: _g, ...n }]) => [k, n]),
      ),
    };
    tools.setCache(old);
    writeFileSync(join(root, "a.txt"), "bbbb\n");
    utimesSync(join(root, "a.txt"), 1_700_000_000, 1_700_000_000);
    writeFileSync(join(root, "sub", "y.txt"), "");
    utimesSync(join(root, "sub"), 1_700_000_000, 1_700_000_000);
    expect((await tools.call("read_file", { path: "a.txt" })).text).toBe("     1\tbbbb");
    expect((await tools.call("list_files", { path: "sub" })).text).toBe("x.txt\ny.txt");
  });
});
