/** The escalation's pure functions: the reducer, acknowledgment, near-duplicates, feedback. */
import { describe, expect, it } from "vitest";
import {
  blockedCall,
  emptyEscalationState,
  escalationFeedback,
  reduceEscalation,
  repeatsBlocked,
  resolveToolGuardOptions,
  responseAcknowledges,
  textAcknowledges,
} from "../src/index.js";

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
