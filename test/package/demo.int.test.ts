import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

describe("npm run demo", () => {
  it("walks through the four scenarios and marks each block with its level", async () => {
    const { stdout } = await run(process.execPath, ["--import", "tsx", "examples/demo.ts"], {
      cwd: join(import.meta.dirname, "..", ".."),
      env: { ...process.env, NO_COLOR: "1" },
      timeout: 60_000,
    });
    const verdicts = stdout
      .split("\n")
      .filter((l) => /^\s+\d+\. /.test(l))
      .map((l) => (l.includes("✗ BLOCKED") ? (l.match(/level (\d)/)?.[1] ?? "?") : "ran"));
    expect(verdicts).toEqual([
      ...["ran", "1", "ran", "3"], // scenario 1
      ...["ran", "1", "ran", "ran"], // scenario 2
      ...["ran", "1", "ran", "ran", "ran", "ran", "ran", "ran", "2"], // scenario 3
      ...["ran", "ran", "3", "ran"], // scenario 4
      ...["ran", "1"], // two identical calls in one message
    ]);
    expect(stdout).toContain("What a blocked call looks like to the model");
    expect(stdout).toContain("What will you do differently?");
    // Scenario 5: seed 003's four escalation levels, the interrupt answered and resumed.
    const levels = [...stdout.matchAll(/BLOCKED, level (\d)/g)].map((m) => m[1]);
    expect(levels).toEqual(["1", "2", "3", "4"]);
    expect(stdout).toContain("level 3 · interrupt() — the run waits for a person");
    expect(stdout).toContain("the model reads: The user answered: pygame is not installed here.");
    expect(stdout).toMatch(
      /level 4 · run ended, the final AI message:\n\s+│ I stopped this run because I kept repeating one step/,
    );
  });
});
