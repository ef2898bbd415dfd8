/**
 * Where the tool node's time goes, measured inside the agent: `npm run bench:parts [-- --quick]` (also part of
 * `npm run bench`). The same 150-turn scripted createReactAgent as `bench:overhead` (`bench/agent-script.ts`); the
 * real `GuardedToolNode` is subclassed only to time its `planCalls` (reading the turn and planning the response) and
 * the real `reduceToolGuard` is timed through the state's `toolGuard` channel. In every turn the plan is also made a
 * second time, right after the first: what the same work costs once the CPU's caches hold it, against the first time
 * in a turn, after LangGraph's own work.
 *
 * Prints µs a turn (medians of the runs). No timing is asserted: the process fails only if the guarded run
 * misbehaves (a call blocked, a tool failing) or the second plan differs from the first.
 */
import { performance } from "node:perf_hooks";
import { Annotation, type LangGraphRunnableConfig, MessagesAnnotation } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createWorkspaceTools, sampleProject } from "../examples/workspace.js";
import { emptyToolGuardState, reduceToolGuard, type ToolGuardState } from "../src/core/index.js";
import { GuardedToolNode, type GuardPlan, GuardState, type ToolGuardUpdate } from "../src/index.js";
import { ScriptedChatModel } from "../src/testing/index.js";
import { agentScript } from "./agent-script.js";
import { type Figure, median, quick, report } from "./report.js";

const TURNS = quick ? 30 : 150;
const WARMUP_RUNS = quick ? 1 : 3;
const MEASURED_RUNS = quick ? 3 : 15;

type Part = "plan" | "planAgain" | "reducer";
const PARTS: Part[] = ["plan", "planAgain", "reducer"];
const spent: Record<Part, number> = { plan: 0, planAgain: 0, reducer: 0 };

/** The `toolGuard` channel with the real reducer, timed. */
const TimedState = Annotation.Root({
  ...MessagesAnnotation.spec,
  ...GuardState.spec,
  toolGuard: Annotation<ToolGuardState, ToolGuardUpdate>({
    reducer: (current, update) => {
      const start = performance.now();
      const next = reduceToolGuard(current, update);
      spent.reducer += performance.now() - start;
      return next;
    },
    default: emptyToolGuardState,
  }),
});

/** The real node; `planCalls` timed, then made again at once (the same decisions, on warm caches). */
class TimedNode extends GuardedToolNode {
  override planCalls(input: unknown, config: LangGraphRunnableConfig = {}): GuardPlan {
    let start = performance.now();
    const plan = super.planCalls(input, config);
    spent.plan += performance.now() - start;
    start = performance.now();
    const again = super.planCalls(input, config);
    spent.planAgain += performance.now() - start;
    if (again.decisions.map((d) => d.key).join() !== plan.decisions.map((d) => d.key).join()) {
      throw new Error("the second plan of a turn differs from the first");
    }
    return plan;
  }
}

const perTurn: Record<Part, number[]> = { plan: [], planAgain: [], reducer: [] };
for (let run = 0; run < WARMUP_RUNS + MEASURED_RUNS; run += 1) {
  for (const part of PARTS) spent[part] = 0;
  const agent = createReactAgent({
    llm: new ScriptedChatModel(agentScript(TURNS, "Done."), { whenExhausted: "throw" }),
    tools: new TimedNode(createWorkspaceTools(sampleProject())),
    stateSchema: TimedState,
  });
  const state = await agent.invoke(
    { messages: [{ role: "user", content: "Create, check and review the packages." }] },
    { recursionLimit: 4 * TURNS + 10 },
  );
  const stats = state.toolGuard.stats;
  const blocked = Object.values(stats.blocked).reduce((a, b) => a + b, 0);
  if (stats.allowed !== TURNS || blocked !== 0) {
    console.error(`run ${run}: expected ${TURNS} allowed and none blocked, got ${JSON.stringify(stats)}`);
    process.exit(1);
  }
  if (run >= WARMUP_RUNS) for (const part of PARTS) perTurn[part].push((spent[part] * 1000) / TURNS);
}

const us = (part: Part) => median(perTurn[part]);
const fmt = (value: number) => `${value.toFixed(1)} µs`;
const rows: [string, Part, Part | undefined][] = [
  ["reading the turn and planning it (planCalls), first in the turn", "plan", "planAgain"],
  ["the toolGuard reducer (the call and its result)", "reducer", undefined],
];
console.log(
  `GuardedToolNode's parts in a ${TURNS}-turn scripted createReactAgent (node ${process.version}; ` +
    `medians of ${MEASURED_RUNS} runs, µs a turn)\n`,
);
for (const [what, part, again] of rows) {
  console.log(`  ${what.padEnd(68)} ${fmt(us(part)).padStart(9)}${again ? `   again at once: ${fmt(us(again))}` : ""}`);
}
const figures: Figure[] = rows.map(([what, part, again]) => ({
  bench: "parts",
  figure: `${what}, a turn`,
  ours: fmt(us(part)),
  anchor: again ? `${fmt(us(again))} again at once` : "",
  ratio: again ? `${(us(part) / us(again)).toFixed(1)}x` : "",
  goal: "",
  met: null,
}));
report(figures);
