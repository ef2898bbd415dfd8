/**
 * createAgent's `Send` hands `wrapToolCall` a copy of each call `afterModel` planned. The turn is resumed with the
 * planned decision when the copy is the call that was planned (same tool, arguments of the same identity), and decided
 * again otherwise (humanInTheLoopMiddleware's "edit"). Arguments that are the same JSON data are taken as the planned
 * call without working out their identity again; anything else is compared by identity, as before. Property: for
 * any arguments and any copy of them (the same data in another key order, or changed), the planned decision is kept
 * exactly when the copy's identity is the planned call's.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { emptyToolGuardState, identifyCall, resolveToolGuardOptions } from "../../src/core/index.js";
import { GuardedTurn, type TurnEnv } from "../../src/tool-calls/turn.js";

const options = resolveToolGuardOptions();
const env: TurnEnv = { options, context: {}, host: undefined };

/** `value` rebuilt: plain objects with their keys in reverse order, lists copied, anything else as it is. */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value).reverse()) copy[key] = reordered((value as Record<string, unknown>)[key]);
  return copy;
}

class Box {
  constructor(readonly v: string) {}
}

/** Argument values: JSON, and a few that are not (undefined, a Date, a class instance, NaN, -0). */
const leaf = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.date({ noInvalidDate: true }),
  fc.string({ maxLength: 4 }).map((v) => new Box(v)),
  fc.constantFrom("2026-11-28T10:00:03.512Z", "3f2b8c1e-9d4a-4b6e-8f1a-2c3d4e5f6a7b", "./src/../a.py", "a.py"),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small" }, leaf, fc.array(tie("value"), { maxLength: 3 }), tie("object")),
  object: fc.dictionary(fc.constantFrom("path", "requestId", "ts", "q", "limit", "nested", "a", "b"), tie("value"), {
    maxKeys: 4,
  }),
}));
const argsArb = fc.dictionary(fc.constantFrom("path", "requestId", "ts", "q", "limit", "a"), value, { maxKeys: 4 });

function plannedTurn(args: Record<string, unknown>) {
  const call: ToolCall = { name: "read_file", args, id: "call_1", type: "tool_call" };
  const messages = [
    new HumanMessage({ id: "h1", content: "Read it." }),
    new AIMessage({ content: "", tool_calls: [call] }),
  ];
  const state = emptyToolGuardState();
  const { record } = GuardedTurn.open(state, messages, env).split();
  return { record, state, messages };
}

describe("wrapToolCall resumes the planned decision of a copied call", () => {
  it("kept exactly when the copy's identity is the planned call's", () => {
    fc.assert(
      fc.property(argsArb, fc.oneof(fc.constant("same"), fc.constant("reordered"), argsArb), (args, other) => {
        const { record, state, messages } = plannedTurn(args);
        const copyArgs = other === "same" ? structuredClone(args) : other === "reordered" ? reordered(args) : other;
        const copy: ToolCall = { name: "read_file", args: copyArgs as Record<string, unknown>, id: "call_1" };
        const turn = GuardedTurn.resume(record, copy, state, messages, env);
        const planned = record.decisions[0];
        const sameIdentity = identifyCall(copy, options).key === planned?.key;
        expect(turn?.decision(0) === planned).toBe(sameIdentity);
      }),
      { numRuns: 400 },
    );
  });
});
