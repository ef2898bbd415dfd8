/** A LangChain callback handler that counts what the guards did across runs. */
import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { GraphCallbackHandler, type GraphInterruptEvent } from "@langchain/langgraph";
import { isGuardStreamEvent } from "../common/events/stream-events.js";
import { guardVerdict } from "./verdict.js";

/**
 * The counters, by name: OpenTelemetry instruments named `langgraph_guards.<name>`, and the names given to
 * {@link GuardMetricsOptions.onCount}.
 *
 * - `calls.run`: tool calls that ran (a tool's end or error reached the callbacks);
 * - `calls.blocked`: calls a guard blocked (attributes `tool`, `rule`);
 * - `calls.served`: calls answered from a cache (`guard: "tool-calls"`, the result cache: the tool did not run;
 *   `guard: "file-cache"`, a file tool's cache: the file was not read again);
 * - `calls.deduped`: calls that ran and returned exactly an earlier identical call's result, answered with a short
 *   note;
 * - `runs.ended`: runs that ended (the outermost run the handler sees; one paused for a person ends when resumed);
 * - `runs.stopped`: of those, runs a guard ended (attributes `guard`, `rule`, as in `guardVerdict`);
 * - `context.chars_kept_out`: characters not sent to the model again (dedupe notes, file-cache answers).
 *
 * @example
 * ```ts
 * const name: GuardMetricName = "calls.blocked";
 * ```
 */
export type GuardMetricName =
  | "calls.run"
  | "calls.blocked"
  | "calls.served"
  | "calls.deduped"
  | "runs.ended"
  | "runs.stopped"
  | "context.chars_kept_out";

/**
 * The counts so far (see {@link GuardMetricName} for what each one counts).
 *
 * @example
 * ```ts
 * const { callsRun, blocked, served }: GuardMetricCounts = metrics.counts();
 * ```
 */
export interface GuardMetricCounts {
  /** Tool calls that ran. */
  callsRun: number;
  /** Calls a guard blocked. */
  blocked: number;
  /** Calls answered from a cache (the result cache, or a file tool's). */
  served: number;
  /** Calls whose unchanged result was answered with a short note. */
  deduped: number;
  /** Runs that ended. */
  runsEnded: number;
  /** Runs a guard ended. */
  runsStopped: number;
  /** Characters not sent to the model again. */
  charsKeptOut: number;
}

/**
 * The attributes of a count: strings only (a tool, a rule, a guard), few values each.
 *
 * @example
 * ```ts
 * const attributes: GuardMetricAttributes = { tool: "read_file", rule: "consecutive" };
 * ```
 */
export type GuardMetricAttributes = Record<string, string>;

/**
 * What {@link guardMetrics} records OpenTelemetry counters with: OpenTelemetry's `Meter` (from `@opentelemetry/api`)
 * has it; any object of this shape does.
 *
 * @example
 * ```ts
 * import { metrics } from "@opentelemetry/api";
 * const meter: GuardMeter = metrics.getMeter("my-app");
 * ```
 */
export interface GuardMeter {
  /** Creates a counter (OpenTelemetry's `Meter.createCounter`). */
  createCounter(name: string, options?: { description?: string; unit?: string }): GuardCounter;
}

/**
 * A counter a {@link GuardMeter} creates (OpenTelemetry's `Counter`).
 *
 * @example
 * ```ts
 * const counter: GuardCounter = meter.createCounter("langgraph_guards.calls.run");
 * counter.add(1, { tool: "read_file" });
 * ```
 */
export interface GuardCounter {
  /** Adds `value` to the counter, for these attributes. */
  add(value: number, attributes?: GuardMetricAttributes): void;
}

/**
 * Options of {@link guardMetrics}.
 *
 * @example
 * ```ts
 * const options: GuardMetricsOptions = { meter: false, onCount: (name, value) => statsd.increment(name, value) };
 * ```
 */
export interface GuardMetricsOptions {
  /**
   * Where the OpenTelemetry counters go: a meter of yours, or `false` for none. Default: `@opentelemetry/api`'s
   * global meter provider (`metrics.getMeter("langgraph-guards")`) when that package can be loaded; with no
   * OpenTelemetry SDK registered it records nothing.
   */
  meter?: GuardMeter | false;
  /** Called with every count as it happens (a counter's name, the amount, its attributes). */
  onCount?: (name: GuardMetricName, value: number, attributes: GuardMetricAttributes) => void;
}

const COUNTERS: Record<GuardMetricName, { field: keyof GuardMetricCounts; description: string; unit: string }> = {
  "calls.run": { field: "callsRun", description: "Tool calls that ran", unit: "{call}" },
  "calls.blocked": { field: "blocked", description: "Tool calls a guard blocked", unit: "{call}" },
  "calls.served": { field: "served", description: "Tool calls answered from a cache", unit: "{call}" },
  "calls.deduped": { field: "deduped", description: "Tool calls answered with a dedupe note", unit: "{call}" },
  "runs.ended": { field: "runsEnded", description: "Agent runs that ended", unit: "{run}" },
  "runs.stopped": { field: "runsStopped", description: "Agent runs a guard ended", unit: "{run}" },
  "context.chars_kept_out": {
    field: "charsKeptOut",
    description: "Characters not re-sent to the model",
    unit: "{char}",
  },
};

/** At most this many counts wait for `@opentelemetry/api` to load (then recorded, oldest first). */
const PENDING_LIMIT = 10_000;

/**
 * The handler {@link guardMetrics} returns: a LangChain callback handler with the counts. Pass it in the
 * `callbacks` of `invoke`, `stream` or `streamEvents`, or bind it with `.withConfig({ callbacks: [metrics] })`.
 *
 * @example
 * ```ts
 * const metrics: GuardMetrics = guardMetrics({ meter: false });
 * const served = metrics.counts().served;
 * ```
 */
export interface GuardMetrics extends BaseCallbackHandler {
  /** The counts so far (a copy). */
  counts(): GuardMetricCounts;
  /** Sets every count back to 0 (OpenTelemetry counters only go up: they are left as they are). */
  reset(): void;
}

class GuardMetricsHandler extends GraphCallbackHandler implements GuardMetrics {
  override name = "langgraph_guards_metrics";
  readonly #counts: GuardMetricCounts = {
    callsRun: 0,
    blocked: 0,
    served: 0,
    deduped: 0,
    runsEnded: 0,
    runsStopped: 0,
    charsKeptOut: 0,
  };
  readonly #onCount: GuardMetricsOptions["onCount"];
  #counters: Map<GuardMetricName, GuardCounter> | undefined;
  /** Outermost runs paused by an interrupt: their chain end is a pause, not an end (the resume's end counts). */
  readonly #paused = new Set<string | undefined>();
  /** Counts waiting for the meter (`undefined`: none will come, or the meter is there). */
  #pending: [GuardMetricName, number, GuardMetricAttributes][] | undefined;

  constructor(options: GuardMetricsOptions = {}) {
    // Awaited where the callbacks are called: the counts are up to date when the run returns.
    super({ _awaitHandler: true });
    this.#onCount = options.onCount;
    if (options.meter === false) return;
    if (options.meter !== undefined) {
      this.#useMeter(options.meter);
      return;
    }
    this.#pending = [];
    // Only now, and only if it is there: `@opentelemetry/api` is an optional peer dependency.
    import("@opentelemetry/api").then(
      (api) => this.#useMeter(api.metrics.getMeter("langgraph-guards")),
      () => {
        this.#pending = undefined;
      },
    );
  }

  counts(): GuardMetricCounts {
    return { ...this.#counts };
  }

  reset(): void {
    for (const key of Object.keys(this.#counts) as (keyof GuardMetricCounts)[]) this.#counts[key] = 0;
  }

  #useMeter(meter: GuardMeter): void {
    try {
      const counters = new Map<GuardMetricName, GuardCounter>();
      for (const name of Object.keys(COUNTERS) as GuardMetricName[]) {
        const { description, unit } = COUNTERS[name];
        counters.set(name, meter.createCounter(`langgraph_guards.${name}`, { description, unit }));
      }
      this.#counters = counters;
    } catch {
      this.#counters = undefined; // a meter that fails records nothing: the counts still work
    }
    const pending = this.#pending ?? [];
    this.#pending = undefined;
    for (const [name, value, attributes] of pending) this.#record(name, value, attributes);
  }

  #count(name: GuardMetricName, value: number, attributes: GuardMetricAttributes = {}): void {
    if (!(value > 0)) return;
    this.#counts[COUNTERS[name].field] += value;
    try {
      this.#onCount?.(name, value, attributes);
    } catch {
      // A failing function of yours must not fail the run.
    }
    if (this.#pending !== undefined) {
      if (this.#pending.length < PENDING_LIMIT) this.#pending.push([name, value, attributes]);
      return;
    }
    this.#record(name, value, attributes);
  }

  #record(name: GuardMetricName, value: number, attributes: GuardMetricAttributes): void {
    try {
      this.#counters?.get(name)?.add(value, attributes);
    } catch {
      // A failing meter must not fail the run.
    }
  }

  override handleToolEnd(): void {
    this.#count("calls.run", 1);
  }

  override handleToolError(): void {
    this.#count("calls.run", 1);
  }

  override handleCustomEvent(eventName: string, data: unknown): void {
    if (!eventName.startsWith("langgraph_guards.") || !isGuardStreamEvent(data)) return;
    const tool: GuardMetricAttributes = data.tool === undefined ? {} : { tool: data.tool };
    if (data.kind === "blocked") this.#count("calls.blocked", 1, { ...tool, rule: data.rule ?? "unknown" });
    else if (data.kind === "cache") this.#count("calls.served", 1, { ...tool, guard: data.guard });
    else if (data.kind === "unchanged") this.#count("calls.deduped", 1, tool);
    else return;
    this.#count("context.chars_kept_out", data.bytesSaved ?? 0, { ...tool, guard: data.guard });
  }

  /** The outermost graph paused (`interrupt()`, or a static interrupt): LangGraph says so before its chain ends. */
  override handleInterrupt(event: GraphInterruptEvent): void {
    this.#paused.add(event.runId);
  }

  /** The outermost run ended: counted, and as stopped when its final message is a guard's (`guardVerdict`). */
  override handleChainEnd(outputs: unknown, runId: string, parentRunId?: string): void {
    // The outermost run only: nodes and subgraphs end before it, with parts of its state.
    if (parentRunId !== undefined || outputs === null || typeof outputs !== "object") return;
    // A run paused for a person's answer has not ended (its outputs are the state so far): the resume ends it.
    if (this.#paused.delete(runId)) return;
    const messages = (outputs as { messages?: unknown }).messages;
    if (!Array.isArray(messages)) return;
    this.#count("runs.ended", 1);
    const verdict = guardVerdict(messages);
    if (verdict !== undefined) this.#count("runs.stopped", 1, { guard: verdict.guard, rule: verdict.rule });
  }
}

/**
 * Counts what the guards do, across runs and threads ({@link GuardMetricName}). A LangChain callback handler: pass it
 * in the `callbacks` of `invoke` or `stream` (or bind it with `.withConfig({ callbacks: [metrics] })`, for a LangGraph
 * server's graph). Read the counts with `counts()`, have each count given to your function (`onCount`), or watch them
 * as OpenTelemetry counters (`langgraph_guards.calls.run`, …): recorded with your `meter`, or with
 * `@opentelemetry/api`'s global meter when that package is installed (loaded only then). Whichever way the guards are
 * wired the counts are the same.
 *
 * @param options - a `meter` (or `false`: no OpenTelemetry), and an `onCount` function.
 * @returns a callback handler with `counts()` and `reset()`.
 *
 * @example
 * ```ts
 * import { guardMetrics } from "langgraph-guards";
 *
 * const metrics = guardMetrics();
 * await agent.invoke(input, { ...config, callbacks: [metrics] });
 * const { callsRun, blocked, served, runsStopped } = metrics.counts();
 * ```
 */
export function guardMetrics(options: GuardMetricsOptions = {}): GuardMetrics {
  return new GuardMetricsHandler(options);
}
