/**
 * Another process that swaps a folder of a project for a symlink to an outside folder and back, as fast as it can,
 * until it is stopped: the attacker of the race tests (issue 35, items 7 and 8). A plain Node process (no tsx), so
 * that it starts at once and runs truly alongside the tools.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * The loop: `dir` is renamed aside (to `hold`), a symlink to `outside` is renamed into its place, then the link is
 * moved away and the real folder put back. A real folder that a write made at `dir` while it was missing is moved to
 * a fresh name inside the project (`dir.extraN`), so the swapping never stops.
 */
const SCRIPT = `
const fs = require("node:fs");
const [dir, hold, link, outside] = process.argv.slice(1);
const quiet = (f) => { try { f(); return true; } catch { return false; } };
const kind = (p) => { try { return fs.lstatSync(p).isSymbolicLink() ? "link" : "real"; } catch { return "none"; } };
let extra = 0;
const aside = (p) => quiet(() => fs.renameSync(p, p + ".extra" + ++extra));
const spin = () => { for (let i = 0; i < 20; i += 1) kind(dir); };
process.stdout.write("ready\\n");
for (;;) {
  // The link in place of the real folder (parked at hold).
  if (kind(dir) === "real" && !quiet(() => fs.renameSync(dir, hold))) aside(dir);
  if (kind(link) === "none") quiet(() => fs.symlinkSync(outside, link));
  quiet(() => fs.renameSync(link, dir));
  spin();
  // The real folder back (a folder a write made while dir was missing goes aside, inside the project).
  if (kind(dir) === "link") quiet(() => fs.renameSync(dir, link));
  if (kind(dir) === "real") aside(dir);
  quiet(() => fs.renameSync(hold, dir));
  spin();
}
`;

/** A running swapper; `stop` kills it (SIGKILL) and waits for its end. */
export interface Swapper {
  stop(): Promise<void>;
}

/**
 * Starts swapping `root/name` for a symlink to `outside` (absolute); resolves once the loop runs.
 *
 * @example
 * ```ts
 * const swapper = await startSwapper(root, "d", outside);
 * try { await writes(); } finally { await swapper.stop(); }
 * ```
 */
export async function startSwapper(root: string, name: string, outside: string): Promise<Swapper> {
  const args = [join(root, name), join(root, `${name}.hold`), join(root, `${name}.link`), outside];
  const child: ChildProcess = spawn(process.execPath, ["-e", SCRIPT, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((ready, failed) => {
    child.stdout?.once("data", () => ready());
    child.once("error", failed);
  });
  const ended = new Promise<void>((done) => child.once("exit", () => done()));
  return {
    stop: async () => {
      child.kill("SIGKILL");
      await ended;
    },
  };
}

/**
 * Every path below `dir` (relative to it, `/`-separated), without following a symlink: what a race left there.
 *
 * @example
 * ```ts
 * expect(everything(outside)).toEqual(["marker.txt"]);
 * ```
 */
export function everything(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const rel = prefix === "" ? name : `${prefix}/${name}`;
    out.push(rel);
    const stat = lstatSync(join(dir, name));
    if (stat.isDirectory()) out.push(...everything(join(dir, name), rel));
  }
  return out;
}
