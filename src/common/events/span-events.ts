// Guard events as OpenTelemetry span events, without an OpenTelemetry package: a span is anything with `addEvent`.
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { isGuardStreamEvent } from "./stream-events.js";

/**
 * A span attribute's value, as OpenTelemetry accepts it (the guard events' fields are strings, numbers and booleans).
 *
 * @example
 * ```ts
 * const attributes: Record<string, SpanAttributeValue> = { "langgraph_guards.tool": "get_weather" };
 * ```
 */
export type SpanAttributeValue = string | number | boolean;

/**
 * What {@link guardSpanEvents} needs of a span: OpenTelemetry's `Span` (from `@opentelemetry/api`) has it.
 *
 * @example
 * ```ts
 * const events: { name: string; attributes?: Record<string, SpanAttributeValue> }[] = [];
 * const span: SpanEventTarget = { addEvent: (name, attributes) => events.push({ name, attributes }) };
 * ```
 */
export interface SpanEventTarget {
  /** Adds an event to the span (OpenTelemetry's `Span.addEvent`). */
  addEvent(name: string, attributes?: Record<string, SpanAttributeValue>): unknown;
}

const PREFIX = "langgraph_guards.";

/** One guard event's fields as span attributes: `langgraph_guards.<field>` (all but `source`). */
function attributesOf(event: object): Record<string, SpanAttributeValue> {
  const attributes: Record<string, SpanAttributeValue> = {};
  for (const [key, value] of Object.entries(event)) {
    if (key === "source") continue;
    if (typeof value === "string" || typeof value === "boolean") attributes[`${PREFIX}${key}`] = value;
    else if (typeof value === "number" && Number.isFinite(value)) attributes[`${PREFIX}${key}`] = value;
  }
  return attributes;
}

class GuardSpanEventsHandler extends BaseCallbackHandler {
  name = "langgraph_guards_span_events";

  constructor(private readonly spanOf: () => SpanEventTarget | undefined) {
    // Awaited where the guard dispatches the event: the span gets it before the run goes on, so before you end it.
    super({ _awaitHandler: true });
  }

  override handleCustomEvent(eventName: string, data: unknown): void {
    if (!eventName.startsWith(PREFIX) || !isGuardStreamEvent(data)) return;
    try {
      this.spanOf()?.addEvent(eventName, attributesOf(data));
    } catch {
      // A tracing failure must not fail the turn.
    }
  }
}

/**
 * A LangChain callback handler that adds every guard event of a run to an OpenTelemetry span, as a span event
 * named `langgraph_guards.<kind>` (`langgraph_guards.blocked`, `langgraph_guards.loop`, …) whose attributes are
 * the event's fields, `langgraph_guards.<field>` (`tool`, `rule`, `count`, `level`, `message`, …). Pass the span,
 * or a function that returns the span to use when an event comes (`undefined`: the event is dropped). Other
 * custom events and other callbacks are left alone; a failing span never fails the run.
 *
 * @param span - the span (OpenTelemetry's `Span`, or anything with its `addEvent`), or a function giving it.
 * @returns a callback handler for the `callbacks` of `invoke`, `stream` or `streamEvents`.
 *
 * @example
 * ```ts
 * import { trace } from "@opentelemetry/api";
 *
 * await trace.getTracer("my-app").startActiveSpan("agent", async (span) => {
 *   await agent.invoke(input, { ...config, callbacks: [guardSpanEvents(span)] });
 *   span.end();
 * });
 * ```
 */
export function guardSpanEvents(span: SpanEventTarget | (() => SpanEventTarget | undefined)): BaseCallbackHandler {
  return new GuardSpanEventsHandler(typeof span === "function" ? span : () => span);
}
