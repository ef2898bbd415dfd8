import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

describe("npm run demo", () => {
  it("walks through the four scenarios and marks each block with its rule", async () => {
    const { stdout } = await run(process.execPath, ["--import", "tsx", "examples/demo.ts"], {
      cwd: join(import.meta.dirname, "..", ".."),
      env: { ...process.env, NO_COLOR: "1" },
      timeout: 60_000,
    });
    const verdicts = stdout
      .split("\n")
      .filter((l) => /^\s+\d+\. /.test(l))
      .map((l) => (l.includes("✗ BLOCKED") ? (l.match(/rule (\w+)/)?.[1] ?? "?") : "ran"));
    expect(verdicts).toEqual([
      ...["ran", "consecutive", "ran", "redundant"], // scenario 1
      ...["ran", "consecutive", "ran", "ran"], // scenario 2
      ...["ran", "consecutive", "ran", "ran", "ran", "ran", "ran", "ran", "threshold"], // scenario 3
      ...["ran", "ran", "redundant", "ran"], // scenario 4
      ...["ran", "consecutive"], // two identical calls in one message
    ]);
    // The totals come from guardMetrics(), and agree with the lines above: 16 calls ran, 7 were blocked.
    expect(stdout).toContain(
      "Totals (guardMetrics): 16 calls ran, 7 blocked (consecutive: 4, redundant: 2, threshold: 1)",
    );
    expect(verdicts.filter((v) => v === "ran")).toHaveLength(16);
    // Words a user knows (no spec seeds, no node names), and one set of tool names from the first scenario to the last.
    expect(stdout).not.toMatch(/\bseed\b|post_model_hook/);
    const tools = [
      ...stdout.matchAll(/^\s+\d+\. (\w+)\(/gm),
      ...stdout.matchAll(/→ (\w+)$/gm),
      ...stdout.matchAll(/^\s+(\w+): (?:ran|BLOCKED)/gm),
    ].map((m) => m[1]);
    expect(tools.length).toBeGreaterThan(25);
    expect(new Set(tools)).toEqual(new Set(["read_file", "list_files", "write_to_file", "search_in_file"]));
    expect(stdout).toContain("What a blocked call looks like to the model");
    expect(stdout).toContain("What will you do differently?");
    // Scenario 5: the four escalation levels, the interrupt answered and resumed.
    const levels = [...stdout.matchAll(/BLOCKED, level (\d)/g)].map((m) => m[1]);
    expect(levels).toEqual(["1", "2", "2", "3", "4"]); // level 2 twice: no person is asked before the 5th identical call
    expect(stdout).toContain("level 3 · interrupt() — the run waits for a person");
    expect(stdout).toContain("the model reads: The user answered: pygame is not installed here.");
    // Level 4: the final message is the model's own wrap-up; the guards' explanation is in its metadata (guardVerdict).
    expect(stdout).toMatch(
      /level 4 · run ended, the final AI message \(the model's own wrap-up, tools off\):\n\s+│ I have to stop here\./,
    );
    expect(stdout).toMatch(/the guards' reason \(guardVerdict\): I stopped this run because I kept repeating one step/);
  });
});
