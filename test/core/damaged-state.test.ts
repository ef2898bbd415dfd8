/**
 * Issue 35, item 14, in the reducers: a damaged guard state (a part missing too: the package has never stored another
 * shape) is refused with a GuardStateError that names the channel, says what is wrong and how to reset it — never a
 * bare TypeError, never a NaN counter; an update a reducer does not know is refused, never applied as
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

  it("a part or counter missing is refused by name (the package has never stored another shape), never NaN", () => {
    const noStats = stored((s) => {
      delete s.stats;
    });
    expect(refusal(() => reduceToolGuard(noStats, [{ ...call, seq: 1 }]), "toolGuard").problem).toContain("stats");
    const noEpoch = stored((s) => {
      delete (s.repetition as Record<string, unknown>).epoch;
    });
    expect(refusal(() => readToolGuard(noEpoch), "toolGuard").problem).toContain("repetition.epoch");
    const partial = stored((s) => {
      s.stats = { allowed: 4 };
    });
    expect(refusal(() => readToolGuard(partial), "toolGuard").problem).toContain("stats.blocked");
  });

  it("a stored state as JSON gives it back is read as the reducer made it", () => {
    const state = reduceToolGuard(emptyToolGuardState(), [call, { ...call, seq: 1, key: "k2" }]);
    const back = readToolGuard(JSON.parse(JSON.stringify(state)));
    expect(JSON.parse(JSON.stringify(back))).toEqual(JSON.parse(JSON.stringify(state)));
    expect(readToolGuard(JSON.parse(JSON.stringify(emptyToolGuardState()))).stats.allowed).toBe(0);
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
    const value = stored(() => {});
    expect(readToolGuard(value)).toBe(readToolGuard(value));
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

  it("a damaged log (a part missing too) is refused by name; a stored one goes on", () => {
    refusal(() => reduceGuardLog({ counts: {}, total: 0, recent: "x" } as never, [event]), "guardLog");
    refusal(() => reduceGuardLog({ counts: { blocked: "1" }, total: 1, recent: [] } as never, [event]), "guardLog");
    refusal(() => reduceGuardLog({ counts: { blocked: 2 }, recent: [event, event] } as never, [event]), "guardLog");
    refusal(() => reduceGuardLog({ total: 2, recent: [event, event] } as never, [event]), "guardLog");
    const stored = JSON.parse(JSON.stringify(reduceGuardLog(emptyGuardLog(), [event, event])));
    expect(reduceGuardLog(stored, [event]).total).toBe(3);
  });

  it("an unknown update is refused; null resets", () => {
    refusal(() => reduceGuardLog(emptyGuardLog(), 5 as never), "guardLog");
    refusal(() => reduceGuardLog(emptyGuardLog(), [{ nope: 1 }] as never), "guardLog");
    const log = reduceGuardLog(emptyGuardLog(), [event]);
    expect(reduceGuardLog(log, null as never).total).toBe(0);
  });
});

describe("loopGuard", () => {
  it("a damaged state (a field missing too) is refused by name; a stored one is read as it was", () => {
    expect(refusal(() => readLoopState({ ...emptyLoopState(), iterations: "3" }), "loopGuard").problem).toContain(
      "iterations",
    );
    refusal(() => readLoopState([], "safetyLimits"), "safetyLimits");
    const { tokens: _tokens, ...partial } = emptyLoopState();
    expect(refusal(() => readLoopState({ ...partial, iterations: 4 }), "loopGuard").problem).toContain("tokens");
    const stored = JSON.parse(JSON.stringify({ ...emptyLoopState(), iterations: 4 }));
    expect(readLoopState(stored)).toEqual({ ...emptyLoopState(), iterations: 4 });
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

  it("a damaged cache (a part missing too) is refused by name; a stored one goes on", () => {
    const damaged = { ...emptyFileCache(), files: null } as unknown as FileCacheState;
    refusal(() => reduceFileCache(damaged, [{ op: "dropAll" }]), "fileCache");
    for (const part of ["stats", "bytes", "tree"] as const) {
      const { [part]: _gone, ...partial } = emptyFileCache();
      const error = refusal(() => reduceFileCache(partial as FileCacheState, [{ op: "count", hits: 1 }]), "fileCache");
      expect(error.problem).toContain(part);
    }
    const stored = JSON.parse(JSON.stringify(emptyFileCache())) as FileCacheState;
    expect(reduceFileCache(stored, [{ op: "count", hits: 1 }]).stats.hits).toBe(1);
  });

  it("the channel's reducer takes a whole cache, and null resets even a damaged one", () => {
    const damaged = { files: 3 } as unknown as FileCacheState;
    expect(reduceFileCacheUpdate(damaged, null)).toEqual(emptyFileCache());
    expect(reduceFileCacheUpdate(damaged, emptyFileCache())).toEqual(emptyFileCache());
  });
});
