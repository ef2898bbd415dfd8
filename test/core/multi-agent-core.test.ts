/**
 * Issue 47, the pure parts: the task's budget (every limit), the hand-off count, whose memory a channel value is
 * (the reducers' rule), and the agent read from a checkpoint namespace.
 */
import { describe, expect, it } from "vitest";
import { agentOf, ownValue, wholeValueStands } from "../../src/common/owner.js";
import { handoffsWithoutProgress, type RunStep } from "../../src/loop/core/handoffs.js";
import type { TaskSpending } from "../../src/loop/core/loop.js";
import { emptyLoopState } from "../../src/loop/core/loop.js";
import { reduceLoopState } from "../../src/loop/core/state-check.js";
import { readTaskBudget, spendTask } from "../../src/loop/core/task-budget.js";
import { emptyToolGuardState, reduceToolGuard } from "../../src/tool-calls/core/state.js";

const none: TaskSpending = { iterations: 0, tokens: 0, cost: 0, startedAt: null };

describe("the task's budget", () => {
  it("iterations: N turns together, the next one that calls tools is stopped; an answer is never stopped", () => {
    let spent = none;
    for (let i = 0; i < 3; i += 1) {
      const step = spendTask(spent, { continues: true }, { maxIterations: 3 }, undefined, 0);
      expect(step.stop).toBeNull();
      spent = step.spent;
    }
    expect(spendTask(spent, { continues: false }, { maxIterations: 3 }, undefined, 0).stop).toBeNull();
    const stopped = spendTask(spent, { continues: true }, { maxIterations: 3 }, undefined, 0);
    expect(stopped.stop).toMatchObject({ kind: "iterations", value: 3, limit: 3, task: true });
    expect(stopped.spent.iterations).toBe(4); // a stopped turn still counts: the next agent finds the budget spent
  });

  it("tokens, cost (priced by the agent's own table) and runtime", () => {
    const usage = { input_tokens: 600, output_tokens: 400 };
    const price = { inputPerMillion: 1_000, outputPerMillion: 1_000 }; // $1 a 1,000 tokens
    const first = spendTask(none, { continues: true, usage }, { maxTokens: 1_500, maxCost: 1.5 }, price, 0);
    expect(first).toMatchObject({ stop: null, spent: { tokens: 1_000, cost: 1, startedAt: 0 } });
    const second = spendTask(first.spent, { continues: true, usage }, { maxTokens: 1_500 }, price, 0);
    expect(second.stop).toMatchObject({ kind: "tokens", value: 2_000, limit: 1_500 });
    const costly = spendTask(first.spent, { continues: true, usage }, { maxCost: 1.5 }, price, 0);
    expect(costly.stop).toMatchObject({ kind: "cost", value: 2, limit: 1.5 });
    const late = spendTask(first.spent, { continues: true }, { maxRuntimeMs: 60_000 }, undefined, 60_000);
    expect(late.stop).toMatchObject({ kind: "runtime", value: 60_000, limit: 60_000 });
    expect(late.stop?.message).toBe(
      "Stopped: the task's runtime budget was reached (1 min of 1 min, shared by every agent of the task).",
    );
  });

  it("a bad budget is refused with the field named", () => {
    expect(() => readTaskBudget({ maxIterations: 0 })).toThrow(/taskBudget[\s\S]*maxIterations/);
    expect(() => readTaskBudget({ maxTurns: 5 })).toThrow(/unrecognized option: maxTurns/);
  });
});

describe("hand-offs without progress", () => {
  const same = (a: string, b: string) => a === b;
  const h: RunStep = { kind: "handoff" };
  const said = (text: string): RunStep => ({ kind: "words", text });

  it("counts back to the last work or new words", () => {
    expect(handoffsWithoutProgress([h, h, h], same)).toBe(3);
    expect(handoffsWithoutProgress([h, { kind: "work" }, h, h], same)).toBe(2);
    expect(handoffsWithoutProgress([h, said("cannot"), h, said("cannot"), h], same)).toBe(2); // the 2nd "cannot" is old
    expect(handoffsWithoutProgress([said("draft 1"), h, said("draft 2"), h], same)).toBe(1);
    expect(handoffsWithoutProgress([], same)).toBe(0);
  });
});

describe("whose memory a channel value is", () => {
  it("reads the agent from the checkpoint namespace: the nodes around the running one, task ids dropped", () => {
    expect(agentOf({ checkpoint_ns: "model_request:1f2e" })).toBe("");
    expect(agentOf({ checkpoint_ns: "tools:9a|model_request:1f2e" })).toBe("tools");
    expect(agentOf({ checkpoint_ns: "outer:1|worker_a:2|tools:3" })).toBe("outer|worker_a");
    expect(agentOf({ checkpoint_ns: "" })).toBe("");
    expect(agentOf({})).toBeUndefined();
    expect(agentOf(undefined)).toBeUndefined();
  });

  it("another agent's value is read as none; untagged values are anyone's", () => {
    expect(ownValue({ agent: "" }, "tools")).toBeUndefined();
    expect(ownValue({ agent: "tools" }, "tools")).toEqual({ agent: "tools" });
    expect(ownValue({}, "tools")).toEqual({});
    expect(ownValue({ agent: "" }, undefined)).toEqual({ agent: "" });
  });

  it("the loop guard's reducer: another agent's whole state is ignored unless it claims the current one", () => {
    const parent = { ...emptyLoopState(), iterations: 3, agent: "" };
    const child = { ...emptyLoopState(), iterations: 1, agent: "tools" };
    expect(wholeValueStands(parent, child)).toBe(false);
    expect(reduceLoopState(parent, child)).toBe(parent); // the sub-agent's final state, back in the parent
    const claimed = reduceLoopState(parent, { ...child, claims: "" } as typeof child);
    expect(claimed).toEqual(child); // the sub-agent's first write over what it was handed; the claim is not kept
    expect(reduceLoopState(child, { ...child, iterations: 2 }).iterations).toBe(2);
  });

  it("the tool-call guards' reducer: an agent event forgets another agent's state; a foreign whole state is ignored", () => {
    const parent = reduceToolGuard(emptyToolGuardState(), [
      { type: "agent", agent: "" },
      { type: "run", run: "h1", keep: { operations: true, strikes: true } },
    ]);
    expect(parent).toMatchObject({ agent: "", run: "h1" });
    const child = reduceToolGuard(parent, [{ type: "agent", agent: "tools" }]);
    expect(child.agent).toBe("tools");
    expect(child.run).toBeUndefined(); // nothing of the parent's stays
    expect(reduceToolGuard(parent, child)).toBe(parent);
    expect(reduceToolGuard(parent, [{ type: "agent", agent: "" }])).toEqual(parent); // its own: nothing changes
  });
});
