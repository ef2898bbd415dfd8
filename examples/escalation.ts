/**
 * Escalation, end to end: a scripted agent keeps writing the same file, whose diagnostics fail. The guards block the
 * repeat and ask what will be different (level 1), present explicit options (level 2, twice: no person is asked
 * before the 5th identical call), stop and ask a person with `interrupt()` (level 3) — answered here from the script and resumed with `Command({ resume })` — and, when
 * the agent repeats the call anyway, end the run with an explanation (level 4). The tools are the demo's project
 * tools (examples/workspace.ts), with a `write_to_file` that runs diagnostics on what it writes.
 *
 *   npm run example:escalation
 */
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import {
  escalationHook,
  type GuardArtifact,
  GuardedToolNode,
  GuardMessagesState,
  guardVerdict,
  isEscalationInterrupt,
  type ToolGuardState,
} from "langgraph-guards";
import { ScriptedChatModel, scriptedWrapUp } from "langgraph-guards/testing";
import { z } from "zod";
import { createWorkspaceTools, sampleProject } from "./workspace.js";

/** `write_to_file` with diagnostics: they fail while the code imports pygame (it is not installed). */
const writeToFile = tool(
  async ({ path, content }) => {
    if (content.includes("import pygame")) {
      throw new Error('{"error": "diagnostics_failed", "detail": "ModuleNotFoundError: No module named \'pygame\'"}');
    }
    return `Wrote ${content.length} characters to ${path}`;
  },
  {
    name: "write_to_file",
    description: "Create or overwrite a file; runs diagnostics on Python code.",
    schema: z.object({ path: z.string(), content: z.string() }),
  },
);
/** The other project tools, as in the demo's scenarios. */
const otherTools = createWorkspaceTools(sampleProject()).filter((t) => t.name !== "write_to_file");

const GAME = "import pygame\n\npygame.init()\nscreen = pygame.display.set_mode((640, 480))\n";
const write = { name: "write_to_file", args: { path: "game.py", content: GAME } };

/** Prints the run of the escalation example through `print` (console.log by default). */
export async function runEscalationExample(print: (line: string) => void = console.log): Promise<ToolGuardState> {
  const llm = new ScriptedChatModel([
    { content: "I'll write the game.", toolCalls: [write] },
    { content: "Let me write the file again.", toolCalls: [write] }, // strike 1 → level 1
    { content: "Retrying the write.", toolCalls: [write] }, // strike 2 → level 2
    // The 4th identical call: still level 2 (no person is asked before the 5th, as Cline and Qwen Code stop there).
    { content: "Trying once more.", toolCalls: [write] }, // strike 3 → level 2
    { content: "One more time.", toolCalls: [write] }, // strike 4, the 5th call → level 3: a person is asked
    { content: "Thanks! Writing it again.", toolCalls: [write] }, // strike 5 → level 4: the run ends
    "never reached",
  ]);
  const tools = new GuardedToolNode([writeToFile, ...otherTools]);
  // When the guards end the run, a chat model without tools writes the final message in its own words (here the
  // scripted model's wrap-up); the guards' explanation stays in its metadata.
  const wrapUp = { model: new ScriptedChatModel((messages) => scriptedWrapUp(messages)) };
  const agent = createReactAgent({
    llm,
    tools,
    stateSchema: GuardMessagesState,
    postModelHook: escalationHook(tools, { wrapUp }),
    checkpointer: new MemorySaver(),
  });
  const config = { configurable: { thread_id: "escalation-example" } };

  const first = await agent.invoke({ messages: [{ role: "user", content: "Write a small pygame game." }] }, config);
  show(first.messages, print);

  // Level 3: the run is paused; the question is in the state's tasks.
  const snapshot = await agent.getState(config);
  const ask = snapshot.tasks.flatMap((t) => t.interrupts.map((i) => i.value)).find(isEscalationInterrupt);
  if (ask === undefined) throw new Error("expected the escalation interrupt");
  print("\n  level 3 · interrupt() — the run waits for a person (paused; the checkpointer keeps it until the answer)");
  print(`    question: ${ask.question}`);
  print(
    `    tool: ${ask.tool}, attempts: ${ask.attempts}, previous result: ${firstLine(ask.previousResult?.text ?? "")}`,
  );
  const answer = "pygame is not installed here. Install it with pip first, or use tkinter.";
  print(`    the person answers: "${answer}"\n`);

  const resumed = await agent.invoke(new Command({ resume: answer }), config);
  show(resumed.messages.slice(first.messages.length), print);
  return resumed.toolGuard;
}

function firstLine(text: string, max = 90): string {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

const LEVEL_NAMES = [
  "",
  "level 1 · ask what will be different",
  "level 2 · explicit options",
  "level 3 · a person answered",
  "level 4 · run ended",
];

function show(messages: BaseMessage[], print: (line: string) => void): void {
  for (const m of messages) {
    if (AIMessage.isInstance(m)) {
      const text = typeof m.content === "string" ? m.content : "";
      const calls = (m.tool_calls ?? []).map((c) => c.name).join(", ");
      const verdict = guardVerdict([m]); // why the guards ended the run, when this message ends it
      if (verdict?.guard === "tool-calls") {
        const by = verdict.wrapUp === "model" ? "the model's own wrap-up, tools off" : "the guards' message";
        print(`  ${LEVEL_NAMES[4]}, the final AI message (${by}):`);
        for (const line of text.split("\n")) print(`    │ ${line}`);
        print(`    the guards' reason (guardVerdict): ${firstLine(verdict.message, 110)}`);
      } else print(`  model: ${text}${calls ? `  → ${calls}` : ""}`);
      continue;
    }
    if (!ToolMessage.isInstance(m)) continue;
    const guard = (m.artifact as { guard?: GuardArtifact } | undefined)?.guard;
    if (!guard?.blocked) {
      print(`    ${m.name}: ran, ${m.status === "error" ? "failed" : "ok"}: ${firstLine(String(m.content), 70)}`);
      continue;
    }
    const level = guard.escalation ?? 1;
    print(`    ${m.name}: BLOCKED, ${LEVEL_NAMES[level] ?? `level ${level}`} (strike ${guard.strikes})`);
    const content = String(m.content);
    const lines = content.split("\n");
    if (level === 1) print(`      ${lines.filter((l) => l.startsWith("What will you do")).join("")}`);
    if (level === 2) {
      for (const l of lines.filter((x) => /^\[[A-D]\]|^You've now tried/.test(x))) print(`      ${l}`);
    }
    if (level === 3) {
      print(`      the model reads: ${content.slice(content.indexOf("The user answered:")).replace("\n", " ")}`);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const state = await runEscalationExample();
  console.log(
    `\nstrikes in the thread: ${state.escalation.strikes}; blocked calls kept: ${state.escalation.blocked.length}`,
  );
}
