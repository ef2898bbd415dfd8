import { withLangGraph } from "@langchain/langgraph/zod";
import { z } from "zod/v4";
import { emptyGuardLog, type GuardLog, reduceGuardLog } from "../shared/events/stream-events.js";
import type { GuardLogUpdate } from "./index.js";

/**
 * A custom zod field with a default: createAgent initialises middleware state from zod defaults (a channel's own
 * default is not enough), and the default keeps the field optional in the agent's input type.
 */
export function defaulted<T extends object>(make: () => T): z.ZodDefault<z.ZodCustom<T, T>> {
  return z.custom<T>().default(make as () => z.util.NoUndefined<T>);
}

/**
 * A zod field whose reducer takes `U` updates and also a whole value (and then replaces it): createAgent feeds each
 * channel's own value back on every invoke, which must change nothing.
 */
export function reducedField<T extends object, U>(make: () => T, fn: (current: T | undefined, update: U) => T) {
  return withLangGraph<T | undefined, U, z.ZodDefault<z.ZodCustom<T, T>>>(defaulted(make), {
    reducer: { fn, schema: z.custom<U>() },
    default: make,
  });
}

/** The `guardLog` channel, declared by every middleware of the pack (createAgent keeps the first declaration). */
export const guardLogField = reducedField<GuardLog, GuardLogUpdate>(emptyGuardLog, reduceGuardLog);
