/**
 * A write killed with `kill -9` between creating its temporary file and renaming it leaves `.<name>.<pid>-<random>.tmp`
 * behind. A later write in that folder removes such a file once its process is gone and it is ten minutes old; it
 * leaves alone a write in progress (its process runs, or its file is recent) and every other file.
 */
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LEFTOVER_AGE_MS, sweepLeftovers } from "../../src/fs/atomic-write.js";
import { tempProjects } from "../support/projects.js";
import { directTools } from "./direct.js";

const { project } = tempProjects("lgg-leftovers-");

/** The id of a process that has ended. */
const gonePid = (): number => {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(r.stdout);
};
const hex = "0123456789ab";

/** Makes `name` in `root`, its times `ageMs` back. */
function leftover(root: string, name: string, ageMs: number): string {
  const path = join(root, name);
  writeFileSync(path, "half of a write");
  const then = new Date(Date.now() - ageMs);
  utimesSync(path, then, then);
  return name;
}

describe("temporary files a killed write left", () => {
  it("are removed by the next write in their folder once their process is gone and they are old", async () => {
    const root = project({ "a.txt": "old\n", "sub/b.txt": "old\n" });
    const dead = gonePid();
    const hour = 3_600_000;
    const stale = [
      leftover(root, `.a.txt.${dead}-${hex}.tmp`, hour),
      leftover(root, `.other.py.${dead}-${hex}.tmp`, hour), // another file's: the folder is swept
    ];
    const kept = [
      leftover(root, `.a.txt.${dead}-ba9876543210.tmp`, 60_000), // recent: may be a write in progress elsewhere
      leftover(root, `.a.txt.${process.ppid}-${hex}.tmp`, hour), // its process runs
      leftover(root, `.a.txt.${process.pid}-${hex}.tmp`, hour), // this process's own
      leftover(root, ".notes.tmp", hour), // not a name the tools make
      leftover(root, `.a.txt.${dead}-xyz.tmp`, hour),
      leftover(root, `a.txt.${dead}-${hex}.tmp`, hour),
    ];
    const inSub = leftover(join(root, "sub"), `.b.txt.${dead}-${hex}.tmp`, hour); // another folder: not swept yet
    const { call } = directTools(root);
    expect((await call("write_to_file", { path: "a.txt", content: "new\n" })).status).toBe("success");
    const names = readdirSync(root);
    for (const name of stale) expect(names, name).not.toContain(name);
    for (const name of kept) expect(names, name).toContain(name);
    expect(existsSync(join(root, "sub", inSub))).toBe(true);
    expect((await call("write_to_file", { path: "sub/b.txt", content: "new\n" })).status).toBe("success");
    expect(existsSync(join(root, "sub", inSub))).toBe(false);
    // Nothing else changed: the files, the leftovers kept, and no temporary file of the two writes.
    expect(readdirSync(root).sort()).toEqual(["a.txt", "sub", ...kept].sort());
  });

  it("sweeps a folder at most once per ten minutes", () => {
    const root = project();
    const dead = gonePid();
    const fd = openSync(root, "r");
    const folder = { fd, at: (name: string) => join(root, name) };
    try {
      const t0 = Date.now();
      leftover(root, `.x.${dead}-${hex}.tmp`, 2 * LEFTOVER_AGE_MS);
      expect(sweepLeftovers(folder, t0)).toBe(1);
      leftover(root, `.y.${dead}-${hex}.tmp`, 2 * LEFTOVER_AGE_MS);
      expect(sweepLeftovers(folder, t0 + LEFTOVER_AGE_MS - 1)).toBe(0);
      expect(sweepLeftovers(folder, t0 + LEFTOVER_AGE_MS)).toBe(1);
      expect(readdirSync(root)).toEqual([]);
    } finally {
      closeSync(fd);
    }
  });
});
