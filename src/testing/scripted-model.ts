import { randomUUID } from "node:crypto";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import {
  BaseChatModel,
  type BaseChatModelParams,
  type BindToolsInput,
} from "@langchain/core/language_models/chat_models";
import { AIMessage, type AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import type { Runnable } from "@langchain/core/runnables";

/**
 * One scripted tool call; `id` defaults to a unique `call_<random>_<n>`.
 *
 * @example
 * ```ts
 * const step = { toolCalls: [{ name: "read_file", args: { path: "a.py" } } satisfies ScriptedToolCall] };
 * ```
 */
export interface ScriptedToolCall {
  /** The tool's name. */
  name: string;
  /** The call's arguments. */
  args: Record<string, unknown>;
  /** The tool-call id. Default: a unique `call_<random>_<n>`. */
  id?: string;
}

/**
 * A responder: answers a model call from the conversation so far.
 *
 * @example
 * ```ts
 * const responder: StepResponder = (messages) =>
 *   messages.at(-1)?.getType() === "human" ? { toolCalls: [{ name: "list_files", args: {} }] } : "Done.";
 * ```
 */
export type StepResponder = (messages: BaseMessage[]) =>
  | string
  | AIMessage
  | {
      /** The answer's text. Default empty. */
      content?: string;
      /** The tool calls to make. */
      toolCalls?: ScriptedToolCall[];
    };

/**
 * One scripted turn: a text answer, tool calls, or a function of the conversation so far.
 *
 * @example
 * ```ts
 * const steps: ScriptStep[] = ["plain answer", { toolCalls: [{ name: "ls", args: {} }] }, (messages) => `seen ${messages.length}`];
 * ```
 */
export type ScriptStep =
  | string
  | AIMessage
  | {
      /** The answer's text. Default empty. */
      content?: string;
      /** The tool calls to make. */
      toolCalls?: ScriptedToolCall[];
    }
  | StepResponder;

/**
 * Options of {@link ScriptedChatModel}.
 *
 * @example
 * ```ts
 * new ScriptedChatModel(steps, { whenExhausted: "throw" });
 * ```
 */
export interface ScriptedChatModelOptions extends BaseChatModelParams {
  /** What to answer once the script is used up: a final text (default "Done."), or throw. */
  whenExhausted?:
    | {
        /** The final text answered on every call after the script. */
        answer: string;
      }
    | "throw";
}

/**
 * A chat model that answers from a script, with tool calls, for offline tests, demos and benchmarks. Each call
 * to the model takes the next step. `bindTools` accepts any tools and keeps the script.
 *
 * @example
 * ```ts
 * import { ScriptedChatModel } from "langgraph-guards/testing";
 *
 * const llm = new ScriptedChatModel([
 *   { toolCalls: [{ name: "read_file", args: { path: "config.py" } }] },
 *   { toolCalls: [{ name: "read_file", args: { path: "config.py" } }] },
 *   "I have what I need.",
 * ]);
 * ```
 */
export class ScriptedChatModel extends BaseChatModel {
  private readonly steps: ScriptStep[] | StepResponder;
  private readonly whenExhausted: { answer: string } | "throw";
  private position = 0;
  private callCounter = 0;
  /** Tool-call ids must be unique within a thread, across model instances and processes. */
  private readonly idPrefix = `call_${randomUUID().slice(0, 8)}`;

  /**
   * @param steps The script, one step per model call; or a responder called on every model call (never exhausted),
   *   for a model shared by several threads.
   */
  constructor(steps: ScriptStep[] | StepResponder, options: ScriptedChatModelOptions = {}) {
    const { whenExhausted, ...params } = options;
    super(params);
    this.steps = steps;
    this.whenExhausted = whenExhausted ?? { answer: "Done." };
  }

  /** How many steps have been answered. */
  get stepsTaken(): number {
    return this.position;
  }

  /**
   * The model type LangChain records in traces and callbacks: `"scripted"`.
   *
   * @example
   * ```ts
   * new ScriptedChatModel(["Hi."])._llmType(); // "scripted"
   * ```
   */
  _llmType(): string {
    return "scripted";
  }

  /** Accepts any tools; the script decides which tool calls are made. */
  override bindTools(
    _tools: BindToolsInput[],
    _kwargs?: Partial<this["ParsedCallOptions"]>,
  ): Runnable<BaseLanguageModelInput, AIMessageChunk, this["ParsedCallOptions"]> {
    return this;
  }

  /**
   * Answers one model call with the script's next step (LangChain's `invoke`, `stream` and `batch` call it): a text
   * answer or tool calls, as an `AIMessage`. Once the script is used up it answers `whenExhausted`.
   *
   * @example
   * ```ts
   * const llm = new ScriptedChatModel([{ toolCalls: [{ name: "ls", args: {} }] }]);
   * const reply = await llm.invoke("List the files."); // answered by _generate
   * reply.tool_calls?.[0]?.name; // "ls"
   * ```
   */
  async _generate(
    messages: BaseMessage[],
    _options: this["ParsedCallOptions"],
    _runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    const message = this.nextMessage(messages);
    const text = typeof message.content === "string" ? message.content : "";
    return { generations: [{ text, message }] };
  }

  private nextMessage(messages: BaseMessage[]): AIMessage {
    const step = typeof this.steps === "function" ? this.steps : this.steps[this.position];
    if (step === undefined) {
      if (this.whenExhausted === "throw")
        throw new Error(`ScriptedChatModel: script exhausted after ${this.position} steps`);
      return new AIMessage(this.whenExhausted.answer);
    }
    this.position += 1;
    const value = typeof step === "function" ? step(messages) : step;
    if (typeof value === "string") return new AIMessage(value);
    if (AIMessage.isInstance(value)) return value;
    return new AIMessage({
      content: value.content ?? "",
      tool_calls: (value.toolCalls ?? []).map((c) => {
        this.callCounter += 1;
        return {
          name: c.name,
          args: c.args,
          id: c.id ?? `${this.idPrefix}_${this.callCounter}`,
          type: "tool_call" as const,
        };
      }),
    });
  }
}
