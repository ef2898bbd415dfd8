/**
 * Issue 35, item 13: arguments nested deeper than the recursive serializer's stack (about 3,100 levels) all got one
 * identity (`"[Unserializable object]"`), so a different call was blocked as a repeat. The canonical JSON of deep
 * arguments is written with an explicit stack: two different deep arguments never share an identity, equal ones
 * do, and nothing overflows at any depth.
 */
import fc from "fast-check";
import { configure } from "safe-stable-stringify";
import { describe, expect, it } from "vitest";
import { callIdentity } from "../../src/common/identity/classify.js";
import { canonicalJson, deepCanonicalJson, toolCallSignature } from "../../src/common/identity/signature.js";
import { replayGuards } from "../../src/replay/index.js";
import { resolveToolGuardOptions } from "../../src/tool-calls/core/options.js";
import { commitTurn, planTurn } from "../../src/tool-calls/core/plan.js";
import { emptyToolGuardState, reduceToolGuard } from "../../src/tool-calls/core/state.js";

/** `{ a: { a: … { a: leaf } } }`, `depth` levels, built without recursion. */
function nested(depth: number, leaf: unknown): Record<string, unknown> {
  let value: Record<string, unknown> = { a: leaf };
  for (let i = 1; i < depth; i += 1) value = i % 2 === 0 ? { a: value } : { a: [value] };
  return value;
}

const stable = configure({ bigint: true, circularValue: "[Circular]", deterministic: true });

describe("deep arguments get their own identity", () => {
  it.each([5_000, 100_000])("%i levels: different leaves give different keys, equal ones the same", (depth) => {
    const options = resolveToolGuardOptions();
    const one = callIdentity("search", nested(depth, 1), options).key;
    const two = callIdentity("search", nested(depth, 2), options).key;
    const again = callIdentity("search", nested(depth, 1), options).key;
    expect(one).not.toBe(two);
    expect(one).toBe(again);
    expect(toolCallSignature("search", nested(depth, 1))).not.toContain("Unserializable");
  });

  it("a different deep call is not blocked as a repeat (planTurn, 100,000 levels)", () => {
    const options = resolveToolGuardOptions();
    let state = emptyToolGuardState();
    const outcomes: boolean[] = [];
    for (const [i, leaf] of ["x", "y", "z"].entries()) {
      const turn = { id: `m${i}`, text: "", calls: [{ name: "get_record", args: nested(100_000, leaf), id: `c${i}` }] };
      const plan = planTurn(state, turn, options);
      outcomes.push(plan.decisions[0]?.allowed ?? false);
      state = reduceToolGuard(state, commitTurn(plan, [{ ok: true, text: `found ${leaf}` }], options));
    }
    expect(outcomes).toEqual([true, true, true]);
  });

  it("replayGuards: three different deep reads run, the repeat of one is blocked", () => {
    const steps = [{ role: "user" as const, text: "Go." }];
    const reads = ["x", "y", "x"].map((leaf) => nested(100_000, leaf));
    const run = {
      id: "deep",
      steps: [
        ...steps,
        ...reads.flatMap((args, i) => [
          { role: "assistant" as const, text: "", tool_calls: [{ name: "read_file", args, id: `c${i}` }] },
          { role: "tool" as const, name: "read_file", ok: true, text: `content ${i % 2}` },
        ]),
      ],
    };
    const { decisions } = replayGuards(run);
    expect(decisions.map((d) => d.action)).toEqual(["allow", "allow", "block"]);
  });

  it("writes what the recursive serializer writes, wherever both can", () => {
    const leaf = fc.oneof(
      fc.string(),
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.bigInt(),
      fc.date({ noInvalidDate: false }),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: "small" }, leaf, tie("array"), tie("object")),
      array: fc.array(tie("node"), { maxLength: 4 }),
      object: fc.dictionary(fc.string(), tie("node"), { maxKeys: 4 }),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        expect(deepCanonicalJson(v) ?? "null").toBe(stable(v) ?? "null");
      }),
      { numRuns: 3_000 },
    );
  });

  it("keeps cycles, toJSON and dropped members as the recursive serializer does", () => {
    const cyclic: Record<string, unknown> = { b: [1, undefined, () => 0], a: { toJSON: () => "j" } };
    cyclic.self = cyclic;
    cyclic.list = [cyclic, { deep: cyclic }];
    expect(deepCanonicalJson(cyclic)).toBe(stable(cyclic));
    expect(canonicalJson(nested(100_000, 1)).length).toBeGreaterThan(100_000);
  });
});
