/** The escalation's pure functions: the reducer, acknowledgment, near-duplicates, feedback. */
import { describe, expect, it } from "vitest";
import {
  blockedCall,
  emptyEscalationState,
  endExplanation,
  escalationFeedback,
  notRunAnswer,
  reduceEscalation,
  repeatsBlocked,
  resolveToolGuardOptions,
  responseAcknowledges,
  textAcknowledges,
} from "../../src/core/index.js";

const options = resolveToolGuardOptions().escalation;
const strike = (turn: string, args: unknown = { path: "a" }) =>
  ({ type: "strike", turn, call: blockedCall({ tool: "write_file", args }, 1, 0), blockedLimit: 5 }) as const;

describe("escalation state", () => {
  it("counts one strike per response, keeps the last blockedLimit calls, and forgives on request", () => {
    let s = reduceEscalation(undefined, strike("m1"));
    s = reduceEscalation(s, strike("m1")); // a parallel call of the same response
    expect(s).toMatchObject({ strikes: 1, pending: true });
    for (const turn of ["m2", "m3", "m4", "m5", "m6", "m7"]) s = reduceEscalation(s, strike(turn));
    expect(s.strikes).toBe(7);
    expect(s.blocked).toHaveLength(5);
    s = reduceEscalation(s, { type: "acknowledge" });
    expect(s.pending).toBe(false);
    s = reduceEscalation(s, { type: "forgive" });
    expect(s).toMatchObject({ strikes: 0, pending: false, endedBy: null });
    expect(s.blocked).toHaveLength(5); // still compared for near-duplicates
  });

  it("keeps the arguments of a blocked call up to 8,000 characters; beyond, the call is matched exactly", () => {
    const big = { path: "a.py", content: "x".repeat(9_000) };
    const state = reduceEscalation(emptyEscalationState(), strike("m1", big));
    expect(state.blocked[0]?.args).toBeNull();
    expect(repeatsBlocked(state, { tool: "write_file", args: big }, options)).toBe(true);
    expect(repeatsBlocked(state, { tool: "write_file", args: { ...big, content: `${big.content}y` } }, options)).toBe(
      false,
    );
  });
});

describe("acknowledgment", () => {
  it("text acknowledges unless it is a retry; a differing call acknowledges; no calls and no text does not", () => {
    expect(textAcknowledges("The issue is the import path.", options)).toBe(true);
    expect(textAcknowledges("Let me try that again.", options)).toBe(false);
    const state = reduceEscalation(emptyEscalationState(), strike("m1"));
    const respond = (text: string, calls: { tool: string; args: unknown }[]) =>
      responseAcknowledges(state, { id: "m2", text, calls }, options);
    expect(respond("", [{ tool: "write_file", args: { path: "b" } }])).toBe(true);
    expect(respond("", [{ tool: "write_file", args: { path: "a" } }])).toBe(false);
    expect(respond("", [])).toBe(false);
    expect(responseAcknowledges(emptyEscalationState(), { id: "m", text: "", calls: [] }, options)).toBe(true);
  });
});

describe("feedback", () => {
  it("level 2 names the other tools and offers to use the result when the call succeeded", () => {
    const text = escalationFeedback({
      tool: "read_file",
      args: { path: "a" },
      message: "Blocked.",
      level: 2,
      strikes: 2,
      previousResult: { ok: true, text: "hello" },
      otherTools: ["read_file", "list_files", "grep"],
    });
    expect(text).toContain("[A] Use the result you already have (above)");
    expect(text).toContain("[B] Use another tool: list_files, grep");
    expect(text.endsWith("Which option will you take? What will you do differently?")).toBe(true);
  });
});

describe("the final message at level 4 (endExplanation)", () => {
  it("reads as one message for the user: what was repeated, how often, what it gave, what else, what to do", () => {
    const text = endExplanation({
      tool: "get_weather",
      args: { city: "Paris" },
      strikes: 4,
      previousResult: { ok: false, text: "Error: weather service unavailable\n Please fix your mistakes." },
      alsoBlocked: [
        { tool: "get_weather", args: { city: "Paris" } },
        { tool: "search", args: { q: "Paris weather" } },
        { tool: "search", args: { q: "Paris weather" } },
      ],
    });
    expect(text.split("\n")).toEqual([
      "I stopped this run because I kept repeating one step: I called `get_weather` with " +
        '{"city":"Paris"} again and again, the guards blocked it 4 times in a row, and I did not change my approach.',
      "When it last ran, it failed: weather service unavailable",
      'Also blocked as repeats: `search` with {"q":"Paris weather"}.',
      "",
      "What you can do:",
      "- Send a new message with what to do differently (another approach, other input, or to skip this step); I will go on from there.",
      "- If the step needs something I cannot change here (a service that is down, access I do not have), set that right first, then ask me again.",
    ]);
    // Nothing addressed to the model ("Please fix your mistakes"), no second sign-off.
    expect(text).not.toMatch(/Please fix your mistakes|Please tell me how to proceed/);
    // Nor to the developer (issue 61, 12c): the end user reads it, and cannot change the guard's options.
    expect(text).not.toMatch(/escalation\.|configurable|guards: false|exempt|levelStrikes|askFrom/);
  });

  it("says when a person ended the run, keeps long arguments and results short, and words a success", () => {
    const text = endExplanation({
      tool: "read_file",
      args: { path: "x".repeat(1000) },
      strikes: 3,
      previousResult: { ok: true, text: "y".repeat(5000) },
      endedByUser: { answer: "Stop here." },
    });
    expect(text).toMatch(
      /^I stopped this run because you asked me to: "Stop here\."\nBefore that, I had called `read_file`/,
    );
    expect(text).toContain("When it last ran, it returned: yyy");
    expect(text.length).toBeLessThan(1500);
    expect(notRunAnswer("read_file", 3)).toBe("Not run: the run was stopped after 3 blocked repeats of `read_file`.");
    expect(notRunAnswer("read_file", 3, true)).toBe("Not run: the user ended the run.");
  });
});
