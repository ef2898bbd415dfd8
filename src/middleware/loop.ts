/**
 * The loop detector and the safety limits as createAgent middleware: after each model response it counts the turn,
 * checks the limits and compares the response with the recent ones, exactly as `loopDetectHook` does.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { createMiddleware } from "langchain";
import { z } from "zod";
import { emptyLoopState, type LoopState } from "../core/loop.js";
import { evaluate, type LoopDetectOptions, split, stopMessages } from "../graph/loop-detect.js";
import { defaulted } from "./state.js";

const stateSchema = z.object({ loopGuard: defaulted<LoopState>(emptyLoopState) });

/**
 * The loop detector and the safety limits (iterations, runtime, tokens, cost, failures in a row) for langchain
 * `createAgent`. When a limit or a loop stops the run, every pending tool call is answered with an error
 * ToolMessage and a final AI message says what stopped it; the run ends there. Its memory is the `loopGuard`
 * channel, kept per thread by the checkpointer. Options are the same as `loopDetectHook`'s, validated here.
 *
 * @example
 * ```ts
 * import { createAgent } from "langchain";
 * import { guardMiddleware, loopDetectMiddleware } from "langgraph-guards/middleware";
 *
 * const agent = createAgent({ model, tools, middleware: [guardMiddleware(), loopDetectMiddleware({ maxIterations: 30 })] });
 * ```
 */
export function loopDetectMiddleware(options: LoopDetectOptions = {}) {
  const resolved = split(options);
  return createMiddleware({
    name: "LoopDetectMiddleware",
    stateSchema,
    afterModel: {
      canJumpTo: ["end"],
      hook: (state) => {
        const result = evaluate(
          { messages: state.messages as BaseMessage[], loopGuard: state.loopGuard },
          options,
          resolved,
        );
        if (result === undefined) return undefined;
        if (result.stop === null) return { loopGuard: result.state };
        return {
          loopGuard: result.state,
          messages: stopMessages(result.read.message, result.stop),
          jumpTo: "end" as const,
        };
      },
    },
  });
}
