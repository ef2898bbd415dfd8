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
import { WRAP_UP_ID } from "../run-end/wrap-up.js";

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
  /**
   * What to answer a call made with the tools off (`tool_choice: "none"`, or no tools bound while the conversation
   * has tool calls: the guards' wrap-up), without using the script: a text, or a function of the messages. Default:
   * {@link scriptedWrapUp}, a short summary of the conversation's tool calls.
   */
  wrapUp?: string | ((messages: BaseMessage[]) => string);
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
  private readonly wrapUp: string | ((messages: BaseMessage[]) => string);
  private position = 0;
  private callCounter = 0;
  /** Tool-call ids must be unique within a thread, across model instances and processes. */
  private readonly idPrefix = `call_${randomUUID().slice(0, 8)}`;

  /**
   * @param steps The script, one step per model call; or a responder called on every model call (never exhausted),
   *   for a model shared by several threads.
   */
  constructor(steps: ScriptStep[] | StepResponder, options: ScriptedChatModelOptions = {}) {
    const { whenExhausted, wrapUp, ...params } = options;
    super(params);
    this.steps = steps;
    this.whenExhausted = whenExhausted ?? { answer: "Done." };
    this.wrapUp = wrapUp ?? scriptedWrapUp;
  }

  /** How many steps have been answered. */
  get stepsTaken(): number {
    return this.position;
  }

  /** The model type LangChain records in traces and callbacks: `"scripted"`. */
  _llmType(): string {
    return "scripted";
  }

  /**
   * Accepts any tools; the script decides which tool calls are made. A `tool_choice` of `"none"` is kept: such a
   * call is answered with the wrap-up instead of the script's next step.
   */
  override bindTools(
    _tools: BindToolsInput[],
    kwargs?: Partial<this["ParsedCallOptions"]>,
  ): Runnable<BaseLanguageModelInput, AIMessageChunk, this["ParsedCallOptions"]> {
    const choice = (kwargs as { tool_choice?: unknown } | undefined)?.tool_choice;
    if (choice !== "none") return this;
    return this.withConfig({ tool_choice: "none" } as Partial<this["ParsedCallOptions"]>) as never;
  }

  /**
   * Answers one model call (LangChain's `invoke`, `stream` and `batch` call it) with the script's next step, or the
   * wrap-up when the tools are off; once the script is used up, `whenExhausted`.
   */
  async _generate(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    _runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    const toolsOff = (options as { tool_choice?: unknown }).tool_choice === "none";
    const message = toolsOff
      ? new AIMessage(typeof this.wrapUp === "string" ? this.wrapUp : this.wrapUp(messages))
      : this.nextMessage(messages);
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

/**
 * The scripted model's default wrap-up: what it was asked, the tool calls it made (by tool) and how many failed, and
 * the last error, in a few sentences, as a model asked to wrap up would write them.
 *
 * @example
 * ```ts
 * scriptedWrapUp(messages); // "I have to stop here. You asked: \"Fix the tests\". I made 6 tool calls (run_tests 4, …)."
 * ```
 */
export function scriptedWrapUp(messages: BaseMessage[]): string {
  const asked = messages.filter((m) => m.getType() === "human" && m.id !== WRAP_UP_ID).at(-1);
  const calls = messages.flatMap((m) => (AIMessage.isInstance(m) ? (m.tool_calls ?? []) : []));
  const results = messages.filter((m) => m.getType() === "tool");
  const failed = results.filter((m) => (m as { status?: string }).status === "error");
  const counts = new Map<string, number>();
  for (const c of calls) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  const byTool = [...counts].map(([name, n]) => `${name} ${n}`).join(", ");
  const text = (m: BaseMessage | undefined) => (typeof m?.content === "string" ? m.content : "").trim();
  const parts = ["I have to stop here."];
  if (asked !== undefined) parts.push(`You asked: "${text(asked).slice(0, 120)}".`);
  const made = calls.length === 1 ? "1 tool call" : `${calls.length} tool calls`;
  const notDone =
    failed.length === 1 ? "1 of them failed or was not run" : `${failed.length} of them failed or were not run`;
  parts.push(calls.length === 0 ? "I made no tool calls." : `I made ${made} (${byTool}); ${notDone}.`);
  const lastError = text(failed.at(-1)).split("\n")[0];
  const problem = (lastError ?? "").slice(0, 160);
  if (problem) parts.push(`The last problem: ${problem}${/[.!?]$/.test(problem) ? "" : "."}`);
  parts.push("What is left: the task is not finished; tell me how you would like me to go on.");
  return parts.join(" ");
}
