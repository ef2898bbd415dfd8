import { type BaseMessage, isBaseMessage } from "@langchain/core/messages";
import { Command, Overwrite } from "@langchain/langgraph";
import { z } from "zod";
import { GuardOptionsError, parseOptions } from "../core/options.js";
import {
  decideRepeatQuery,
  extractQuery,
  normalizeQuery,
  QUERY_PARSERS,
  type QueryParserName,
  unionQueries,
} from "../core/query.js";
import { lastAIMessageIndex, messageText } from "./messages.js";

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

function validateRouterOptions<S extends RepeatQueryState>(options: RepeatQueryRouterOptions<S>): void {
  parseOptions(routerOptionsSchema, options, "repeat-query guard");
}

/**
 * The repeat-query guard as a conditional-edge function: `on_ok` when the query is new and non-empty,
 * `on_repeat` when it is empty or already in `retrievalQueriesAskedNorm` (after trim, lowercase and whitespace
 * collapsing). It never writes state: the retrieval node records a query when it really runs
 * ({@link recordRetrievalQuery}, {@link withQueryHistory}). Options are validated when the router is built.
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
  validateRouterOptions(options);
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
export function clearRetrievalQueries(): { retrievalQueriesAskedNorm: Overwrite<string[]> } {
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

/**
 * What a hint builder knows.
 *
 * @example
 * ```ts
 * const hint = ({ query, asked }: RepeatHintInfo) => `Already searched "${query}" (${asked.length} queries so far).`;
 * ```
 */
export interface RepeatHintInfo {
  /** The query as read (after the parser). */
  query: string;
  /** The normalized queries already run. */
  asked: readonly string[];
}

/**
 * The default hint written to `repeatQueryHint` after a repeat.
 *
 * @example
 * ```ts
 * defaultRepeatHint({ query: "Foo", asked: ["foo"] });
 * ```
 */
export function defaultRepeatHint({ query, asked }: RepeatHintInfo): string {
  const list = asked.length ? asked.map((q) => `"${q}"`).join(", ") : "none";
  const what = normalizeQuery(query) === "" ? "The retrieval query was empty." : `"${query}" was already searched.`;
  return `${what} Queries already run: ${list}. Ask a different query, or answer with the evidence you have.`;
}

/**
 * Options of {@link repeatQueryGuard}.
 *
 * @example
 * ```ts
 * repeatQueryGuard({ on_ok: "search", on_repeat: "answer", id: "guard", hint: true });
 * ```
 */
export interface RepeatQueryGuardOptions<
  S extends RepeatQueryState,
  OnOk extends string,
  OnRepeat extends string,
  Id extends string,
> extends RepeatQueryRouterOptions<S> {
  on_ok: OnOk;
  on_repeat: OnRepeat;
  /** The guard node's name (route your decision node to it). Default `"guard_repeat_query"`. */
  id?: Id;
  /**
   * On `on_repeat`, write a hint for the model to `repeatQueryHint` (and `null` on `on_ok`): `true` for
   * {@link defaultRepeatHint}, or a builder. Default `false` (the guard node writes nothing).
   */
  hint?: boolean | ((info: RepeatHintInfo) => string);
}

/**
 * The parts that put the guard into a `StateGraph` as a node with two labelled edges.
 *
 * @example
 * ```ts
 * const guard = repeatQueryGuard({ on_ok: "search", on_repeat: "answer" });
 * builder.addNode(guard.id, guard.node).addConditionalEdges(guard.id, guard.route, guard.pathMap);
 * ```
 */
export interface RepeatQueryGuard<
  S extends RepeatQueryState,
  OnOk extends string,
  OnRepeat extends string,
  Id extends string,
> {
  /** The guard node's name. */
  id: Id;
  /** The guard node: writes the hint when enabled, nothing otherwise. */
  node: (state: S) => { repeatQueryHint?: string | null };
  /** The conditional-edge function: `"on_ok"` or `"on_repeat"` (labels of `pathMap`). */
  route: (state: S) => "on_ok" | "on_repeat";
  /** Maps the labels to the target nodes, so the drawn graph names both edges. */
  pathMap: { on_ok: OnOk; on_repeat: OnRepeat };
  /** The router itself (returns node names), and its `queryOf` for {@link withQueryHistory}. */
  router: RepeatQueryRouter<S>;
}

/**
 * The repeat-query guard as a graph step (a `repeat_query_guard` action in a step-configured pipeline): a node `id` (default
 * `"guard_repeat_query"`) and two labelled conditional edges, `on_ok` and `on_repeat`, so that
 * `getGraph().drawMermaid()` shows both. Add it with `.addNode(guard.id, guard.node)` and
 * `.addConditionalEdges(guard.id, guard.route, guard.pathMap)`, then route your decision node to `guard.id`.
 * Node names stay typed, so the builder checks every edge. Options are validated here.
 *
 * @example
 * ```ts
 * const guard = repeatQueryGuard({ query_parser: "JsonishQueryParser", on_ok: "search", on_repeat: "answer", hint: true });
 * const graph = new StateGraph(State)
 *   .addNode("decide", decide)
 *   .addNode("search", withQueryHistory(search, guard.router.queryOf))
 *   .addNode("answer", answer)
 *   .addNode(guard.id, guard.node)
 *   .addConditionalEdges(guard.id, guard.route, guard.pathMap)
 *   .addConditionalEdges("decide", routeDecision, [guard.id, "answer"]);
 * ```
 */
export function repeatQueryGuard<
  const OnOk extends string,
  const OnRepeat extends string,
  const Id extends string = "guard_repeat_query",
  S extends RepeatQueryState = RepeatQueryState,
>(options: RepeatQueryGuardOptions<S, OnOk, OnRepeat, Id>): RepeatQueryGuard<S, OnOk, OnRepeat, Id> {
  const { id, hint = false, ...routerOptions } = options ?? ({} as RepeatQueryGuardOptions<S, OnOk, OnRepeat, Id>);
  if (id !== undefined && (typeof id !== "string" || id === "")) {
    throw new GuardOptionsError("Invalid repeat-query guard options:\n- id: must be a non-empty node name");
  }
  const router = repeatQueryRouter<S>(routerOptions);
  const buildHint = hint === true ? defaultRepeatHint : hint === false ? undefined : hint;
  const decide = (state: S) => {
    const query = router.queryOf(state);
    const asked = state.retrievalQueriesAskedNorm ?? [];
    return { query, asked, verdict: decideRepeatQuery(query, asked) };
  };
  return {
    id: id ?? ("guard_repeat_query" as Id),
    node: (state) => {
      if (buildHint === undefined) return {};
      const { query, asked, verdict } = decide(state);
      return { repeatQueryHint: verdict === "ok" ? null : buildHint({ query, asked }) };
    },
    // Routing by label (not by node name) names both edges, even when on_ok and on_repeat are the same node.
    route: (state) => (decide(state).verdict === "ok" ? "on_ok" : "on_repeat"),
    pathMap: { on_ok: options.on_ok, on_repeat: options.on_repeat },
    router,
  };
}
