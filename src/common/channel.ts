// A guard channel is declared once ({@link ChannelSpec}); the three forms LangGraph.js needs are made from it.

import type { InteropZodType } from "@langchain/core/utils/types";
import { Annotation, type BaseChannel, type OverwriteValue, ReducedValue } from "@langchain/langgraph";
import { type ReducedZodChannel, withLangGraph } from "@langchain/langgraph/zod";
import { z } from "zod/v4";

/** A channel's reducer (`current` is undefined on the first write) and a fresh empty value. */
export interface ChannelSpec<T, U> {
  readonly reduce: (current: T | undefined, update: U) => T;
  readonly empty: () => T;
}

/** The channel as a graph state's `Annotation`. */
export function annotationOf<T, U>(spec: ChannelSpec<T, U>): BaseChannel<T, U | OverwriteValue<T>, unknown> {
  return Annotation<T, U>({ reducer: spec.reduce, default: spec.empty });
}

/** The channel as a field of a graph's zod state. */
export function graphFieldOf<T, U>(spec: ChannelSpec<T, U>): ReducedZodChannel<z.ZodCustom<T, T>, InteropZodType<U>> {
  return withLangGraph(z.custom<T>(), { reducer: { fn: spec.reduce, schema: z.custom<U>() }, default: spec.empty });
}

/**
 * The channel as a createAgent middleware's `stateSchema` field: a `ReducedValue`, which any copy of LangGraph knows by
 * its brand (a CommonJS `require("langchain")` misses `withLangGraph`'s registration); its reducer takes whole values.
 */
export function agentFieldOf<T extends object, U>(spec: ChannelSpec<T, U>): ReducedValue<T, U> {
  // A zod default: createAgent initialises middleware state from it, and it keeps the field optional in the input type.
  const value = z.custom<T>().default(spec.empty as () => z.util.NoUndefined<T>) as unknown as z.ZodType<T>;
  // Optional: createAgent checks a middleware's fields at each invoke and refuses a required one not given.
  const input = z.custom<U>().optional() as unknown as z.ZodType<U>;
  return new ReducedValue(value, { inputSchema: input, reducer: spec.reduce as (current: T, update: U) => T });
}
