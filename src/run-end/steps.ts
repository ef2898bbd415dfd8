/** Where a guard stands in LangGraph's step budget (test/run-end/steps.test.ts pins what it reads of LangGraph). */
import { getConfig } from "@langchain/langgraph";

/** What a guard reads of the running step. */
export interface StepReading {
  /** `metadata.langgraph_step`. */
  step: number;
  /** `recursionLimit` (LangGraph's default, 25, when the config has none). */
  limit: number;
  /** The top-level run: LangGraph's `control` object, one per top-level run, shared by every graph inside it. */
  run: object;
  /** Namespace (`""` at the top) and parents' checkpoints: a sub-agent may run again under the same namespace. */
  graph: string;
  /** The run resumes an interrupted one (a person answered): `configurable.__pregel_resuming`, a LangGraph internal. */
  resumed: boolean;
  config: unknown;
}

/** The namespace of the graph a task runs in: the task's own namespace less its last segment (`node:<task id>`). */
export function graphOf(taskNamespace: string): string {
  const cut = taskNamespace.lastIndexOf("|");
  return cut < 0 ? "" : taskNamespace.slice(0, cut);
}

/** The step reading of a run's config, or undefined outside a graph step or without LangGraph's run control. */
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
  const limit = typeof c?.recursionLimit === "number" && c.recursionLimit > 0 ? c.recursionLimit : 25;
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
 * The values of the channels `names` the running graph has (never written and no default: left out), read with
 * LangGraph's internal `configurable.__pregel_read`: a createAgent middleware sees only its own channels, and the step
 * budget must know which of langchain's middleware the agent has.
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

/** Whether the running graph has the channel `name`, written or not, or undefined outside a graph step. */
export function graphHasChannel(at: StepReading | undefined, name: string): boolean | undefined {
  const reader = channelReader(at?.config);
  if (at === undefined || reader === undefined) return undefined;
  return channelsHad(reader, at, [name]).length > 0;
}

function channelReader(config: unknown): ChannelReader | undefined {
  const read = (config as { configurable?: Record<string, unknown> } | undefined)?.configurable?.__pregel_read;
  return typeof read === "function" ? (read as ChannelReader) : undefined;
}

/** LangGraph's task channel reader: the channels `select` (one name, or a list), as the step began (`fresh` false). */
type ChannelReader = (select: string | string[], fresh: boolean) => unknown;

/**
 * Whether the graph has each channel asked about, by run and graph invocation: for a channel the graph lacks LangGraph
 * throws and catches a costly error, and the step budget asks at every model call for 4, most of which it lacks.
 */
const channelsKnown = new WeakMap<object, Map<string, Map<string, boolean>>>();

/** Which of `names` the graph has (all outside a run): each read alone once, where LangGraph throws if it lacks it. */
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

/** The step reading of the running step (LangGraph's `getConfig()`), or undefined outside a graph step. */
export function currentStep(): StepReading | undefined {
  try {
    return readStep(getConfig());
  } catch {
    return undefined;
  }
}
