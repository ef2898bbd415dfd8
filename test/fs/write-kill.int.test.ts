/**
 * Issue 35: `kill -9` during a write leaves the old or the new content, never a mix or a truncated file. Child
 * processes (test/fs/write-child.ts) write a large file through `write_to_file` in a loop, A, B, A, ...; each is
 * killed with SIGKILL at a random moment, and the file must then be exactly A or exactly B.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LEFTOVER_AGE_MS } from "../../src/fs/atomic-write.js";
import { rng } from "../support/random.js";
import { directTools } from "./direct.js";
import { contentOf } from "./write-child.js";

const repo = join(import.meta.dirname, "..", "..");
const root = realpathSync(mkdtempSync(join(tmpdir(), "lgg-kill-write-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** 8 MB: a write takes long enough that most kills land inside one. */
const SIZE = 8 * 1024 * 1024;
const A = contentOf("A", SIZE);
const B = contentOf("B", SIZE);

/** Starts a child writing `file` in a loop; resolves once it says it is writing. */
async function writer(file: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/fs/write-child.ts", "loop", root, file, `${SIZE}`], {
    cwd: repo,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stderr?.on("data", (d) => {
    out += String(d);
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (d) => {
      if (String(d).includes("ready")) resolve();
    });
    child.on("exit", (code) => reject(new Error(`the writer exited (${code}) before it was ready: ${out}`)));
  });
  return child;
}

describe("kill -9 during a write", () => {
  it("leaves the file exactly its old or its new content, at random kill points", async ({ annotate }) => {
    const seed = Number(process.env.KILL_SEED ?? Date.now() % 100_000);
    const next = rng(seed);
    const outcomes: string[] = [];
    for (let round = 0; round < 4; round += 1) {
      const files = [0, 1, 2].map((i) => `big-${round}-${i}.txt`);
      for (const file of files) writeFileSync(join(root, file), A);
      const children = await Promise.all(files.map(writer));
      await Promise.all(
        children.map(async (child, i) => {
          const delay = Math.floor(next() * 600);
          await new Promise((resolve) => setTimeout(resolve, delay));
          const exited = once(child, "exit");
          child.kill("SIGKILL");
          await exited;
          const content = readFileSync(join(root, files[i] as string), "latin1");
          const verdict = content === A ? "A" : content === B ? "B" : `neither (${content.length} bytes)`;
          outcomes.push(`${files[i]} killed after ${delay} ms: ${verdict}`);
        }),
      );
    }
    const bad = outcomes.filter((o) => o.includes("neither"));
    expect(bad, `seed ${seed}:\n${outcomes.join("\n")}`).toEqual([]);
    // A kill can leave a temporary file behind (never the file itself half-written); say how many, for the record.
    const temps = readdirSync(root).filter((name) => name.endsWith(".tmp"));
    await annotate(`kill -9 writes, seed ${seed}: ${outcomes.length} kills, ${temps.length} temporary files left`);
    // Ten minutes later, the next write in the folder removes them: their processes are gone.
    const then = new Date(Date.now() - LEFTOVER_AGE_MS);
    for (const name of temps) utimesSync(join(root, name), then, then);
    const { call } = directTools(root);
    expect((await call("write_to_file", { path: "after.txt", content: "x\n" })).status).toBe("success");
    expect(readdirSync(root).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  }, 120_000); // 12 children start tsx (about 1 s each, 4 s on a loaded machine)
});
