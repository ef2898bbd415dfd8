/**
 * Issue 63, "Why 6b" (AWS StuckGuard steers an agent when 5 of its last 6 commands fail alike): six different
 * `git push` variants failing with the byte-identical "! [rejected] main -> main (fetch first)" got no word from the
 * guards (a shell's arguments are whole commands, so the same-error block never applies to it). Now a byte-identical
 * non-empty failure across 5 of the last 6 shell commands earns a reminder after the answer; it never blocks.
 * Through createAgent, createReactAgent and replay.
 */
import { describe, expect, it } from "vitest";
import { ADAPTERS, type FakeTool, runScenario, step } from "./support.js";

const REJECTED = [
  "To github.com:acme/app.git",
  " ! [rejected]        main -> main (fetch first)",
  "error: failed to push some refs to 'github.com:acme/app.git'",
].join("\n");
const PUSHES = [
  "git push",
  "git push origin main",
  "git push -u origin main",
  "git push origin HEAD:main",
  "git push --set-upstream origin main",
  "git push origin main --verbose",
];
const NOTE = "[SAME FAILURE]";

const shell: FakeTool = { name: "bash", respond: () => REJECTED, fails: () => true };
const noted = (answers: string[]) => answers.map((a) => a.includes(NOTE));

describe.each(ADAPTERS)("the same failure across shell commands, through %s", (adapter) => {
  it("six git push variants answering the same rejection: all run, the 5th and 6th answers carry the note", async () => {
    const r = await runScenario(
      adapter,
      [shell],
      PUSHES.map((command) => step("bash", { command })),
    );
    expect(r.outcomes.every((o) => o === "ran" || o === "failed")).toBe(true);
    expect(r.outcomes).toHaveLength(6);
    expect(noted(r.answers)).toEqual([false, false, false, false, true, true]);
    expect(r.answers[4]).toContain(REJECTED); // the tool's own answer first, then the note
    expect(r.strikes).toBe(0);
  });

  it("different failures, or one success between them, earn no note", async () => {
    const mixed: FakeTool = {
      name: "bash",
      respond: (n) => (n === 3 ? "Everything up-to-date" : REJECTED),
      fails: (n) => n !== 3,
    };
    const r = await runScenario(
      adapter,
      [mixed],
      PUSHES.slice(0, 5).map((command) => step("bash", { command })),
    );
    expect(noted(r.answers)).toEqual([false, false, false, false, false]);
  });
});
