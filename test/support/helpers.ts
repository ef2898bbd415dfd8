import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import { type BaseCheckpointSaver, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createWorkspaceTools, type Files, sampleProject } from "../../examples/workspace.js";
import {
  type GuardArtifact,
  GuardedToolNode,
  type GuardedToolNodeOptions,
  GuardMessagesState,
} from "../../src/index.js";
import { ScriptedChatModel, type ScriptedToolCall } from "../../src/testing/index.js";

/** What happened to one scripted tool call. */
export interface CallFate {
  name: string;
  /** "ran" (the tool ran and succeeded), "failed" (it ran and failed), or the level that blocked it. */
  fate: "ran" | "failed" | GuardArtifact["rule"];
  content: string;
}

/** A call written as in the seed: name and args. */
export const call = (name: string, args: Record<string, unknown>): ScriptedToolCall => ({ name, args });

export interface RunOptions {
  guard?: GuardedToolNodeOptions;
  files?: Files;
  checkpointer?: BaseCheckpointSaver;
  threadId?: string;
  configurable?: Record<string, unknown>;
  version?: "v1" | "v2";
}

/** Runs a scripted createReactAgent: each element of `turns` is one AI message with those tool calls. */
export async function runTurns(turns: ScriptedToolCall[][], opts: RunOptions = {}) {
  const files = opts.files ?? sampleProject();
  const llm = new ScriptedChatModel([...turns.map((toolCalls) => ({ toolCalls })), "Finished."]);
  const agent = createReactAgent({
    llm,
    tools: new GuardedToolNode(createWorkspaceTools(files), opts.guard ?? {}),
    stateSchema: GuardMessagesState,
    checkpointer: opts.checkpointer ?? new MemorySaver(),
    version: opts.version ?? "v1",
  });
  const result = await agent.invoke(
    { messages: [{ role: "user", content: "Work on the project." }] },
    { configurable: { thread_id: opts.threadId ?? "thread-1", ...opts.configurable }, recursionLimit: 500 },
  );
  return { result, fates: fatesOf(result.messages), files, agent };
}

/** The fate of every tool call in a message list, in order. */
export function fatesOf(messages: BaseMessage[]): CallFate[] {
  const fates: CallFate[] = [];
  for (const m of messages) {
    if (m.getType() !== "tool") continue;
    const tm = m as ToolMessage;
    const guard = (tm.artifact as { guard?: GuardArtifact } | undefined)?.guard;
    const fate = guard ? guard.rule : tm.status === "error" ? "failed" : "ran";
    fates.push({ name: tm.name ?? "", fate, content: String(tm.content) });
  }
  return fates;
}
