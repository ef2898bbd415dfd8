/** Shared by the escalation tests and their SQLite fixture: tools that fail as in seed 003, and an agent. */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { type BaseCheckpointSaver, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import {
  escalationHook,
  GuardedToolNode,
  type GuardedToolNodeOptions,
  GuardMessagesState,
  type ToolGuardOptions,
} from "../../src/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";

/**
 * `write_file` fails with the seed's `diagnostics_failed` for code that imports pygame (and succeeds otherwise),
 * `update_record` always fails with one error, `run` echoes its command.
 */
export function escalationTools() {
  const files = new Map<string, string>();
  return [
    tool(
      async ({ path, content }) => {
        if (content.includes("pygame"))
          throw new Error('{"error": "diagnostics_failed", "detail": "pygame not installed"}');
        files.set(path, content);
        return `Wrote ${content.length} characters to ${path}.`;
      },
      {
        name: "write_file",
        description: "Write a file.",
        schema: z.object({ path: z.string(), content: z.string() }),
      },
    ),
    tool(
      async () => {
        throw new Error("field 'status' is read-only");
      },
      {
        name: "update_record",
        description: "Update a record.",
        schema: z.object({ id: z.string(), fields: z.record(z.string(), z.unknown()) }),
      },
    ),
    tool(async ({ cmd }) => `$ ${cmd}\nok`, {
      name: "run",
      description: "Run a command.",
      schema: z.object({ cmd: z.string() }),
    }),
  ];
}

export interface EscalationAgentOptions {
  guard?: GuardedToolNodeOptions;
  /** A checkpointer, or false for none. Default a MemorySaver. */
  checkpointer?: BaseCheckpointSaver | false;
  interrupt?: boolean;
  /** Add the escalation hook (default true). */
  hook?: boolean;
  tools?: GuardedToolNode;
  version?: "v1" | "v2";
  threadId?: string;
}

/** A createReactAgent with a GuardedToolNode, the escalation hook and a scripted model. */
/**
 * Guard options that walk seed 003's levels at its pace: level 3 at the third blocked duplicate (`askFrom: 1`). The
 * default waits for the 5th identical call (issue 43, class 8; test/scenarios/fifth-call-stop.test.ts); these tests
 * are about what each level does, so they keep the seed's pace unless the test sets its own.
 */
export function seedPace<T extends ToolGuardOptions>(guard: T = {} as T): T {
  return { ...guard, escalation: { askFrom: 1, ...guard.escalation } };
}

export function buildEscalationAgent(steps: ScriptStep[], opts: EscalationAgentOptions = {}) {
  const llm = new ScriptedChatModel(steps);
  const tools = opts.tools ?? new GuardedToolNode(escalationTools(), seedPace(opts.guard));
  const checkpointer = opts.checkpointer === false ? undefined : (opts.checkpointer ?? new MemorySaver());
  const agent = createReactAgent({
    llm,
    tools,
    stateSchema: GuardMessagesState,
    postModelHook: opts.hook === false ? undefined : escalationHook(tools, { interrupt: opts.interrupt }),
    checkpointer,
    version: opts.version ?? "v1",
  });
  const threadId = opts.threadId ?? randomUUID();
  return {
    agent,
    llm,
    tools,
    threadId,
    config: { configurable: { thread_id: threadId }, recursionLimit: 100 },
  };
}

/**
 * What a provider would reject in a message history: every AI tool call must be answered by exactly one
 * ToolMessage with its id and name, right after the AI message (before any other AI or human message), and no
 * ToolMessage may answer a call that is not there. With `pendingLast`, the last AI message may still wait for its
 * answers (a run paused before its tools). Returns the problems found (empty when valid).
 */
export function validHistory(messages: BaseMessage[], opts: { pendingLast?: boolean } = {}): string[] {
  const problems: string[] = [];
  let i = 0;
  while (i < messages.length) {
    const m = messages[i] as BaseMessage;
    i += 1;
    if (ToolMessage.isInstance(m)) {
      problems.push(`message ${i - 1}: a ToolMessage (${m.tool_call_id}) that answers no call`);
      continue;
    }
    if (!AIMessage.isInstance(m)) continue;
    const calls = m.tool_calls ?? [];
    const replies: ToolMessage[] = [];
    while (i < messages.length && ToolMessage.isInstance(messages[i])) replies.push(messages[i++] as ToolMessage);
    if (calls.length === 0) {
      if (replies.length > 0) problems.push(`message ${i}: ToolMessages after an AI message without calls`);
      continue;
    }
    if (opts.pendingLast && replies.length === 0 && i === messages.length) continue;
    for (const call of calls) {
      const answers = replies.filter((r) => r.tool_call_id === call.id);
      if (answers.length !== 1) problems.push(`call ${call.id} (${call.name}): ${answers.length} ToolMessages`);
      else if (answers[0]?.name !== call.name) problems.push(`call ${call.id}: answered as ${answers[0]?.name}`);
    }
    const ids = new Set(calls.map((c) => c.id));
    for (const r of replies) if (!ids.has(r.tool_call_id)) problems.push(`ToolMessage ${r.tool_call_id}: no such call`);
  }
  return problems;
}
