/**
 * Two guarded graphs with a slow tool that has a side effect, to see what the LangGraph server does with two runs on
 * one thread at once (`multitaskStrategy`): `slow_react` (createReactAgent + GuardedToolNode) and `slow_agent`
 * (createAgent + guardMiddleware). Each person's message makes the scripted model call `update_ticket` with the same
 * arguments, then repeat the call once within the run (the guards block the repeat), then answer.
 *
 * `update_ticket` appends a line to a log (a JSON object per line) when it starts, the side effect, and another when
 * it finishes `SLOW_TOOL_MS` later (default 1500 ms); an aborted run (the server cancelled it) never finishes. The log
 * is `$SIDE_EFFECTS_LOG`, by default `langgraph-guards-side-effects.jsonl` in the OS temporary folder. Offline: no API
 * key, no network.
 */
import { appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { escalationHook, GuardedToolNode, GuardMessagesState } from "langgraph-guards";
import { guardMiddleware } from "langgraph-guards/middleware";
import { ScriptedChatModel } from "langgraph-guards/testing";
import { z } from "zod";

const LOG = process.env.SIDE_EFFECTS_LOG ?? join(tmpdir(), "langgraph-guards-side-effects.jsonl");
const SLOW_MS = Number(process.env.SLOW_TOOL_MS ?? 1500);

/** One line of the side-effect log. */
export interface SideEffect {
  phase: "start" | "end";
  thread_id: string;
  run_id: string;
  call_id: string;
  ticket: number;
  status: string;
  /** `Date.now()` when the line was written. */
  at: number;
}

/** `update_ticket`: changes a ticket in a slow outside system (the log line is the change). */
export const updateTicket = tool(
  async ({ ticket, status }, config) => {
    const { thread_id = "", run_id = "" } = (config.configurable ?? {}) as { thread_id?: string; run_id?: string };
    const line = (phase: SideEffect["phase"]) => {
      const entry: SideEffect = {
        phase,
        thread_id,
        run_id,
        call_id: config.toolCall?.id ?? "",
        ticket,
        status,
        at: Date.now(),
      };
      appendFileSync(LOG, `${JSON.stringify(entry)}\n`);
    };
    line("start");
    await sleep(SLOW_MS, undefined, { signal: config.signal });
    line("end");
    return `Ticket ${ticket} is now ${status}.`;
  },
  {
    name: "update_ticket",
    description: "Set the status of a ticket",
    schema: z.object({ ticket: z.number(), status: z.string() }),
  },
);

/** Tool results since the person's last message. */
const repliesSincePerson = (messages: BaseMessage[]) => {
  let replies = 0;
  for (let i = messages.length - 1; i >= 0 && messages[i]?.getType() !== "human"; i--)
    if (messages[i]?.getType() === "tool") replies += 1;
  return replies;
};

/** Per person's message: the call, the same call again (a repeat within the run), then an answer. */
const model = () =>
  new ScriptedChatModel((messages) =>
    repliesSincePerson(messages) < 2
      ? { toolCalls: [{ name: "update_ticket", args: { ticket: 7, status: "closed" } }] }
      : "Ticket 7 is closed.",
  );

const tools = new GuardedToolNode([updateTicket]);

export const slowReact = createReactAgent({
  llm: model(),
  tools,
  stateSchema: GuardMessagesState,
  postModelHook: escalationHook(tools),
});

export const slowAgent = createAgent({
  model: model(),
  tools: [updateTicket],
  middleware: [guardMiddleware()],
});
