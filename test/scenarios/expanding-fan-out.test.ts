/**
 * Issue 43, class 10 (an expanding fan-out: the model sends `[a]`, then `[a, b]`, `[a, b, c]`, `[a, b, c, d]`, each
 * response re-issuing every earlier read with one new one): the repeats were blocked, and the strikes they added
 * stopped the run at the 4th response, so its new call `d` never ran. A response with a new call makes progress: its
 * new calls run, its repeats are blocked, and it never asks a person or ends the run — its strikes stay below level 3.
 * A response of repeats alone still escalates. Through createAgent, createReactAgent and replay.
 */
import { describe, expect, it } from "vitest";
import { ADAPTERS, runScenario, same, step, stopAt } from "./support.js";

const FILES = ["a.py", "b.py", "c.py", "d.py", "e.py", "f.py"];
const read = (path: string) => step("read_file", { path });
const tools = [same("read_file", "x = 1\n")];
/** Response k (1-based): the first k files. */
const fanOut = (k: number) => FILES.slice(0, k).map(read);

describe.each(ADAPTERS)("an expanding fan-out, through %s", (adapter) => {
  it("every new call of each response runs; the repeats are blocked; the run is not stopped", async () => {
    const script = FILES.map((_, i) => fanOut(i + 1));
    const r = await runScenario(adapter, tools, script);
    expect(stopAt(r)).toBeUndefined();
    expect(r.ran.read_file).toBe(FILES.length); // each file read once, by the response that added it
    // The last call of each response is its new one.
    let at = 0;
    for (let k = 1; k <= FILES.length; k += 1) {
      at += k;
      expect(r.outcomes[at - 1]).toBe("ran");
    }
    expect(r.outcomes.filter((o) => o !== "ran").every((o) => /@[12]$/.test(o))).toBe(true);
  });

  it("then the same reads with nothing new: repeats alone escalate, and the run stops", async () => {
    const script = [...FILES.slice(0, 3).map((_, i) => fanOut(i + 1)), fanOut(3), fanOut(3), fanOut(3), fanOut(3)];
    const r = await runScenario(adapter, tools, script);
    expect(stopAt(r)).toBeDefined();
    expect(r.ran.read_file).toBe(3);
  });
});
