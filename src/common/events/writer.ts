// Where guard events go in a graph: LangGraph's custom stream, LangChain's callbacks, the `guardLog` update.
import { dispatchCustomEvent } from "@langchain/core/callbacks/dispatch";
import type { GuardStreamEvent } from "./stream-events.js";

/** What carries LangGraph's custom-stream writer: a node's config, a middleware's runtime, a tool's runtime. */
export type WriterHost = { writer?: ((chunk: unknown) => void) | undefined } | undefined | null;

/** Dispatches each event as the custom event `langgraph_guards.<kind>` to the current run's callbacks; never throws. */
async function dispatchEvents(events: readonly GuardStreamEvent[]): Promise<void> {
  for (const event of events) {
    try {
      await dispatchCustomEvent(`langgraph_guards.${event.kind}`, event);
    } catch {
      // No run to report to, or a handler failed: the custom stream and guardLog still carry the event.
    }
  }
}

/** Writes the events to the custom stream and the run's callbacks; returns them for `guardLog` (none when off). */
export function emitGuardEvents(host: WriterHost, events: readonly GuardStreamEvent[], on = true): GuardStreamEvent[] {
  if (!on || events.length === 0) return [];
  const writer = host?.writer;
  if (typeof writer === "function") for (const event of events) writer(event);
  void dispatchEvents(events);
  return [...events];
}
