/**
 * `npm run bench:channels`: what each guard channel weighs in a checkpoint after a long thread. A scripted
 * createReactAgent (GuardedToolNode + guardHooks: escalation and loop detection) runs N turns of mixed calls (reads,
 * writes, repeats, 1 KB–4 KB results, a person's message every 20 turns) on MemorySaver; the latest checkpoint's
 * channels are serialized with the checkpointer's own serde and measured. Every guard channel is bounded by an
 * option, so its size stops growing: the table shows it at two thread lengths side by side.
 *
 *   npm run bench:channels [-- --turns 200] [-- --quick]
 */
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createWorkspaceTools } from "../examples/workspace.js";
import { escalationHook, GuardedToolNode, GuardMessagesState, guardHooks, loopDetectHook } from "../src/index.js";
import { ScriptedChatModel, type ScriptedToolCall } from "../src/testing/index.js";
import { quick, report } from "./report.js";

const CHANNELS = ["toolGuard", "guardLog", "loopGuard", "messages"] as const;

async function weigh(turns: number): Promise<Record<string, number>> {
  const files = new Map<string, string>();
  for (let i = 0; i < 30; i += 1) files.set(`src/m${i}.py`, `# module ${i}\n${"x = 1\n".repeat(150 + 40 * (i % 5))}`);
  const tools = createWorkspaceTools(files);
  const script: (ScriptedToolCall[] | string)[] = [];
  for (let t = 0; t < turns; t += 1) {
    const f = `src/m${t % 30}.py`;
    if (t % 7 === 3) script.push([{ name: "write_to_file", args: { path: f, content: `# edit ${t}\n` } }]);
    else if (t % 5 === 0) script.push([{ name: "list_files", args: { path: "src" } }]);
    else script.push([{ name: "read_file", args: { path: f } }]);
  }
  const node = new GuardedToolNode(tools);
  const checkpointer = new MemorySaver();
  const config = { configurable: { thread_id: "channels" }, recursionLimit: 10_000 };
  // A person's message every 20 turns (a new run each time), as in a chat thread.
  for (let start = 0; start < turns; start += 20) {
    const chunk = script.slice(start, start + 20).map((s) => (typeof s === "string" ? s : { toolCalls: s }));
    const agent = createReactAgent({
      llm: new ScriptedChatModel([...chunk, `Done with turns ${start}–${start + chunk.length}.`]),
      tools: node,
      stateSchema: GuardMessagesState,
      postModelHook: guardHooks(
        loopDetectHook({ loopThreshold: 1, feedback: { logger: { warn: () => undefined } } }),
        escalationHook(node),
      ),
      checkpointer,
    });
    await agent.invoke({ messages: [{ role: "user", content: `Go on (${start}).` }] }, config);
  }
  const tuple = await checkpointer.getTuple(config);
  const values = (tuple?.checkpoint.channel_values ?? {}) as Record<string, unknown>;
  const sizes: Record<string, number> = {};
  for (const name of CHANNELS) {
    const [, bytes] = await checkpointer.serde.dumpsTyped(values[name] ?? null);
    sizes[name] = bytes.length;
  }
  return sizes;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const at = args.indexOf("--turns");
  const long = at >= 0 ? Number(args[at + 1]) : quick ? 60 : 400;
  const lengths = [Math.max(20, Math.floor(long / 4)), Math.max(40, Math.floor(long / 2)), long];
  const sizes: Record<string, number>[] = [];
  for (const n of lengths) sizes.push(await weigh(n));
  console.log(`guard channels in the latest checkpoint (bytes, the checkpointer's serde), node ${process.version}`);
  console.log(["channel".padEnd(12), ...lengths.map((n) => `${n} turns`.padStart(12))].join("  "));
  for (const name of CHANNELS) {
    console.log([name.padEnd(12), ...sizes.map((s) => String(s[name] ?? 0).padStart(12))].join("  "));
  }
  // Every guard channel is bounded by an option: the longest thread's channel weighs about what the shorter one's
  // does (messages, not a guard channel, grows with the thread).
  const kb = (n: number) => `${(n / 1000).toFixed(1)} KB`;
  const [, middle, last] = sizes as [Record<string, number>, Record<string, number>, Record<string, number>];
  report(
    (["toolGuard", "guardLog", "loopGuard"] as const).map((name) => {
      const ratio = (last[name] ?? 0) / Math.max(1, middle[name] ?? 0);
      return {
        bench: "channels",
        figure: `${name} channel per checkpoint, ${long} vs ${lengths[1]} turns`,
        ours: kb(last[name] ?? 0),
        anchor: `${kb(middle[name] ?? 0)} at ${lengths[1]} turns`,
        ratio: `${ratio.toFixed(2)}x`,
        goal: "bounded (<= 1.5x)",
        met: ratio <= 1.5,
      };
    }),
  );
}

await main();
