/**
 * Seed 000 (redundancy protection): the four example scenarios and the level 2/level 3 examples, through the
 * classes (as in the seed's integration example) and through a createReactAgent graph with a scripted model.
 */
import { describe, expect, it } from "vitest";
import { OperationContext, ToolRepetitionDetector } from "../../src/classes/index.js";
import { call, runTurns } from "../support/helpers.js";

const CONSECUTIVE =
  "⚠️ CRITICAL: Tool 'read_file' called with IDENTICAL inputs back-to-back! This is wasteful and indicates you're stuck. The operation context shows you ALREADY have this information. STOP and use a DIFFERENT approach.";
const THRESHOLD =
  "Tool 'read_file' has been called 4 times with identical inputs. Please try a different approach or tool to avoid getting stuck in a loop.";
const REDUNDANT =
  "⚠️ REDUNDANT OPERATION BLOCKED: Tool 'read_file' was already successfully executed with these inputs. The information you need is in your scratchpad from the previous successful call. Check your Recent Tool Operations and use the existing information.";

/** The seed's integration example: levels 1 and 2, then level 3; the caller records outcomes. */
function seedValidator(options: { repetitionThreshold?: number; windowSize?: number } = {}) {
  const detector = new ToolRepetitionDetector(options);
  const context = new OperationContext({ tools: { create_subtask: { invalidates: "none" } } });
  return {
    validate(tool: string, input: Record<string, unknown>): string {
      if (!detector.check(tool, input)) {
        return detector.isConsecutiveDuplicate(tool, input) ? "consecutive" : "threshold";
      }
      if (context.hasRecentOperation(tool, input)) return "redundant";
      return "allowed";
    },
    ran(tool: string, input: Record<string, unknown>, success: boolean, result = "ok") {
      context.recordOperation(tool, input, { success, result });
    },
  };
}

describe("seed 000 through the classes", () => {
  it("scenario 1: reading the same file multiple times", () => {
    const v = seedValidator();
    expect(v.validate("read_file", { path: "config.py" })).toBe("allowed");
    v.ran("read_file", { path: "config.py" }, true, "DEBUG = True");
    expect(v.validate("read_file", { path: "config.py" })).toBe("consecutive");
    expect(v.validate("list_files", { path: "./" })).toBe("allowed");
    v.ran("list_files", { path: "./" }, true);
    expect(v.validate("read_file", { path: "config.py" })).toBe("redundant");
  });

  it("scenario 2: retrying failed operations", () => {
    const v = seedValidator();
    expect(v.validate("read_file", { path: "missing.py" })).toBe("allowed");
    v.ran("read_file", { path: "missing.py" }, false, "file not found");
    expect(v.validate("read_file", { path: "missing.py" })).toBe("consecutive");
    expect(v.validate("write_to_file", { path: "other.py", content: "x" })).toBe("allowed");
    v.ran("write_to_file", { path: "other.py", content: "x" }, true);
    expect(v.validate("read_file", { path: "missing.py" })).toBe("allowed");
  });

  it("scenario 3: write operations", () => {
    const v = seedValidator();
    const c1 = { path: "app.py", content: "content1" };
    expect(v.validate("write_to_file", c1)).toBe("allowed");
    expect(v.validate("write_to_file", c1)).toBe("consecutive");
    expect(v.validate("write_to_file", { path: "app.py", content: "content2" })).toBe("allowed");
    expect(v.validate("write_to_file", c1)).toBe("allowed"); // 2nd in window: under the threshold
  });

  it("scenario 4: search operations", () => {
    const v = seedValidator();
    for (const [input, expected] of [
      [{ pattern: "TODO", path: "app.py" }, "allowed"],
      [{ pattern: "FIXME", path: "app.py" }, "allowed"],
      [{ pattern: "TODO", path: "app.py" }, "redundant"],
      [{ pattern: "TODO", path: "main.py" }, "allowed"],
    ] as const) {
      expect(v.validate("search_in_file", input)).toBe(expected);
      if (expected === "allowed") v.ran("search_in_file", input, true);
    }
  });

  it("level 2 example: the 4th identical call within the window is blocked with the seed's message", () => {
    const detector = new ToolRepetitionDetector({ repetitionThreshold: 3 });
    const app = { path: "app.py" };
    expect(detector.check("read_file", app)).toBe(true);
    expect(detector.check("list_files", { path: "./" })).toBe(true);
    expect(detector.check("read_file", app)).toBe(true);
    expect(detector.check("write_to_file", { path: "b.py", content: "" })).toBe(true);
    expect(detector.check("read_file", app)).toBe(true);
    expect(detector.check("search_in_file", { pattern: "x", path: "a.py" })).toBe(true);
    const verdict = detector.evaluate("read_file", app);
    expect(verdict).toEqual({ allowed: false, level: "threshold", count: 4, message: THRESHOLD });
    expect(detector.isConsecutiveDuplicate("read_file", app)).toBe(false);
  });

  it("level 1 message names the tool, word for word", () => {
    const detector = new ToolRepetitionDetector();
    detector.check("read_file", { path: "config.py" });
    expect(detector.evaluate("read_file", { path: "config.py" }).message).toBe(CONSECUTIVE);
  });

  it("level 3 example: a read is redundant after a subtask and a write to another file", () => {
    const v = seedValidator();
    expect(v.validate("read_file", { path: "models.py" })).toBe("allowed");
    v.ran("read_file", { path: "models.py" }, true);
    expect(v.validate("create_subtask", { title: "t" })).toBe("allowed");
    v.ran("create_subtask", { title: "t" }, true);
    expect(v.validate("write_to_file", { path: "views.py", content: "" })).toBe("allowed");
    v.ran("write_to_file", { path: "views.py", content: "" }, true);
    expect(v.validate("read_file", { path: "models.py" })).toBe("redundant");
  });
});

describe("seed 000 through a createReactAgent graph", () => {
  it("scenario 1: reading the same file multiple times", async () => {
    const { fates } = await runTurns([
      [call("read_file", { path: "config.py" })],
      [call("read_file", { path: "config.py" })],
      [call("list_files", { path: "./" })],
      [call("read_file", { path: "config.py" })],
    ]);
    expect(fates.map((f) => f.fate)).toEqual(["ran", "consecutive", "ran", "redundant"]);
    expect(fates[1]?.content.startsWith(CONSECUTIVE)).toBe(true);
    expect(fates[3]?.content.startsWith(REDUNDANT)).toBe(true);
  });

  it("scenario 2: retrying failed operations", async () => {
    const { fates } = await runTurns([
      [call("read_file", { path: "missing.py" })],
      [call("read_file", { path: "missing.py" })],
      [call("write_to_file", { path: "other.py", content: "x = 1\n" })],
      [call("read_file", { path: "missing.py" })],
    ]);
    expect(fates.map((f) => f.fate)).toEqual(["failed", "consecutive", "ran", "failed"]);
  });

  it("scenario 3: write operations, and the same content again after many operations", async () => {
    const c1 = { path: "app.py", content: "content1" };
    const others = Array.from({ length: 10 }, (_, i) => [call("list_files", { path: `dir${i}` })]);
    const { fates } = await runTurns([
      [call("write_to_file", c1)],
      [call("write_to_file", c1)],
      [call("write_to_file", { path: "app.py", content: "content2" })],
      ...others,
      [call("write_to_file", c1)],
    ]);
    expect(fates.map((f) => f.fate)).toEqual(["ran", "consecutive", "ran", ...others.map(() => "ran"), "ran"]);
  });

  it("scenario 3: the same write a 4th time within the window is blocked by the threshold", async () => {
    const c1 = { path: "app.py", content: "content1" };
    const { fates } = await runTurns([
      [call("write_to_file", c1)],
      [call("list_files", { path: "a" })],
      [call("write_to_file", c1)],
      [call("list_files", { path: "b" })],
      [call("write_to_file", c1)],
      [call("list_files", { path: "c" })],
      [call("write_to_file", c1)],
    ]);
    expect(fates.map((f) => f.fate)).toEqual(["ran", "ran", "ran", "ran", "ran", "ran", "threshold"]);
  });

  it("scenario 4: search operations", async () => {
    const { fates } = await runTurns([
      [call("search_in_file", { pattern: "TODO", path: "app.py" })],
      [call("search_in_file", { pattern: "FIXME", path: "app.py" })],
      [call("search_in_file", { pattern: "TODO", path: "app.py" })],
      [call("search_in_file", { pattern: "TODO", path: "main.py" })],
    ]);
    expect(fates.map((f) => f.fate)).toEqual(["ran", "ran", "redundant", "ran"]);
  });

  it("level 2 example: an agent that keeps retrying a missing file is stopped at the 4th call", async () => {
    const app = { path: "app.py" };
    const files = new Map([["b.py", "b\n"]]);
    const { fates } = await runTurns(
      [
        [call("read_file", app)],
        [call("list_files", { path: "./" })],
        [call("read_file", app)],
        [call("write_to_file", { path: "other.py", content: "" })],
        [call("read_file", app)],
        [call("search_in_file", { pattern: "b", path: "b.py" })],
        [call("read_file", app)],
      ],
      { files },
    );
    expect(fates.map((f) => f.fate)).toEqual(["failed", "ran", "failed", "ran", "failed", "ran", "threshold"]);
    expect(fates[6]?.content.startsWith(THRESHOLD)).toBe(true);
  });

  it("level 2 example with successful reads: level 3 answers first unless it is switched off", async () => {
    const turns = [
      [call("read_file", { path: "app.py" })],
      [call("list_files", { path: "./" })],
      [call("read_file", { path: "app.py" })],
      [call("write_to_file", { path: "other.py", content: "" })],
      [call("read_file", { path: "app.py" })],
      [call("search_in_file", { pattern: "b", path: "main.py" })],
      [call("read_file", { path: "app.py" })],
    ];
    const withRedundancy = await runTurns(turns);
    // The write is to another file, so the read of app.py stays valid: each later read is redundant.
    const expected = ["ran", "ran", "redundant", "ran", "redundant", "ran", "redundant"];
    expect(withRedundancy.fates.map((f) => f.fate)).toEqual(expected);
    const levels12 = await runTurns(turns, { guard: { rules: { redundancy: false } } });
    expect(levels12.fates.map((f) => f.fate)).toEqual(["ran", "ran", "ran", "ran", "ran", "ran", "threshold"]);
  });

  it("level 3 example: create_subtask declared as touching nothing the reads depend on", async () => {
    const { fates } = await runTurns(
      [
        [call("read_file", { path: "models.py" })],
        [call("create_subtask", { title: "add email validation" })],
        [call("write_to_file", { path: "views.py", content: "" })],
        [call("read_file", { path: "models.py" })],
      ],
      { guard: { tools: { create_subtask: { invalidates: "none" } } } },
    );
    expect(fates.map((f) => f.fate)).toEqual(["ran", "ran", "ran", "redundant"]);
  });

  it("an unknown tool may change anything: by default it makes earlier reads stale", async () => {
    const { fates } = await runTurns([
      [call("read_file", { path: "models.py" })],
      [call("create_subtask", { title: "add email validation" })],
      [call("read_file", { path: "models.py" })],
    ]);
    expect(fates.map((f) => f.fate)).toEqual(["ran", "ran", "ran"]);
  });

  it("a blocked call tells the model the arguments and the previous result", async () => {
    const { fates } = await runTurns([
      [call("read_file", { path: "config.py" })],
      [call("read_file", { path: "config.py" })],
    ]);
    const content = fates[1]?.content ?? "";
    expect(content).toContain("Tool: read_file");
    expect(content).toContain('"path": "config.py"');
    expect(content).toContain("Previous result for this exact call:\nDEBUG = True");
    expect(content.endsWith("What will you do differently?")).toBe(true);
  });
});
