/**
 * The `toolGuard` channel's value as a checkpoint gives it back: checked once when read (a value the reducers made is
 * trusted), anything the rules cannot read refused with a {@link GuardStateError}.
 */
import { z } from "zod/v4";
import { GuardStateError, kindOf, zodProblem } from "../../common/state-error.js";
import { BLOCK_RULES } from "./rules.js";

const count = z.number();
const counter = count.default(0);
const text = z.string();
const ruleCounts = z
  .record(z.string(), count)
  .prefault({})
  .transform((counts) => {
    const all: Record<string, number> = Object.fromEntries(BLOCK_RULES.map((rule) => [rule, 0]));
    return Object.assign(all, counts);
  });
const effect = z.looseObject({ kind: z.enum(["read", "write", "mutate"]) });
const result = z.looseObject({ ok: z.boolean(), digest: text });

/**
 * The `toolGuard` channel's shape: what the rules read. `repetition` (there from the first release) is required;
 * parts and counters added since default to what their absence meant.
 */
const toolGuardSchema = z.looseObject({
  repetition: z.looseObject({
    nextSeq: counter,
    epoch: counter,
    window: z.array(z.looseObject({ seq: count, key: text, tool: text, epoch: counter, result: result.optional() })),
    changes: z.array(z.looseObject({ tool: text, epoch: count })).optional(),
  }),
  operations: z
    .looseObject({
      ops: z.record(z.string(), z.looseObject({ key: text.optional(), effect: effect.optional() })).default({}),
      files: z.array(z.looseObject({})).default([]),
    })
    .prefault({}),
  observed: z.array(z.looseObject({ tool: text, rule: text, count: count })).default([]),
  stats: z.looseObject({ allowed: counter, blocked: ruleCounts, observed: ruleCounts, reminded: counter }).prefault({}),
  escalation: z
    .looseObject({
      strikes: counter,
      pending: z.boolean().default(false),
      reminders: counter,
      lastTurn: text.nullable().default(null),
      blocked: z.array(z.looseObject({ tool: text, key: text })).default([]),
      endedBy: text.nullable().default(null),
    })
    .prefault({}),
  run: text.nullable().optional(),
  answers: z.array(z.looseObject({ key: text, tool: text, callId: text, digest: text })).optional(),
  fileEdits: z.array(z.looseObject({ path: text, writes: count })).optional(),
  repeats: z.looseObject({ mark: counter, calls: z.array(z.looseObject({ key: text })) }).optional(),
});

/**
 * The `toolGuard` value of a checkpoint, checked: older shapes repaired (a missing counter is 0, a missing part
 * empty), anything the rules cannot read refused with a {@link GuardStateError}. The result's fields are plain data
 * in the shape of `ToolGuardState`.
 *
 * @example
 * ```ts
 * checkToolGuardValue({ stats: { allowed: 3 } }).stats.blocked.consecutive; // 0
 * ```
 */
export function checkToolGuardValue(value: unknown): z.output<typeof toolGuardSchema> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new GuardStateError("toolGuard", `expected the guards' state (an object), received ${kindOf(value)}`);
  }
  const parsed = toolGuardSchema.safeParse(value);
  if (!parsed.success) throw new GuardStateError("toolGuard", zodProblem(parsed.error));
  return parsed.data;
}
