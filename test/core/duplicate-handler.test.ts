/** Seed 003 (duplicate-call learning): the DuplicateHandler core. Wiring into the graph is issue 6's next part. */
import { describe, expect, it } from "vitest";
import { DuplicateHandler } from "../../src/classes/index.js";
import { levelFor, similarityRatio } from "../../src/core/index.js";
import { GuardOptionsError } from "../../src/index.js";

describe("seed 003 test cases", () => {
  it("duplicate feedback includes the previous result and asks what will be different", () => {
    const handler = new DuplicateHandler();
    const feedback = handler.handleDuplicate(
      "filesystem.write_file",
      { path: "x.py", content: "..." },
      '{"error": "diagnostics_failed"}',
    );
    expect(feedback).toContain("diagnostics_failed");
    expect(feedback).toContain("What will you do differently");
    expect(feedback.startsWith("[DUPLICATE TOOL CALL BLOCKED]\nTool: filesystem.write_file\nArguments: {")).toBe(true);
  });

  it("acknowledgment is required: a retry is not one, a new plan is", () => {
    const handler = new DuplicateHandler();
    handler.handleDuplicate("tool", {}, "result");
    expect(handler.validateResponse("Let me try writing the file again")).toBe(false);
    expect(handler.pendingAcknowledgment).toBe(true);
    expect(handler.validateResponse("Instead, I will check if pygame is installed first")).toBe(true);
    expect(handler.pendingAcknowledgment).toBe(false);
  });

  it("escalates with repeated duplicates: each duplicate gets a stronger level", () => {
    const handler = new DuplicateHandler();
    const levels = [1, 2, 3, 4, 5].map(() => {
      handler.handleDuplicate("tool", { a: 1 }, "same");
      return handler.escalationLevel;
    });
    expect(levels).toEqual([1, 2, 3, 4, 4]);
    expect(handler.blockedCalls.map((b) => b.level)).toEqual([1, 2, 3, 4, 4]);
  });
});

describe("DuplicateHandler", () => {
  it("the strikes per level are configurable and must increase", () => {
    const handler = new DuplicateHandler({ levelStrikes: [1, 3, 5, 7] });
    const levels = Array.from({ length: 7 }, () => {
      handler.handleDuplicate("t", {}, "r");
      return handler.escalationLevel;
    });
    expect(levels).toEqual([1, 1, 2, 2, 3, 3, 4]);
    expect(levelFor(0, [1, 2, 3, 4])).toBe(0);
    expect(() => new DuplicateHandler({ levelStrikes: [2, 2, 3, 4] })).toThrow(GuardOptionsError);
  });

  it("blocked calls carry timestamps; the feedback cuts long arguments and results", () => {
    let now = 1_000;
    const handler = new DuplicateHandler({ clock: () => (now += 1) });
    const feedback = handler.handleDuplicate("t", { big: "x".repeat(900) }, "y".repeat(3000), false);
    expect(handler.blockedCalls[0]?.at).toBe(1_001);
    expect(feedback).toContain("more characters]");
    expect(feedback).toContain("- The previous attempt already failed");
    expect(feedback.length).toBeLessThan(2400);
  });

  it("a next action that differs from every blocked call also acknowledges; repeating one does not", () => {
    const handler = new DuplicateHandler();
    handler.handleDuplicate("read_file", { path: "a.py" }, "x");
    expect(handler.validateResponse("", [{ tool: "read_file", args: { path: "a.py" } }])).toBe(false);
    expect(handler.validateResponse("", [{ tool: "read_file", args: { path: "b.py" } }])).toBe(true);
  });

  it("near-duplicate writes: same path and 95% similar content are one call; 50% similar are not", () => {
    const handler = new DuplicateHandler();
    const base = "abcdefghij".repeat(10); // 100 letters
    const replace = (n: number) => `${"0".repeat(n)}${base.slice(n)}`; // n letters become digits: LCS = 100 - n
    expect(similarityRatio(base, replace(5))).toBe(0.95);
    expect(similarityRatio(base, replace(50))).toBe(0.5);
    const write = (path: string, content: string) => ({ tool: "write_to_file", args: { path, content } });
    expect(handler.isSemanticallyDuplicate(write("x.py", base), write("./x.py", replace(5)))).toBe(true);
    expect(handler.isSemanticallyDuplicate(write("x.py", base), write("x.py", replace(50)))).toBe(false);
    expect(handler.isSemanticallyDuplicate(write("x.py", base), write("y.py", base))).toBe(false);
  });

  it("per-tool keys decide which arguments matter for other tools", () => {
    const handler = new DuplicateHandler({ keys: { update_order: ["order_id"] } });
    const a = { tool: "update_order", args: { order_id: "#W1", items: ["a"] } };
    const b = { tool: "update_order", args: { order_id: "#W1", items: ["b", "c"] } };
    expect(handler.isSemanticallyDuplicate(a, b)).toBe(true);
    expect(new DuplicateHandler().isSemanticallyDuplicate(a, b)).toBe(false);
  });

  it("round-trips through JSON, and reset forgets the strikes", () => {
    const handler = new DuplicateHandler();
    handler.handleDuplicate("t", { n: 1n }, "r");
    const copy = DuplicateHandler.fromJSON(JSON.parse(JSON.stringify(handler.toJSON())));
    expect(copy.strikes).toBe(1);
    expect(copy.pendingAcknowledgment).toBe(true);
    copy.reset();
    expect(copy.escalationLevel).toBe(0);
  });
});
