/**
 * Issue 35, item 14, in the reducers: a damaged or older-shape guard state is repaired (older shapes: fields added
 * since are filled) or refused with a GuardStateError that names the channel, says what is wrong and how to reset it
 * — never a bare TypeError, never a NaN counter; an update a reducer does not know is refused, never applied as
 * `undefined`; `null` resets every guard channel.
 */
import { describe, expect, it } from "vitest";
import { emptyGuardLog, type GuardStreamEvent, reduceGuardLog } from "../../src/common/events/stream-events.js";
import { emptyFileCache, type FileCacheState, reduceFileCache, reduceFileCacheUpdate } from "../../src/fs/cache.js";
import { GuardStateError } from "../../src/index.js";
import { emptyLoopState } from "../../src/loop/core/loop.js";
import { readLoopState, reduceLoopState } from "../../src/loop/core/state-check.js";
import {
  emptyToolGuardState,
  type GuardEvent,
  readToolGuard,
  reduceToolGuard,
  type ToolGuardState,
} from "../../src/tool-calls/core/state.js";

const call: GuardEvent = {
  type: "call",
  seq: 0,
  key: "k",
  tool: "read_file",
  effect: { kind: "read", paths: ["a"] },
  windowSize: 10,
};

/** The error `fn` throws: a GuardStateError of `channel` whose message says how to reset it. */
function refusal(fn: () => unknown, channel: string): GuardStateError {
  let thrown: unknown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(GuardStateError);
  const error = thrown as GuardStateError;
  expect(error.channel).toBe(channel);
  expect(error.message).toContain(`'${channel}'`);
  expect(error.message).toContain("null");
  return error;
}

/** A state as JSON gives it back (what a checkpointer restores), with `edit` applied. */
function stored(edit: (s: Record<string, unknown>) => void): ToolGuardState {
  const value = JSON.parse(JSON.stringify(reduceToolGuard(emptyToolGuardState(), [call]))) as Record<string, unknown>;
  edit(value);
  return value as unknown as ToolGuardState;
}

describe("toolGuard", () => {
  it("a damaged counter is refused by name, with the way to reset it", () => {
    const damaged = stored((s) => {
      (s.stats as Record<string, unknown>).allowed = "many";
    });
    const error = refusal(() => reduceToolGuard(damaged, [{ ...call, seq: 1 }]), "toolGuard");
    expect(error.problem).toContain("stats.allowed");
    expect(error.message).toContain("updateState(config, { toolGuard: null })");
    refusal(() => readToolGuard(damaged), "toolGuard");
  });

  it("a window that is not a list is refused, not a TypeError", () => {
    const damaged = stored((s) => {
      (s.repetition as Record<string, unknown>).window = 7;
    });
    expect(refusal(() => reduceToolGuard(damaged, [{ ...call, seq: 1 }]), "toolGuard").problem).toContain(
      "repetition.window",
    );
  });

  it("an older shape (no stats, no escalation, counters missing) is repaired: no NaN", () => {
    const older = stored((s) => {
      delete s.stats;
      delete s.escalation;
      delete (s.repetition as Record<string, unknown>).epoch;
    });
    const next = reduceToolGuard(older, [{ ...call, seq: 1, key: "other" }, { type: "progress" }]);
    expect(next.stats.allowed).toBe(1);
    expect(next.stats.blocked.redundant).toBe(0);
    expect(next.escalation.strikes).toBe(0);
    expect(Number.isFinite(next.repetition.epoch)).toBe(true);
    const partial = stored((s) => {
      s.stats = { allowed: 4 };
    });
    const block: GuardEvent = {
      type: "block",
      block: { tool: "t", rule: "consecutive", count: 2, enforced: true },
      observedLimit: 20,
    };
    expect(reduceToolGuard(partial, [block]).stats).toMatchObject({ allowed: 4, blocked: { consecutive: 1 } });
  });

  it("an unknown update is refused, never applied as the state", () => {
    const state = reduceToolGuard(emptyToolGuardState(), [call]);
    expect(refusal(() => reduceToolGuard(state, { foo: 1 } as never), "toolGuard").update).toBe(true);
    expect(refusal(() => reduceToolGuard(state, [{ type: "bogus" }] as never), "toolGuard").problem).toContain("bogus");
    refusal(() => reduceToolGuard(state, 5 as never), "toolGuard");
    refusal(() => reduceToolGuard(state, [call, null] as never), "toolGuard");
    expect(reduceToolGuard(state, undefined)).toBe(state);
  });

  it("null and a reset event reset even a damaged state", () => {
    const damaged = stored((s) => {
      s.repetition = "gone";
    });
    expect(reduceToolGuard(damaged, null).stats.allowed).toBe(0);
    expect(reduceToolGuard(damaged, [{ type: "reset" }, call]).stats.allowed).toBe(1);
  });

  it("checks a stored value once: the reducer's own states are not checked again", () => {
    const older = stored((s) => {
      delete s.stats;
    });
    expect(readToolGuard(older)).toBe(readToolGuard(older));
    const own = reduceToolGuard(emptyToolGuardState(), [call]);
    expect(readToolGuard(own)).toBe(own);
  });
});

describe("guardLog", () => {
  const event = {
    source: "langgraph-guards",
    version: 1,
    kind: "blocked",
    guard: "tool-calls",
  } as unknown as GuardStreamEvent;

  it("a damaged log is refused by name; an older one (no total) is repaired", () => {
    refusal(() => reduceGuardLog({ counts: {}, total: 0, recent: "x" } as never, [event]), "guardLog");
    refusal(() => reduceGuardLog({ counts: { blocked: "1" }, total: 1, recent: [] } as never, [event]), "guardLog");
    const older = reduceGuardLog({ counts: { blocked: 2 }, recent: [event, event] } as never, [event]);
    expect(older.total).toBe(3);
  });

  it("an unknown update is refused; null resets", () => {
    refusal(() => reduceGuardLog(emptyGuardLog(), 5 as never), "guardLog");
    refusal(() => reduceGuardLog(emptyGuardLog(), [{ nope: 1 }] as never), "guardLog");
    const log = reduceGuardLog(emptyGuardLog(), [event]);
    expect(reduceGuardLog(log, null as never).total).toBe(0);
  });
});

describe("loopGuard", () => {
  it("a damaged state is refused by name; an older one is repaired", () => {
    expect(refusal(() => readLoopState({ ...emptyLoopState(), iterations: "3" }), "loopGuard").problem).toContain(
      "iterations",
    );
    refusal(() => readLoopState([], "safetyLimits"), "safetyLimits");
    const { tokens: _tokens, consecutiveFailures: _failures, ...older } = emptyLoopState();
    const repaired = readLoopState({ ...older, iterations: 4 });
    expect(repaired.tokens).toEqual({ input: 0, output: 0, total: 0 });
    expect(repaired.consecutiveFailures).toBe(0);
    expect(repaired.iterations).toBe(4);
  });

  it("its reducer refuses a non-state, keeps a whole state for its read, keeps the state for undefined, resets for null", () => {
    const state = { ...emptyLoopState(), iterations: 2 };
    refusal(() => reduceLoopState(state, 3 as never), "loopGuard");
    // createAgent writes each channel's own value back, a damaged one too: it is refused when read.
    const damaged = reduceLoopState(state, { iterations: "x" } as never);
    refusal(() => readLoopState(damaged), "loopGuard");
    expect(reduceLoopState(state, undefined)).toBe(state);
    expect(reduceLoopState(state, null).iterations).toBe(0);
  });
});

describe("fileCache", () => {
  it("an unknown write is refused by name, never sets the channel to undefined", () => {
    refusal(() => reduceFileCache(emptyFileCache(), [{ op: "bogus" } as never]), "fileCache");
    refusal(() => reduceFileCacheUpdate(emptyFileCache(), 5 as never), "fileCache");
  });

  it("a damaged cache is refused by name; an older one (no stats) is repaired", () => {
    const damaged = { ...emptyFileCache(), files: null } as unknown as FileCacheState;
    refusal(() => reduceFileCache(damaged, [{ op: "dropAll" }]), "fileCache");
    const { stats: _stats, ...older } = emptyFileCache();
    const repaired = reduceFileCache(older as FileCacheState, [{ op: "count", hits: 1 }]);
    expect(repaired.stats.hits).toBe(1);
    expect(Number.isFinite(repaired.stats.misses)).toBe(true);
  });

  it("the channel's reducer takes a whole cache, and null resets even a damaged one", () => {
    const damaged = { files: 3 } as unknown as FileCacheState;
    expect(reduceFileCacheUpdate(damaged, null)).toEqual(emptyFileCache());
    expect(reduceFileCacheUpdate(damaged, emptyFileCache())).toEqual(emptyFileCache());
  });
});
