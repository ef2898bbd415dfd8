import type { BaseMessage } from "@langchain/core/messages";
import type { InteropZodType } from "@langchain/core/utils/types";
import { Annotation, MessagesAnnotation, MessagesZodMeta } from "@langchain/langgraph";
import { schemaMetaRegistry, withLangGraph } from "@langchain/langgraph/zod";
import { z } from "zod/v4";
import { annotationOf, graphFieldOf } from "../common/channel.js";
import { type GuardLog, type GuardLogUpdate, guardLogChannel } from "../common/events/stream-events.js";
import { type FileCacheState, type FileCacheWrite, fileCacheChannel } from "../fs/cache.js";
import type { LoopState } from "../loop/core/loop.js";
import { loopGuardChannel } from "../loop/core/state-check.js";
import { unionQueries } from "../repeat-query/core/query.js";
import { type ToolGuardState, type ToolGuardUpdate, toolGuardChannel } from "../tool-calls/core/state.js";

/**
 * Every guard channel, without `messages`; spread it into your own state:
 * `Annotation.Root({ ...MessagesAnnotation.spec, ...GuardState.spec, ...yours })`. Each is written through a reducer
 * (parallel tool calls never clash) and bounded.
 *
 * @example
 * ```ts
 * import { Annotation, MessagesAnnotation, StateGraph } from "@langchain/langgraph";
 * import { GuardState } from "langgraph-guards";
 *
 * const MyState = Annotation.Root({ ...MessagesAnnotation.spec, ...GuardState.spec, topic: Annotation<string> });
 * const graph = new StateGraph(MyState);
 * ```
 */
export const GuardState = Annotation.Root({
  /** The tool-call guards' memory (recent calls, valid read operations, blocks, counters), through a reducer. */
  toolGuard: annotationOf<ToolGuardState, ToolGuardUpdate>(toolGuardChannel),
  /** The normalized retrieval queries that really ran (a set: union reducer, first-asked order, at most 1,000). */
  retrievalQueriesAskedNorm: Annotation<string[], string | string[]>({
    reducer: unionQueries,
    default: () => [],
  }),
  /** What the repeat-query guard tells the model after a repeat (or `null`). */
  repeatQueryHint: Annotation<string | null>({
    reducer: (_current, update) => update,
    default: () => null,
  }),
  /** The loop detector's recent outputs and the safety limits' counters for the current session. */
  loopGuard: annotationOf<LoopState, LoopState | null>(loopGuardChannel),
  /** The file tools' cache (digests and stats, no contents) and directory tree, through a reducer. */
  fileCache: annotationOf<FileCacheState, FileCacheWrite | FileCacheWrite[] | FileCacheState | null>(fileCacheChannel),
  /** The thread's guard events, counted per kind, the last 50 kept. */
  guardLog: annotationOf<GuardLog, GuardLogUpdate>(guardLogChannel),
});

/**
 * `messages` plus every guard channel: the state to give `createReactAgent` (`stateSchema`) or a custom graph.
 *
 * @example
 * ```ts
 * import { createReactAgent } from "@langchain/langgraph/prebuilt";
 * import { GuardedToolNode, GuardMessagesState } from "langgraph-guards";
 *
 * const agent = createReactAgent({ llm, tools: new GuardedToolNode(tools), stateSchema: GuardMessagesState });
 * ```
 */
export const GuardMessagesState = Annotation.Root({
  ...MessagesAnnotation.spec,
  ...GuardState.spec,
});

/**
 * The zod v4 form of {@link GuardState}'s channels, for graphs declared with zod:
 * `z.object({ ...guardStateSchema.shape, ...yours })` (with {@link guardMessagesStateSchema} for `messages`).
 *
 * @example
 * ```ts
 * import { StateGraph } from "@langchain/langgraph";
 * import { z } from "zod";
 * import { guardMessagesStateSchema } from "langgraph-guards";
 *
 * const State = z.object({ ...guardMessagesStateSchema.shape, topic: z.string() });
 * const graph = new StateGraph(State);
 * ```
 */
export const guardStateSchema = z.object({
  /** The tool-call guards' memory (recent calls, valid read operations, blocks, counters), through a reducer. */
  toolGuard: graphFieldOf<ToolGuardState, ToolGuardUpdate>(toolGuardChannel),
  /** The normalized retrieval queries that really ran (a set: union reducer, first-asked order, at most 1,000). */
  retrievalQueriesAskedNorm: withLangGraph(z.array(z.string()), {
    reducer: { fn: unionQueries, schema: z.union([z.string(), z.array(z.string())]) },
    default: () => [],
  }),
  /** What the repeat-query guard tells the model after a repeat (or `null`). */
  repeatQueryHint: withLangGraph(z.string().nullable(), {
    reducer: { fn: (_current: string | null, update: string | null) => update, schema: z.string().nullable() },
    default: () => null,
  }),
  /** The loop detector's recent outputs and the safety limits' counters for the current session. */
  loopGuard: graphFieldOf<LoopState, LoopState | null>(loopGuardChannel),
  /** The file tools' cache (digests and stats, no contents) and directory tree, through a reducer. */
  fileCache: graphFieldOf<FileCacheState, FileCacheWrite | FileCacheWrite[] | FileCacheState | null>(fileCacheChannel),
  /** The thread's guard events, counted per kind, the last 50 kept. */
  guardLog: graphFieldOf<GuardLog, GuardLogUpdate>(guardLogChannel),
});

/**
 * The zod form with `messages`: {@link guardStateSchema} plus LangGraph's messages channel (zod v4; LangGraph's
 * own `MessagesZodState` is a zod v3 schema and cannot be spread into a zod v4 object).
 *
 * @example
 * ```ts
 * const graph = new StateGraph(guardMessagesStateSchema);
 * ```
 */
export const guardMessagesStateSchema = z.object({
  /** The conversation (LangGraph's messages reducer). */
  messages: withLangGraph(z.custom<BaseMessage[]>(), MessagesZodMeta),
  ...guardStateSchema.shape,
});

/** Copies the zod forms' channel metadata into LangGraph's CommonJS registry, which ESM `withLangGraph` never fills. */
export function registerZodForms(registry: typeof schemaMetaRegistry): void {
  if (registry === schemaMetaRegistry) return;
  for (const field of Object.values(guardMessagesStateSchema.shape) as InteropZodType[]) {
    const meta = schemaMetaRegistry.get(field);
    if (meta !== undefined) registry.extend(field, () => meta);
  }
}
