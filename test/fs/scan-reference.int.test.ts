/**
 * `scanTree` and `refreshTree` against a straightforward reference: on random trees with `.gitignore` files at
 * several levels (patterns of every shape: names, `*.ext`, prefixes, anchored paths, `**`, negations, brackets,
 * escapes, comments, CRLF and a BOM), default-ignored folders, symlinks (to files, to folders, dangling) and FIFOs,
 * every folder's entries must be what a plain walk computes: `readdir` of each folder, each entry judged by the
 * `ignore` package's `test` against every `.gitignore` above it, deepest first — from the root and from any folder
 * asked for by name (an ignored one too). After random changes, a recursive refresh must give the same again.
 */
import { execFileSync } from "node:child_process";
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import ignore, { type Ignore } from "ignore";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_IGNORED, type DirTree, refreshTree, scanTree } from "../../src/fs/tree.js";

const base = realpathSync(mkdtempSync(join(tmpdir(), "lgg-scan-ref-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const DIRS = [
  "",
  "a",
  "a/b",
  "a/b/c",
  "src",
  "src/a",
  "Build",
  "build",
  "build/x",
  "x.log",
  "node_modules",
  "node_modules/m",
];
const NAMES = [
  "a",
  "b",
  "A",
  "foo",
  "FOO",
  "x.log",
  "y.LOG",
  "a-b",
  "a.b",
  "_c",
  "keep.log",
  "build",
  "tmp1",
  "ſ",
  "K",
];
const LINES = [
  "a",
  "A",
  "foo",
  "*.log",
  "*.LOG",
  "!keep.log",
  "!*.log",
  "a*",
  "*b",
  "a?",
  "[ab]",
  "f*o",
  "**/a",
  "a/**",
  "/a",
  "a/b",
  "/build/",
  "build/",
  "b/",
  "!a",
  "!b/",
  "# a comment",
  "",
  "   ",
  "\\#a",
  "\\!a",
  "a\\ ",
  "*",
  "**",
  "a/*.log",
  "x.lo?",
  "**/b/",
  "a/**/c",
  "src/a",
  "/x.log",
  "tmp*",
  "s",
  "k",
  "foo   ",
  "c/",
  "!c",
];

interface Entry {
  dir: string;
  name: string;
  kind: "file" | "dir" | "link-file" | "link-dir" | "dangling" | "fifo";
}
interface Gitignore {
  dir: string;
  lines: string[];
  crlf: boolean;
  bom: boolean;
}

const entryArb: fc.Arbitrary<Entry> = fc.record({
  dir: fc.constantFrom(...DIRS),
  name: fc.constantFrom(...NAMES),
  kind: fc.constantFrom("file", "file", "file", "dir", "link-file", "link-dir", "dangling", "fifo"),
});
const gitignoreArb: fc.Arbitrary<Gitignore> = fc.record({
  dir: fc.constantFrom(...DIRS),
  lines: fc.array(fc.constantFrom(...LINES), { minLength: 0, maxLength: 5 }),
  crlf: fc.boolean(),
  bom: fc.boolean(),
});

const gitignoreText = (g: Gitignore) => `${g.bom ? "\uFEFF" : ""}${g.lines.join(g.crlf ? "\r\n" : "\n")}\n`;

let projects = 0;

/** Makes the tree; an entry whose path is taken already (or whose folder is not a folder) is left out. */
function build(entries: readonly Entry[], gitignores: readonly Gitignore[]): string {
  projects += 1;
  const root = join(base, `p${projects}`);
  for (const d of DIRS) mkdirSync(join(root, d), { recursive: true });
  for (const g of gitignores) writeFileSync(join(root, g.dir, ".gitignore"), gitignoreText(g));
  for (const e of entries) {
    const path = join(root, e.dir, e.name);
    if (lstatSync(path, { throwIfNoEntry: false }) !== undefined) continue;
    switch (e.kind) {
      case "file":
        writeFileSync(path, "x\n");
        break;
      case "dir":
        mkdirSync(path);
        writeFileSync(join(path, "inner.txt"), "x\n");
        break;
      case "link-file":
        writeFileSync(join(root, "target.txt"), "t\n");
        symlinkSync(join(root, "target.txt"), path);
        break;
      case "link-dir":
        symlinkSync(join(root, "a"), path);
        break;
      case "dangling":
        symlinkSync(join(root, "missing"), path);
        break;
      case "fifo":
        execFileSync("mkfifo", [path]);
        break;
    }
  }
  return root;
}

/** A folder's `.gitignore` as the scan applies it: a regular file (these tests make no other kind). */
function gitignoreOf(root: string, dir: string): Ignore | undefined {
  const path = join(root, dir, ".gitignore");
  return lstatSync(path, { throwIfNoEntry: false })?.isFile() ? ignore().add(readFileSync(path, "utf8")) : undefined;
}

/** The entries of every folder from `from` down, computed plainly (see the top of the file). */
function reference(root: string, from: string): Record<string, string[]> {
  const chainOf = (d: string): { dir: string; matcher: Ignore }[] => {
    const above = d === "" ? [] : chainOf(d.includes("/") ? d.slice(0, d.lastIndexOf("/")) : "");
    const matcher = gitignoreOf(root, d);
    return matcher ? [{ dir: d, matcher }, ...above] : above;
  };
  const out: Record<string, string[]> = {};
  const walk = (rel: string) => {
    const chain = chainOf(rel);
    const entries: string[] = [];
    for (const d of readdirSync(join(root, rel), { withFileTypes: true })) {
      if (DEFAULT_IGNORED.includes(d.name)) continue;
      const path = rel === "" ? d.name : `${rel}/${d.name}`;
      const isDir = d.isDirectory();
      let ignored = false;
      for (const { dir, matcher } of chain) {
        const sub = dir === "" ? path : path.slice(dir.length + 1);
        const verdict = matcher.test(isDir ? `${sub}/` : sub);
        if (verdict.ignored) ignored = true;
        if (verdict.ignored || verdict.unignored) break;
      }
      if (ignored) continue;
      entries.push(isDir ? `${d.name}/` : d.isFIFO() ? `${d.name} [fifo]` : d.name);
      if (isDir) walk(path);
    }
    out[rel] = entries.sort();
  };
  walk(from);
  return out;
}

/** The entries of every folder of `tree` reachable from `from` through the entries. */
function reachable(tree: DirTree, from: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const walk = (rel: string) => {
    const node = tree[rel];
    if (node === undefined) return;
    out[rel] = node.entries;
    for (const e of node.entries) if (e.endsWith("/")) walk(rel === "" ? e.slice(0, -1) : `${rel}/${e.slice(0, -1)}`);
  };
  walk(from);
  return out;
}

/** Real folders of the tree on disk (symlinks not followed), default-ignored and gitignored ones included. */
function foldersOnDisk(root: string, rel = ""): string[] {
  const out = [rel];
  for (const d of readdirSync(join(root, rel), { withFileTypes: true })) {
    if (d.isDirectory()) out.push(...foldersOnDisk(root, rel === "" ? d.name : `${rel}/${d.name}`));
  }
  return out;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const options = (now: number) => ({ ignored: DEFAULT_IGNORED, entryCap: 1e9, now, racyWindowMs: 2000 });

type Change =
  | { kind: "add"; entry: Entry }
  | { kind: "remove"; dir: string; name: string }
  | { kind: "gitignore"; g: Gitignore }
  | { kind: "ungitignore"; dir: string }
  | { kind: "rewrite"; lines: string[] };

const changeArb: fc.Arbitrary<Change> = fc.oneof(
  fc.record({ kind: fc.constant("add" as const), entry: entryArb }),
  fc.record({ kind: fc.constant("remove" as const), dir: fc.constantFrom(...DIRS), name: fc.constantFrom(...NAMES) }),
  fc.record({ kind: fc.constant("gitignore" as const), g: gitignoreArb }),
  fc.record({ kind: fc.constant("ungitignore" as const), dir: fc.constantFrom(...DIRS) }),
  // Every .gitignore rewritten in place: its folder does not change, only the file does.
  fc.record({ kind: fc.constant("rewrite" as const), lines: fc.array(fc.constantFrom(...LINES), { maxLength: 4 }) }),
);

function applyChange(root: string, c: Change): void {
  switch (c.kind) {
    case "add": {
      const path = join(root, c.entry.dir, c.entry.name);
      if (lstatSync(path, { throwIfNoEntry: false }) !== undefined) return;
      if (c.entry.kind === "dir") mkdirSync(path);
      else writeFileSync(path, "y\n");
      return;
    }
    case "remove":
      rmSync(join(root, c.dir, c.name), { recursive: true, force: true });
      return;
    case "gitignore":
      if (lstatSync(join(root, c.g.dir), { throwIfNoEntry: false })?.isDirectory()) {
        writeFileSync(join(root, c.g.dir, ".gitignore"), gitignoreText(c.g));
      }
      return;
    case "ungitignore":
      rmSync(join(root, c.dir, ".gitignore"), { force: true });
      return;
    case "rewrite":
      for (const d of DIRS) {
        const path = join(root, d, ".gitignore");
        if (lstatSync(path, { throwIfNoEntry: false })?.isFile()) writeFileSync(path, `${c.lines.join("\n")}\n`);
      }
      return;
  }
}

describe("scanTree equals a plain walk with the ignore package", () => {
  it("property: from the root and from every folder, over random trees and .gitignore files", () => {
    fc.assert(
      fc.property(
        fc.array(entryArb, { maxLength: 40 }),
        fc.array(gitignoreArb, { maxLength: 4 }),
        (entries, gitignores) => {
          const root = build(entries, gitignores);
          for (const from of foldersOnDisk(root)) {
            const scanned = scanTree(root, from, options(Date.now())) ?? {};
            expect(reachable(scanned, from)).toEqual(reference(root, from));
            // Nothing else: every folder scanned is one the listing shows.
            expect(Object.keys(scanned).sort()).toEqual(Object.keys(reference(root, from)).sort());
          }
        },
      ),
      { numRuns: 150, seed: 19 },
    );
  });

  it("property: after random changes, a recursive refresh gives the entries a plain walk gives", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(entryArb, { maxLength: 30 }),
        fc.array(gitignoreArb, { maxLength: 3 }),
        fc.array(changeArb, { minLength: 1, maxLength: 6 }),
        fc.constantFrom("", "a", "src", "a/b"),
        async (entries, gitignores, changes, from) => {
          const root = build(entries, gitignores);
          // A clock ahead of the files: the scan's folders are outside the racy window, so an unchanged folder is
          // trusted (and its .gitignore not probed when it had none); the changes come in a later clock tick.
          const scanned = scanTree(root, "", options(Date.now() + 10_000)) ?? {};
          await sleep(15);
          for (const c of changes) applyChange(root, c);
          const delta = refreshTree(root, scanned, from, true, options(Date.now() + 20_000));
          const tree: DirTree = { ...scanned };
          for (const [k, v] of Object.entries(delta)) {
            if (v === null) delete tree[k];
            else tree[k] = v;
          }
          const onDisk = lstatSync(join(root, from), { throwIfNoEntry: false });
          if (!onDisk?.isDirectory()) return;
          if (!(from in tree)) return; // an ignored folder now: list_files scans it on its own
          expect(reachable(tree, from)).toEqual(reference(root, from));
          // A second refresh finds nothing changed (unless a folder above is not in the tree: then the listed one
          // is scanned again each time, by design).
          const above =
            from === ""
              ? []
              : [
                  "",
                  ...from
                    .split("/")
                    .slice(0, -1)
                    .map((_, i, p) => p.slice(0, i + 1).join("/")),
                ];
          if (above.every((a) => a in tree)) {
            expect(refreshTree(root, tree, from, true, options(Date.now() + 30_000))).toEqual({});
          }
        },
      ),
      { numRuns: 60, seed: 1919 },
    );
  }, 120_000);
});
