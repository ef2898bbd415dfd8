/**
 * A CommonJS program loads the CommonJS copies of `langchain` and `@langchain/langgraph` (`require`), while the guards
 * (an ES module, also under `require()` on Node 20.19+) load the ES module copies: two copies of LangGraph in one
 * process (issue 61, item 1). What one copy registers (a zod field's reducer in `withLangGraph`'s registry) the other
 * cannot see, so nothing a guard declares may depend on which copy reads it. Here the CommonJS copies are taken with
 * `createRequire`, as a `.cjs` file or TypeScript compiled to CommonJS gets them; the guards are this checkout's source.
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { registerZodForms } from "../../src/channels/index.js";
import {
  escalationHook,
  escalationNode,
  GuardedToolNode,
  GuardMessagesState,
  guardMessagesStateSchema,
  guardVerdict,
} from "../../src/index.js";
import { guardMiddleware, loopDetectMiddleware, safetyLimitsMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";

const require = createRequire(import.meta.url);
const langchain: typeof import("langchain") = require("langchain");
const langgraph: typeof import("@langchain/langgraph") = require("@langchain/langgraph");
const prebuilt: typeof import("@langchain/langgraph/prebuilt") = require("@langchain/langgraph/prebuilt");
const { tool }: typeof import("@langchain/core/tools") = require("@langchain/core/tools");
const { z }: typeof import("zod") = require("zod");
const zodOfCommonJs: typeof import("@langchain/langgraph/zod") = require("@langchain/langgraph/zod");

const getWeather = tool(
  async () => {
    throw new Error("weather service unavailable");
  },
  { name: "get_weather", description: "Current weather in a city", schema: z.object({ city: z.string() }) },
);
const forever = () => new ScriptedChatModel(() => ({ toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }));
const input = { messages: [{ role: "user", content: "Weather in Paris?" }] };

describe("the guards under the CommonJS copy of LangGraph", () => {
  it("the README's createAgent quick start loaded with require() asks at strike 3 and ends at strike 4", async () => {
    // Before: the first tool call threw GuardStateError ("the 'guardLog' channel holds … an array"): the CommonJS
    // createAgent saw no reducer on the guard channels and stored each update as the value.
    expect(require.resolve("langchain")).toMatch(/\.cjs$/);
    const tools = [getWeather];
    const agent = langchain.createAgent({
      model: forever(),
      tools,
      checkpointer: new langgraph.MemorySaver(),
      middleware: [
        guardMiddleware({ agentTools: tools }),
        loopDetectMiddleware({ turns: { outputOf: (m) => m.text } }),
      ],
    });
    const config = { configurable: { thread_id: "cjs" } };
    const first = await agent.invoke(input, config);
    expect(langgraph.isInterrupted(first)).toBe(true);
    expect(langgraph.isInterrupted(first) && first.__interrupt__[0]?.value).toMatchObject({ level: 3, attempts: 3 });
    const last = await agent.invoke(new langgraph.Command({ resume: "Say you cannot get it." }), config);
    expect(guardVerdict(last)).toMatchObject({ guard: "tool-calls", level: 4 });
    expect(last.toolGuard.escalation.strikes).toBe(4);
    expect(last.guardLog.total).toBeGreaterThan(0);
  });

  it("safetyLimitsMiddleware's counters keep their reducer: the iteration limit ends the run", async () => {
    const agent = langchain.createAgent({
      model: new ScriptedChatModel((i) => ({ toolCalls: [{ name: "get_weather", args: { city: `city ${i}` } }] })),
      tools: [getWeather],
      middleware: [safetyLimitsMiddleware({ maxIterations: 4, maxConsecutiveFailures: 50 })],
    });
    const result = await agent.invoke(input, { recursionLimit: 100 });
    expect(guardVerdict(result)).toMatchObject({ guard: "limits", rule: "iterations" });
  });

  it("createReactAgent from require() with GuardedToolNode and GuardMessagesState ends the run in words", async () => {
    const tools = new GuardedToolNode([getWeather]);
    const agent = prebuilt.createReactAgent({
      llm: forever(),
      tools,
      stateSchema: GuardMessagesState,
      postModelHook: escalationHook(tools),
    });
    const result = await agent.invoke(input, { recursionLimit: 100 });
    expect(guardVerdict(result)).toMatchObject({ guard: "tool-calls", level: 4 });
  });

  it("a StateGraph from require() on guardMessagesStateSchema (zod) keeps the guards' reducers", async () => {
    // What the package's CommonJS entry does (scripts/build.mjs writes the call into dist/index.cjs; check-install
    // runs this graph from the packed tarball): register the zod forms' reducers in the registry of LangGraph's
    // CommonJS copy, which this StateGraph reads. Without it: no reducer, no default, and GuardedToolNode found no
    // guard channels (GuardStateMissingError).
    registerZodForms(zodOfCommonJs.schemaMetaRegistry);
    const tools = new GuardedToolNode([getWeather]);
    const llm = forever().bindTools([getWeather]);
    const graph = new langgraph.StateGraph(guardMessagesStateSchema)
      .addNode("agent", async (state) => ({ messages: [await llm.invoke(state.messages)] }))
      .addNode("tools", tools)
      .addNode("escalation", escalationNode(tools))
      .addEdge(langgraph.START, "agent")
      .addEdge("agent", "escalation")
      .addConditionalEdges("escalation", (state) => (guardVerdict(state) ? langgraph.END : "tools"))
      .addEdge("tools", "agent")
      .compile();
    const result = await graph.invoke(input, { recursionLimit: 100 });
    expect(result.messages.length).toBeGreaterThan(10);
    expect(guardVerdict(result)).toMatchObject({ guard: "tool-calls", level: 4 });
  });
});
