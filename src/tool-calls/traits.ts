/** What the guards read of an agent's tools (names, MCP hints, schemas, own caches): kept by the adapter. */
import { readGuardLog } from "../common/events/stream-events.js";
import { fileCaches } from "../common/file-cache-check.js";
import { type ToolTraits as CallTraits, ownEntry } from "../common/identity/classify.js";
import { agentOf } from "../common/owner.js";
import type { AnswerNow, DecideContext, ToolCallInput } from "./core/call.js";
import type { ResolvedToolGuardOptions } from "./core/options.js";
import { readsChanged } from "./freshness.js";

/** A tool's own freshness check, `metadata.langgraphGuards.answersNow` (see `DecideContext.answersNow`). */
type AnswersNowCheck = (args: unknown, state: unknown) => readonly AnswerNow[] | undefined;

type GuardMetadata = { servesRepeats?: boolean; answersNow?: unknown } | undefined;

function guardMetadata(tool: unknown): GuardMetadata {
  if (tool === null || typeof tool !== "object") return undefined;
  return (tool as { metadata?: { langgraphGuards?: GuardMetadata } }).metadata?.langgraphGuards;
}

/** A tool's MCP-style hint (in its metadata, or its metadata's `annotations`), if it has one. */
function hintOf(tool: unknown, hint: "readOnlyHint" | "idempotentHint"): boolean | undefined {
  const metadata = (tool as { metadata?: Record<string, unknown> } | null | undefined)?.metadata;
  if (!metadata) return undefined;
  const direct = metadata[hint];
  if (typeof direct === "boolean") return direct;
  const annotations = metadata.annotations as Record<string, unknown> | undefined;
  return typeof annotations?.[hint] === "boolean" ? (annotations[hint] as boolean) : undefined;
}

type ToolSettings = ResolvedToolGuardOptions["tools"][string] & Pick<CallTraits, "args">;

/**
 * What a tool says of itself under `own`: its schema's arguments, and for a tool that serves repeats with a freshness
 * check, no consecutive or redundant block (the threshold rule still stops loops). Explicit settings win.
 */
function selfDescribed(tool: unknown, own: ToolSettings | undefined): ToolSettings | undefined {
  const schema = (tool as { schema?: { shape?: unknown; properties?: unknown } } | null)?.schema;
  const fields = typeof schema === "object" && schema !== null ? (schema.shape ?? schema.properties) : undefined;
  const declares = typeof fields === "object" && fields !== null;
  const serves = guardMetadata(tool)?.servesRepeats === true;
  if (!declares && !serves) return undefined;
  const settings: ToolSettings = { ...own };
  if (serves) {
    settings.consecutive = own?.consecutive ?? false;
    settings.redundancy = own?.redundancy ?? false;
    settings.normalizeResult = own?.normalizeResult ?? false;
  }
  if (declares) settings.args = Object.keys(fields);
  return settings;
}

/**
 * One of the agent's tools as the guards take it (`guardMiddleware`'s and `replayGuards`' `agentTools`): the tool
 * itself (any LangChain tool: its `name` and `metadata` are read: an MCP-style `readOnlyHint`, and whether it serves
 * repeats from a cache), a plain object with a name and such metadata, or its name alone.
 *
 * @example
 * ```ts
 * const agentTools: AgentTool[] = [readFile, "web_search", { name: "lookup", metadata: { readOnlyHint: true } }];
 * ```
 */
export type AgentTool =
  | string
  | {
      /** The tool's name. */
      name: string;
      /**
       * The tool's metadata: `readOnlyHint` (or `annotations.readOnlyHint`) says whether it only reads; with
       * `idempotentHint` too, its repeats are served from the result cache (see `memory.cache`).
       */
      metadata?: Record<string, unknown> | undefined;
      /**
       * The tool's arguments schema (a zod object or a JSON schema): the arguments it declares are what its calls ask
       * about (see the volatile arguments in docs/guards.md). Without it, the schema is not known.
       */
      schema?: unknown;
    };

/** The decision context from the agent and the run (not from the response). */
export type TurnContext = Omit<DecideContext, "response" | "acknowledged">;

/** The traits of an agent's tools, learned from the tool lists an adapter sees (a name: a tool of no traits). */
export class ToolTraits {
  /** The validated options (never written to) with what the tools say of themselves. */
  options: ResolvedToolGuardOptions;
  readonly readOnlyHints: Record<string, boolean> = Object.create(null);
  readonly idempotentHints: Record<string, boolean> = Object.create(null);
  readonly #checks = new Map<string, AnswersNowCheck>();
  #names: string[] | undefined;
  #seen: readonly unknown[] = [];

  constructor(options: ResolvedToolGuardOptions) {
    this.options = options;
  }

  /** Reads the tools when the list differs from the last one read (a tool replaced in place counts). */
  learn(tools: readonly unknown[]): void {
    const seen = this.#seen;
    if (tools === seen || (tools.length === seen.length && tools.every((t, i) => t === seen[i]))) return;
    this.#seen = tools.slice();
    const names = new Set(this.#names);
    const learned: Record<string, ToolSettings> = Object.create(null);
    for (const tool of tools) {
      const name = typeof tool === "string" ? tool : (tool as { name?: unknown } | null | undefined)?.name;
      if (typeof name !== "string") continue;
      names.add(name);
      const hint = hintOf(tool, "readOnlyHint");
      if (hint !== undefined) this.readOnlyHints[name] = hint;
      const idempotent = hintOf(tool, "idempotentHint");
      if (idempotent !== undefined) this.idempotentHints[name] = idempotent;
      const settings = selfDescribed(tool, learned[name] ?? ownEntry(this.options.tools, name));
      if (settings !== undefined) learned[name] = settings;
      const meta = guardMetadata(tool);
      if (meta?.servesRepeats && typeof meta.answersNow === "function") {
        this.#checks.set(name, meta.answersNow as AnswersNowCheck);
      }
    }
    this.#names = names.size > 0 ? [...names] : undefined;
    if (Object.keys(learned).length > 0)
      this.options = { ...this.options, tools: { ...this.options.tools, ...learned } };
  }

  knows(tool: unknown): boolean {
    const name = typeof tool === "string" ? tool : (tool as { name?: unknown } | null | undefined)?.name;
    return typeof name === "string" && this.#names?.includes(name) === true;
  }

  /** Whether a tool of this name serves repeats from its own cache with a freshness check (the file tools). */
  checksFreshness(name: string): boolean {
    return this.#checks.has(name);
  }

  /** The decision context of a run; freshness checks only with the graph's `state` (a live run). */
  context(configurable: Record<string, unknown> | undefined, state?: unknown): TurnContext {
    checkWrittenChannels(state);
    const context: TurnContext = {
      agent: agentOf(configurable),
      disabled: configurable?.guards === false,
      readOnlyHints: this.readOnlyHints,
      idempotentHints: this.idempotentHints,
      toolNames: this.#names,
    };
    if (state === undefined) return context;
    context.readsChanged = readsChanged;
    if (this.#checks.size === 0) return context;
    const checks = this.#checks;
    context.answersNow = (call: ToolCallInput) => {
      const check = checks.get(call.name);
      if (check === undefined) return undefined;
      try {
        const answers = check(call.args, state);
        return Array.isArray(answers) ? answers : undefined;
      } catch {
        return undefined; // a check that fails tells nothing: the rules decide
      }
    };
    return context;
  }
}

/** A damaged `guardLog` or `fileCache` fails the node now, not the reducer at every later `updateState`. */
function checkWrittenChannels(state: unknown): void {
  if (state === null || typeof state !== "object") return;
  const { guardLog, fileCache } = state as { guardLog?: unknown; fileCache?: unknown };
  if (guardLog !== undefined) readGuardLog(guardLog);
  if (fileCache !== undefined) fileCaches.read(fileCache);
}
