/**
 * The `toolGuard` channel's value as a checkpoint gives it back: checked once when read (a value the reducers made is
 * trusted), anything the rules cannot read refused with a {@link GuardStateError}.
 */
import { z } from "zod/v4";
import { GuardStateError, kindOf, zodProblem } from "../../common/state-error.js";

const count = z.number();
const text = z.string();
const ruleCounts = z.record(z.string(), count);
const effect = z.looseObject({ kind: z.enum(["read", "write", "mutate"]) });
const result = z.looseObject({ ok: z.boolean(), digest: text });

/**
 * The `toolGuard` channel's shape: what the rules read (the parts an empty state has are required; the package has
 * never stored another shape).
 */
const toolGuardSchema = z.looseObject({
  repetition: z.looseObject({
    nextSeq: count,
    epoch: count,
    window: z.array(z.looseObject({ seq: count, key: text, tool: text, epoch: count, result: result.optional() })),
    changes: z.array(z.looseObject({ tool: text, epoch: count })).optional(),
  }),
  operations: z.looseObject({
    ops: z.record(z.string(), z.looseObject({ key: text.optional(), effect: effect.optional() })),
    files: z.array(z.looseObject({})),
  }),
  observed: z.array(z.looseObject({ tool: text, rule: text, count: count })),
  stats: z.looseObject({ allowed: count, blocked: ruleCounts, observed: ruleCounts, reminded: count }),
  escalation: z.looseObject({
    strikes: count,
    pending: z.boolean(),
    reminders: count,
    lastTurn: text.nullable(),
    blocked: z.array(z.looseObject({ tool: text, key: text })),
    endedBy: text.nullable(),
  }),
  run: text.nullable().optional(),
  answers: z.array(z.looseObject({ key: text, tool: text, callId: text, digest: text })).optional(),
  fileEdits: z.array(z.looseObject({ path: text, writes: count })).optional(),
  repeats: z.looseObject({ mark: count, calls: z.array(z.looseObject({ key: text })) }).optional(),
});

/**
 * The `toolGuard` value of a checkpoint, checked: anything the rules cannot read (a part or counter missing too)
 * refused with a {@link GuardStateError}. The result's fields are plain data in the shape of `ToolGuardState`.
 *
 * @example
 * ```ts
 * checkToolGuardValue({ stats: { allowed: 3 } }); // throws GuardStateError: repetition
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
