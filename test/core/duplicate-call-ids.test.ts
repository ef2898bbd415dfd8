/** Issue 35, item 12, in the core: the ids the guards know the calls of one response by. */
import { describe, expect, it } from "vitest";
import { callPosition, distinctCallIds } from "../../src/common/call-ids.js";

describe("distinctCallIds", () => {
  it("keeps ids that are present and unique, and gives the others their position", () => {
    expect(distinctCallIds(["a", "b"])).toEqual(["a", "b"]);
    expect(distinctCallIds(["a", "x", "x", "", undefined, null])).toEqual(["a", "x#2", "x#3", "#4", "#5", "#6"]);
    expect(distinctCallIds([""])).toEqual(["#1"]);
    expect(distinctCallIds([undefined])).toEqual(["#1"]);
  });

  it("never makes an id another call already has", () => {
    const ids = distinctCallIds(["x#2", "x", "x"]);
    expect(ids).toEqual(["x#2", "x#2'", "x#3"]);
    expect(new Set(ids).size).toBe(3);
  });
});

describe("callPosition", () => {
  const ids = ["a", "x", "x", "x"];
  it("finds a unique id without asking what the call is", () => {
    expect(callPosition(ids, "a", () => expect.fail("not asked"))).toBe(0);
    expect(callPosition(ids, "zz", () => false)).toBe(-1);
  });

  it("tells calls under one id apart by substance, then by the task that claims one", () => {
    expect(callPosition(ids, "x", (i) => i === 2)).toBe(2);
    const owner = {};
    const [t1, t2, t3] = [{}, {}, {}];
    const same = (i: number) => i >= 2; // positions 2 and 3 hold identical calls
    expect(callPosition(ids, "x", same, { owner, task: t1 })).toBe(2);
    expect(callPosition(ids, "x", same, { owner, task: t2 })).toBe(3);
    expect(callPosition(ids, "x", same, { owner, task: t1 })).toBe(2); // a retried task keeps its position
    expect(callPosition(ids, "x", same, { owner, task: t3 })).toBe(2); // more tasks than calls: the first
  });
});
