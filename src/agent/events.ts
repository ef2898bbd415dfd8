/**
 * Where guard events go in a graph: LangGraph's custom stream (the `writer` a node's config or a middleware's
 * runtime carries), and the `guardLog` channel through the update the adapter returns.
 */
import type { GuardStreamEvent } from "../core/stream-events.js";

/** What carries LangGraph's custom-stream writer: a node's config, a middleware's runtime, a tool's runtime. */
export type WriterHost = { writer?: ((chunk: unknown) => void) | undefined } | undefined | null;

/**
 * Writes the events to the custom stream (nothing when events are off or nobody streams) and returns them for the
 * `guardLog` update (none when off).
 */
export function emitGuardEvents(host: WriterHost, events: readonly GuardStreamEvent[], on = true): GuardStreamEvent[] {
  if (!on || events.length === 0) return [];
  const writer = host?.writer;
  if (typeof writer === "function") for (const event of events) writer(event);
  return [...events];
}
