/**
 * Where a guard stands in LangGraph's step budget, read from the running step's config. This is the one place that
 * reads LangGraph's config for the budget, and it reads public fields only: `metadata.langgraph_step` (the step),
 * `recursionLimit`, `control` (LangGraph's run-scoped control object: one per top-level run, shared by every graph
 * that runs inside it) and `metadata.checkpoint_ns` (the task's namespace, which names the graph invocation inside the
 * run: `""` at the top, `"node:<task>"` for a graph invoked inside that task, `"node:<task>|1"` for the second
 * invocation inside the same task, and so on), with `configurable.checkpoint_map` (the checkpoints the invocation's
 * parent graphs stood at). Two things LangGraph offers no public way to read: which channels the running graph has
 * (a middleware sees only its own), which {@link readGraphChannels} reads through the task's channel reader; and
 * whether the run resumes an interrupted one (`configurable.__pregel_resuming`). test/run-end/steps.test.ts pins
 * these facts on the installed LangGraph.
 */
import { getConfig } from "@langchain/langgraph";

/** What a guard reads of the running step. */
export interface StepReading {
  /** The current step (`metadata.langgraph_step`). */
  step: number;
  /** The run's `recursionLimit` (LangGraph's default, 25, when the config has none). */
  limit: number;
  /** The top-level run (LangGraph's `control` object of the run). */
  run: object;
  /**
   * The graph invocation inside the run: its namespace (`""` for the top-level graph) and the checkpoints its
   * parents stood at when it was invoked (a sub-agent whose namespace has no task id, its thread persisted, is
   * invoked again at a parent's later step under the same namespace).
   */
  graph: string;
  /** The run resumes an interrupted one (a person answered): LangGraph's `configurable.__pregel_resuming`. */
  resumed: boolean;
  /** The running step's config, for {@link readGraphChannels}. */
  config: unknown;
}

/** LangGraph's default `recursionLimit`. */
const DEFAULT_RECURSION_LIMIT = 25;

/**
 * The namespace of the graph a task runs in: the task's own namespace less its last segment (`node:<task id>`).
 *
 * @example
 * ```ts
 * graphOf("model_request:1a2b"); // ""
 * graphOf("par:9f|1|model_request:1a2b"); // "par:9f|1"
 * ```
 */
export function graphOf(taskNamespace: string): string {
  const cut = taskNamespace.lastIndexOf("|");
  return cut < 0 ? "" : taskNamespace.slice(0, cut);
}

/**
 * The step reading of a run's config, or undefined outside a graph step (a direct call, a unit test) or in a run
 * without LangGraph's run control.
 *
 * @example
 * ```ts
 * readStep(getConfig())?.step; // 3
 * ```
 */
export function readStep(config: unknown): StepReading | undefined {
  const c = config as
    | {
        recursionLimit?: unknown;
        control?: unknown;
        metadata?: { langgraph_step?: unknown; checkpoint_ns?: unknown };
        configurable?: { checkpoint_map?: unknown; __pregel_resuming?: unknown };
      }
    | undefined;
  const step = c?.metadata?.langgraph_step;
  const run = c?.control;
  if (typeof step !== "number" || !Number.isFinite(step) || typeof run !== "object" || run === null) return undefined;
  const limit =
    typeof c?.recursionLimit === "number" && c.recursionLimit > 0 ? c.recursionLimit : DEFAULT_RECURSION_LIMIT;
  const ns = c?.metadata?.checkpoint_ns;
  const graph = typeof ns === "string" ? graphOf(ns) : "";
  // `checkpoint_map`: the checkpoint of each graph of the task's line at this step, its own graph's included.
  const map = c?.configurable?.checkpoint_map;
  const parents =
    graph === "" || typeof map !== "object" || map === null
      ? ""
      : Object.entries(map)
          .filter(([space]) => space !== graph)
          .map(([, id]) => String(id))
          .join("|");
  const resumed = c?.configurable?.__pregel_resuming === true;
  return { step, limit, run, graph: parents === "" ? graph : `${graph}@${parents}`, resumed, config };
}

/**
 * The values of the channels `names` that the running graph has (a channel it does not have, or one never written
 * and without a default, is left out), or undefined when they cannot be read. The one reader of a LangGraph internal
 * in the package: the task's channel reader (`configurable.__pregel_read`, which LangGraph gives every task to read
 * its graph's state); a createAgent middleware sees only its own channels, and the step budget must know which of
 * langchain's middleware the agent has. `at` is the config's step reading, when the caller has it already.
 *
 * @example
 * ```ts
 * "runToolCallCount" in (readGraphChannels(getConfig(), ["runToolCallCount"]) ?? {}); // toolCallLimitMiddleware
 * ```
 */
export function readGraphChannels(
  config: unknown,
  names: readonly string[],
  at: StepReading | undefined = readStep(config),
): Record<string, unknown> | undefined {
  const reader = channelReader(config);
  if (reader === undefined) return undefined;
  try {
    const values = reader(channelsHad(reader, at, names), false);
    return typeof values === "object" && values !== null ? (values as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the running graph has the channel `name` (written or not: a channel never written is left out of what
 * {@link readGraphChannels} reads), or undefined outside a graph step.
 *
 * @example
 * ```ts
 * graphHasChannel(currentStep(), "structuredResponse"); // createAgent with a responseFormat
 * ```
 */
export function graphHasChannel(at: StepReading | undefined, name: string): boolean | undefined {
  const reader = channelReader(at?.config);
  if (at === undefined || reader === undefined) return undefined;
  return channelsHad(reader, at, [name]).length > 0;
}

/** The task's channel reader in a step's config (`configurable.__pregel_read`), or undefined outside a graph step. */
function channelReader(config: unknown): ChannelReader | undefined {
  const read = (config as { configurable?: Record<string, unknown> } | undefined)?.configurable?.__pregel_read;
  return typeof read === "function" ? (read as ChannelReader) : undefined;
}

/** LangGraph's task channel reader: the channels `select` (one name, or a list), as the step began (`fresh` false). */
type ChannelReader = (select: string | string[], fresh: boolean) => unknown;

/**
 * Whether each channel asked about is one the graph has, by top-level run (held weakly) and graph invocation: a
 * graph's channels do not change while it runs. The reader leaves a channel the graph lacks out as it does an empty
 * one, but only after LangGraph has thrown and caught a `TypeError` for it, which costs about 45 µs a channel (its
 * message names the expression): the step budget asks at every model call for 4 channels, most of which an agent
 * lacks.
 */
const channelsKnown = new WeakMap<object, Map<string, Map<string, boolean>>>();

/**
 * The channels of `names` that the running graph has (and all of them when the run is not known): a channel not
 * asked about before in this graph invocation is read once alone, where LangGraph throws for a channel the graph
 * lacks and answers `null` for one never written.
 */
function channelsHad(read: ChannelReader, at: StepReading | undefined, names: readonly string[]): string[] {
  if (at === undefined) return [...names];
  const known = perInvocation(channelsKnown, at, () => new Map<string, boolean>());
  const had: string[] = [];
  for (const name of names) {
    let has = known.get(name);
    if (has === undefined) {
      try {
        read(name, false);
        has = true;
      } catch {
        has = false;
      }
      known.set(name, has);
    }
    if (has) had.push(name);
  }
  return had;
}

/** What `table` keeps for the graph invocation `at` (by top-level run, held weakly, then graph), made at first use. */
export function perInvocation<T>(table: WeakMap<object, Map<string, T>>, at: StepReading, make: () => T): T {
  let graphs = table.get(at.run);
  if (graphs === undefined) {
    graphs = new Map();
    table.set(at.run, graphs);
  }
  const known = graphs.get(at.graph);
  if (known !== undefined) return known;
  const made = make();
  graphs.set(at.graph, made);
  return made;
}

/**
 * The step reading of the running step (LangGraph's `getConfig()`), or undefined outside a graph step.
 *
 * @example
 * ```ts
 * const at = currentStep();
 * ```
 */
export function currentStep(): StepReading | undefined {
  try {
    return readStep(getConfig());
  } catch {
    return undefined;
  }
}
