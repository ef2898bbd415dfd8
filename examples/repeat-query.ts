/**
 * The repeat-query guard in its typical placement (as its spec places it: docs/origins.md): a decision step asks the
 * model whether the evidence is sufficient; "retrieve" goes through the guard to the search node, which loops back
 * to the decision. The guard breaks the loop `decide -> retrieve same query -> same evidence -> decide -> ...`.
 *
 * Run: npx tsx examples/repeat-query.ts
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage } from "@langchain/core/messages";
import {
  Annotation,
  type BaseCheckpointSaver,
  END,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { GuardState, repeatQueryGuard, withQueryHistory } from "langgraph-guards";
import { parseJsonish, parseJsonishQuery } from "langgraph-guards/core";
import { ScriptedChatModel } from "langgraph-guards/testing";

/** A tiny code index to search. */
const INDEX: Record<string, string> = {
  paymentservice: "class PaymentService { charge(order) { ... } refund(id) { ... } }",
  orderservice: "class OrderService { place(cart) { ... } }",
};

/** The pipeline state: messages, the guard channels, the model's last JSON-ish response, and the evidence found. */
export const RetrievalState = Annotation.Root({
  ...MessagesAnnotation.spec,
  ...GuardState.spec,
  lastModelResponse: Annotation<string | null>({ reducer: (_, b) => b, default: () => null }),
  evidence: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
  retrievals: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
});
type State = typeof RetrievalState.State;

/** The decision router of the pipeline (the spec's `json_decision_router`): reads `action` from the response. */
function routeDecision(state: State): "guard_repeat_query" | "answer_sure" | "answer_not_sure" {
  const decision = parseJsonish(state.lastModelResponse ?? "", (v) => typeof v === "object" && v !== null);
  const action = (decision as { action?: unknown } | undefined)?.action;
  if (action === "retrieve") return "guard_repeat_query";
  if (action === "sufficient") return "answer_sure";
  return "answer_not_sure";
}

/**
 * Builds the pipeline. `hint: true` makes the guard tell the model what was already asked.
 *
 * @example
 * ```ts
 * const graph = buildRetrievalGraph(llm, { checkpointer: new MemorySaver() });
 * ```
 */
export function buildRetrievalGraph(
  llm: BaseChatModel,
  opts: { checkpointer?: BaseCheckpointSaver; hint?: boolean } = {},
) {
  // The spec's step: `repeat_query_guard` with `query_parser: JsonishQueryParser`, on_ok search, on_repeat a fallback.
  const guard = repeatQueryGuard({
    query_parser: "JsonishQueryParser",
    on_ok: "search",
    on_repeat: "answer_not_sure",
    hint: opts.hint ?? false,
  });
  const search = async (state: State) => {
    const query = guard.router.queryOf(state);
    const key = query.toLowerCase().replace(/\s+|class|definition/g, "");
    return { evidence: [INDEX[key] ?? `no match for "${query}"`], retrievals: 1 };
  };
  return new StateGraph(RetrievalState)
    .addNode("decide", async (state: State) => {
      const hint = state.repeatQueryHint ? [new AIMessage(`(guard) ${state.repeatQueryHint}`)] : [];
      const response = await llm.invoke([...state.messages, ...hint]);
      return { messages: [response], lastModelResponse: String(response.content) };
    })
    .addNode("search", withQueryHistory(search, guard.router.queryOf))
    .addNode("answer_sure", (state: State) => ({ messages: [new AIMessage(`Answer: ${state.evidence.join(" | ")}`)] }))
    .addNode("answer_not_sure", (state: State) => ({
      messages: [new AIMessage(`Not sure. Evidence so far: ${state.evidence.join(" | ") || "none"}`)],
    }))
    .addNode(guard.id, guard.node)
    .addConditionalEdges(guard.id, guard.route, guard.pathMap)
    .addEdge(START, "decide")
    .addConditionalEdges("decide", routeDecision, [guard.id, "answer_sure", "answer_not_sure"])
    .addEdge("search", "decide")
    .addEdge("answer_sure", END)
    .addEdge("answer_not_sure", END)
    .compile({ checkpointer: opts.checkpointer ?? new MemorySaver() });
}

/** A model that keeps asking for the same query, in different spacing and case. */
export function loopingModel(): ScriptedChatModel {
  return new ScriptedChatModel([
    '{"action": "retrieve", "query": "class PaymentService definition"}',
    "```json\n{'action': 'retrieve', 'query': '  CLASS   PaymentService   definition ',}\n```",
    '{"action": "retrieve", "query": "class paymentservice DEFINITION"}',
  ]);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const graph = buildRetrievalGraph(loopingModel(), { hint: true });
  const config = { configurable: { thread_id: "retrieval-demo" } };
  const out = await graph.invoke({ messages: [{ role: "user", content: "Where is PaymentService defined?" }] }, config);
  for (const m of out.messages) {
    const text = String(m.content).replace(/\s+/g, " ");
    const query = m.getType() === "ai" ? parseJsonishQuery(m.content) : "";
    console.log(
      `${m.getType().padEnd(6)} ${text}${query && text.includes("retrieve") ? `   → query: "${query}"` : ""}`,
    );
  }
  console.log(`\nretrievals run: ${out.retrievals}; asked: ${JSON.stringify(out.retrievalQueriesAskedNorm)}`);
  console.log(`hint: ${out.repeatQueryHint}\n`);
  console.log(graph.getGraph().drawMermaid());
}
