/** replayLoopDetector: the loop detector and safety limits over a recorded run, as the live hook sees it. */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it, vi } from "vitest";
import { SafetyGuard } from "../../src/classes/index.js";
import { type LoopState, loopDetectHook } from "../../src/index.js";
import { type ReplayRun, replayGuards, replayLoopDetector } from "../../src/replay/index.js";

const quiet = { warn: () => undefined };
const call = (path: string) => ({ name: "read_file", args: { path } });

/** The turn (1-based among AI messages) at which the live hook stops the messages of a run, or undefined. */
async function liveStopTurn(run: ReplayRun): Promise<number | undefined> {
  const hook = loopDetectHook({ feedback: { logger: quiet, events: false } });
  const messages: BaseMessage[] = [];
  let loopGuard: LoopState | undefined;
  let turn = 0;
  let ids = 0;
  let pending: string[] = [];
  for (const step of run.steps) {
    if (step.role === "user") messages.push(new HumanMessage({ content: step.text, id: `h${ids++}` }));
    else if (step.role === "tool") {
      const id = pending.shift() as string;
      messages.push(new ToolMessage({ content: step.text, tool_call_id: id, status: step.ok ? "success" : "error" }));
    } else {
      turn += 1;
      const tool_calls = (step.tool_calls ?? []).map((c) => ({
        name: c.name,
        args: c.args as Record<string, unknown>,
        id: `c${ids++}`,
      }));
      pending = tool_calls.map((c) => c.id);
      messages.push(new AIMessage({ content: step.text, tool_calls }));
      const update = await hook({ messages, loopGuard });
      loopGuard = update.loopGuard;
      if (update.messages !== undefined) return turn;
    }
  }
  return undefined;
}

describe("replayLoopDetector", () => {
  const looping: ReplayRun = {
    id: "loop",
    steps: [
      { role: "user", text: "Fix it." },
      { role: "assistant", text: "Reading a.", tool_calls: [call("a.py")] },
      { role: "tool", ok: true, text: "x = 1" },
      {
        role: "assistant",
        text: "Now the tests, to see what fails.",
        tool_calls: [{ name: "bash", args: { command: "pytest" } }],
      },
      { role: "tool", ok: false, text: "1 failed" },
      // Turns 3 and 4 repeat turn 1 after other answers (the test's failure, then the file): turn 5 is the first
      // to say and call the same after the same answer (issue 63).
      ...Array.from({ length: 4 }, () => [
        { role: "assistant" as const, text: "Reading a.", tool_calls: [call("a.py")] },
        { role: "tool" as const, ok: true, text: "x = 1" },
      ]).flat(),
      { role: "user", text: "Go on." },
      { role: "assistant", text: "Done.", tool_calls: [] },
    ],
  };

  it("prints nothing of its own, nor does replayGuards, at their defaults (a logger is opt-in)", () => {
    const spies = [
      vi.spyOn(console, "log"),
      vi.spyOn(console, "warn"),
      vi.spyOn(console, "info"),
      vi.spyOn(console, "error"),
      vi.spyOn(process.stdout, "write"),
      vi.spyOn(process.stderr, "write"),
    ];
    try {
      expect(replayLoopDetector(looping).stop?.kind).toBe("loop");
      expect(replayGuards(looping, { loop: {} }).loop?.stop?.kind).toBe("loop");
      const guard = new SafetyGuard();
      guard.detectLoop("Checking the database for user information...");
      expect(guard.detectLoop("Checking the database for user information...")).toBe(true);
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it("stops where the live hook stops, and counts the calls the stop would have saved", async () => {
    const result = replayLoopDetector(looping, { logger: quiet });
    expect(result.stop?.kind).toBe("loop");
    expect(result).toMatchObject({ step: 9, turn: 5, turns: 7, callsAfter: 2 });
    expect(await liveStopTurn(looping)).toBe(result.turn);
  });

  it("starts a new session at each person's message, and counts failed turns in a row", async () => {
    const perMessage: ReplayRun = {
      id: "per-message",
      steps: [0, 1, 2].flatMap((i) => [
        { role: "user" as const, text: `Question ${i}` },
        { role: "assistant" as const, text: "Looking it up.", tool_calls: [call("faq.md")] },
        { role: "tool" as const, ok: true, text: "FAQ" },
      ]),
    };
    expect(replayLoopDetector(perMessage, { logger: quiet })).toMatchObject({ stop: null, turns: 3, callsAfter: 0 });
    expect(await liveStopTurn(perMessage)).toBeUndefined();
    const failing: ReplayRun = {
      id: "failing",
      steps: [1, 2, 3, 4].flatMap((i) => [
        { role: "assistant" as const, text: "", tool_calls: [call(`missing-${"abcdefghij".repeat(i)}.py`)] },
        { role: "tool" as const, ok: false, text: "not found" },
      ]),
    };
    const options = { logger: quiet, maxConsecutiveFailures: 2, loopThreshold: 1 };
    expect(replayLoopDetector(failing, options)).toMatchObject({ stop: { kind: "failures" }, turn: 3 });
  });

  it("replayGuards runs it too with the loop option, beside its own decisions, which it leaves as they are", () => {
    const plain = replayGuards(looping);
    const both = replayGuards(looping, { loop: { logger: quiet } });
    expect(plain.loop).toBeUndefined();
    expect(both.loop).toEqual(replayLoopDetector(looping, { logger: quiet }));
    expect(both.decisions).toEqual(plain.decisions);
    expect(replayGuards(looping, { loop: false }).loop).toBeUndefined();
  });
});
