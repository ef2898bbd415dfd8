/**
 * Project folders for the file-tool tests: one temporary base folder per test file (removed after it), and in it a
 * fresh numbered project per call, holding the files asked for.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

/** Files by path relative to their folder: text, or bytes. */
export type Files = Record<string, string | Uint8Array>;

/** Writes `files` under `dir`, making the folders they need (and `dir` itself). */
export function writeFiles(dir: string, files: Files): string {
  mkdirSync(dir, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), content);
  }
  return dir;
}

/**
 * Sets the modification times of `root`, of the files at `rels` and of every folder between them an hour back: a
 * project that existed before the agent started (outside the file cache's racy window).
 */
export function backdate(root: string, rels: readonly string[]): void {
  const hourAgo = new Date(Date.now() - 3_600_000);
  const paths = new Set([
    root,
    ...rels.flatMap((rel) => {
      const parts = rel.split("/");
      return parts.map((_, i) => join(root, ...parts.slice(0, i + 1)));
    }),
  ]);
  for (const p of [...paths].sort().reverse()) utimesSync(p, hourAgo, hourAgo);
}

/**
 * A base folder in the system's temporary folder (named from `prefix`, its real path), removed after the test
 * file; `project(files)` makes `p1`, `p2`, … in it, and `outside(files)` a folder beside the latest project.
 */
export function tempProjects(prefix: string) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  let count = 0;
  return {
    base,
    /** A fresh project folder with `files`; `hourAgo`: its times set an hour back ({@link backdate}). */
    project(files: Files = {}, options: { hourAgo?: boolean } = {}): string {
      count += 1;
      const root = writeFiles(join(base, `p${count}`), files);
      if (options.hourAgo) backdate(root, Object.keys(files));
      return root;
    },
    /** A folder outside the latest project (beside it in the base folder), with `files`. */
    outside(files: Files = {}): string {
      return writeFiles(join(base, `out${count}`), files);
    },
  };
}
