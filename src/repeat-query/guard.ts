/** The repeat-query guard as a graph step: a node that writes a hint, and labelled `on_ok` / `on_repeat` edges. */

import { GuardOptionsError } from "../common/options.js";
import { decideRepeatQuery } from "./core/query.js";
import {
  type RepeatQueryRouter,
  type RepeatQueryRouterOptions,
  type RepeatQueryState,
  repeatQueryRouter,
} from "./router.js";
import { defaultRepeatHint, type RepeatHintInfo } from "./texts.js";

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
  node: (state: S) => {
    /** What the model is told after a repeat (null clears it). */
    repeatQueryHint?: string | null;
  };
  /** The conditional-edge function: `"on_ok"` or `"on_repeat"` (labels of `pathMap`). */
  route: (state: S) => "on_ok" | "on_repeat";
  /** Maps the labels to the target nodes, so the drawn graph names both edges. */
  pathMap: {
    /** The node a new query goes to. */
    on_ok: OnOk;
    /** The node a repeated query goes to. */
    on_repeat: OnRepeat;
  };
  /** The router itself (returns node names), and its `queryOf` for {@link withQueryHistory}. */
  router: RepeatQueryRouter<S>;
}

/**
 * The repeat-query guard as a graph step: a node `id` (default `"guard_repeat_query"`) and two labelled conditional
 * edges, `on_ok` and `on_repeat`, so that `getGraph().drawMermaid()` shows both; node names stay typed.
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
  if (typeof hint !== "boolean" && typeof hint !== "function") {
    throw new GuardOptionsError("Invalid repeat-query guard options:\n- hint: must be true, false or a function");
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
