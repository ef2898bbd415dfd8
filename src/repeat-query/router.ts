import { type BaseMessage, isBaseMessage } from "@langchain/core/messages";
import { Command, Overwrite } from "@langchain/langgraph";
import { z } from "zod/v4";
import { lastAIMessageIndex, messageText } from "../common/messages.js";
import { parseOptions } from "../common/options.js";
import {
  decideRepeatQuery,
  extractQuery,
  normalizeQuery,
  QUERY_PARSERS,
  type QueryParserName,
  unionQueries,
} from "./core/query.js";

/**
 * The parts of a graph state the repeat-query guard reads.
 *
 * @example
 * ```ts
 * const state: RepeatQueryState = { lastModelResponse: '{"query": "x"}', retrievalQueriesAskedNorm: [] };
 * ```
 */
export interface RepeatQueryState {
  /** The model's last response (the query payload, usually JSON-ish), if the graph keeps one. */
  lastModelResponse?: unknown;
  /** The conversation: without `lastModelResponse`, the query is read from the last AI message. */
  messages?: BaseMessage[];
  /** The normalized queries that really ran (the guard channel). */
  retrievalQueriesAskedNorm?: string[];
}

const routerOptionsSchema = z
  .object({
    on_ok: z.string({ error: "on_ok is required: the node to go to when the query is new" }).min(1, {
      error: "on_ok must be a non-empty node name",
    }),
    on_repeat: z.string({ error: "on_repeat is required: the node to go to when the query repeats" }).min(1, {
      error: "on_repeat must be a non-empty node name",
    }),
    query_parser: z
      .enum(QUERY_PARSERS, { error: `unknown query_parser; known parsers: ${QUERY_PARSERS.join(", ")}` })
      .optional(),
    getQuery: z.custom<(state: never) => unknown>((v) => typeof v === "function").optional(),
  })
  .strict();

/**
 * Options of {@link repeatQueryRouter}: where it routes and how it reads the query.
 *
 * @example
 * ```ts
 * const options: RepeatQueryRouterOptions = { on_ok: "search", on_repeat: "answer", query_parser: "jsonish_v1" };
 * ```
 */
export interface RepeatQueryRouterOptions<S extends RepeatQueryState = RepeatQueryState> {
  /** The node to go to when the query is new and non-empty. */
  on_ok: string;
  /** The node to go to when the query is empty or already asked. */
  on_repeat: string;
  /** `JsonishQueryParser` / `jsonish_v1` extract `query` from JSON-ish output; without one the raw payload is the query. */
  query_parser?: QueryParserName;
  /** Where the payload comes from; default `state.lastModelResponse` if set, else the last AI message's text. */
  getQuery?: (state: S) => unknown;
}

/**
 * A repeat-query router: a conditional-edge function, plus how it reads the query.
 *
 * @example
 * ```ts
 * const router: RepeatQueryRouter = repeatQueryRouter({ on_ok: "search", on_repeat: "answer" });
 * router.queryOf(state); // the query the router reads
 * ```
 */
export interface RepeatQueryRouter<S extends RepeatQueryState = RepeatQueryState> {
  /** Returns `on_ok` or `on_repeat` (the node names). Never writes state. */
  (state: S): string;
  /** The query the router reads from a state (after the parser, before normalization). */
  queryOf(state: S): string;
  /** The validated options. */
  readonly options: Readonly<RepeatQueryRouterOptions<S>>;
}

/**
 * The payload a guard reads by default: `state.lastModelResponse` when that channel is set, otherwise the text of
 * the last AI message.
 *
 * @example
 * ```ts
 * defaultQueryPayload({ lastModelResponse: '{"query": "x"}' }); // '{"query": "x"}'
 * ```
 */
export function defaultQueryPayload(state: RepeatQueryState): unknown {
  const response = state.lastModelResponse;
  if (response !== undefined && response !== null) return isBaseMessage(response) ? messageText(response) : response;
  const messages = state.messages ?? [];
  const index = lastAIMessageIndex(messages);
  return index < 0 ? "" : messageText(messages[index] as BaseMessage);
}

/**
 * The repeat-query guard as a conditional-edge function: `on_ok` when the query is new and non-empty, `on_repeat`
 * when it is empty or already in `retrievalQueriesAskedNorm` (normalized). It never writes state: the retrieval node
 * records a query when it really runs ({@link recordRetrievalQuery}, {@link withQueryHistory}).
 *
 * @example
 * ```ts
 * const guard = repeatQueryRouter({ query_parser: "JsonishQueryParser", on_ok: "search", on_repeat: "answer" });
 * graph
 *   .addNode("search", withQueryHistory(search, guard.queryOf))
 *   .addConditionalEdges("decide", guard, ["search", "answer"]);
 * ```
 */
export function repeatQueryRouter<S extends RepeatQueryState = RepeatQueryState>(
  options: RepeatQueryRouterOptions<S>,
): RepeatQueryRouter<S> {
  parseOptions(routerOptionsSchema, options, "repeat-query guard");
  const settings = { ...options };
  const queryOf = (state: S): string =>
    extractQuery(settings.getQuery ? settings.getQuery(state) : defaultQueryPayload(state), settings.query_parser);
  const router = ((state: S): string =>
    decideRepeatQuery(queryOf(state), state.retrievalQueriesAskedNorm ?? []) === "ok"
      ? settings.on_ok
      : settings.on_repeat) as RepeatQueryRouter<S>;
  Object.defineProperty(router, "name", { value: "repeatQueryGuard" });
  return Object.assign(router, { queryOf, options: Object.freeze(settings) });
}

/**
 * The update that records a retrieval query (normalized) in `retrievalQueriesAskedNorm`.
 *
 * @example
 * ```ts
 * const update: RetrievalQueryUpdate = recordRetrievalQuery("class Foo"); // { retrievalQueriesAskedNorm: ["class foo"] }
 * ```
 */
export interface RetrievalQueryUpdate {
  /** The normalized query to add to the asked set (empty: nothing to add). */
  retrievalQueriesAskedNorm: string[];
}

/**
 * The state update a retrieval node applies when it really runs: the normalized query joins the asked set (an
 * empty query adds nothing).
 *
 * @example
 * ```ts
 * const search = async (state) => ({ evidence: await retriever.invoke(q), ...recordRetrievalQuery(q) });
 * recordRetrievalQuery("  CLASS Foo "); // { retrievalQueriesAskedNorm: ["class foo"] }
 * ```
 */
export function recordRetrievalQuery(query: string): RetrievalQueryUpdate {
  const normalized = normalizeQuery(query);
  return { retrievalQueriesAskedNorm: normalized === "" ? [] : [normalized] };
}

/**
 * The state update that forgets every asked query (e.g. at the start of a new pipeline run on the same thread).
 *
 * @example
 * ```ts
 * const start = () => ({ ...clearRetrievalQueries() });
 * ```
 */
export function clearRetrievalQueries(): {
  /** Overwrites the asked set with an empty one. */
  retrievalQueriesAskedNorm: Overwrite<string[]>;
} {
  return { retrievalQueriesAskedNorm: new Overwrite<string[]>([]) };
}

function mergeRecord(update: unknown, record: RetrievalQueryUpdate): unknown {
  if (update === undefined || update === null) return record;
  if (typeof update !== "object" || Array.isArray(update)) {
    throw new TypeError("withQueryHistory: the wrapped node must return a state update object or a Command");
  }
  const existing = (update as Record<string, unknown>).retrievalQueriesAskedNorm;
  const merged =
    existing === undefined
      ? record.retrievalQueriesAskedNorm
      : unionQueries(
          typeof existing === "string" ? [existing] : (existing as string[]),
          record.retrievalQueriesAskedNorm,
        );
  return { ...(update as Record<string, unknown>), retrievalQueriesAskedNorm: merged };
}

/**
 * Wraps a retrieval node so that, each time it runs and returns, the query it ran is recorded in
 * `retrievalQueriesAskedNorm`. Give it the guard's `queryOf` so the recorded query is the one the guard checks.
 * A node that throws records nothing (the retrieval did not happen).
 *
 * @example
 * ```ts
 * const guard = repeatQueryRouter({ query_parser: "jsonish_v1", on_ok: "search", on_repeat: "answer" });
 * graph.addNode("search", withQueryHistory(async (state) => ({ evidence: await find(guard.queryOf(state)) }), guard.queryOf));
 * ```
 */
export function withQueryHistory<S extends RepeatQueryState, C, R>(
  node: (state: S, config: C) => R | Promise<R>,
  getQuery: (state: S) => string = (state) => extractQuery(defaultQueryPayload(state)),
): (state: S, config: C) => Promise<R> {
  return async (state: S, config: C): Promise<R> => {
    const query = getQuery(state);
    const result = await node(state, config);
    const record = recordRetrievalQuery(query);
    if (result instanceof Command) {
      return new Command({
        graph: result.graph,
        goto: result.goto,
        resume: result.resume,
        update: mergeRecord(result.update, record) as Record<string, unknown>,
      }) as R;
    }
    return mergeRecord(result, record) as R;
  };
}
