/**
 * Several graphs running below one LangGraph run (sub-agents in parallel, `Send` fan-outs) make LangGraph's runners
 * hold more abort listeners on one of its signals than Node's default of 10, and Node prints a leak warning (plain
 * agents do the same: its signals, not the guards'). A test that builds such a run raises the default for itself,
 * so that the suite prints no warning that is not a failure.
 */
import { EventEmitter } from "node:events";
import { onTestFinished } from "vitest";

/**
 * Raises Node's default listener limit (which new `AbortSignal`s take) for the running test, restored after it.
 *
 * @example
 * ```ts
 * it("sub-agents in parallel", async () => {
 *   allowManyAbortListeners();
 *   await parent.invoke({});
 * });
 * ```
 */
export function allowManyAbortListeners(max = 64): void {
  const before = EventEmitter.defaultMaxListeners;
  EventEmitter.defaultMaxListeners = max;
  onTestFinished(() => {
    EventEmitter.defaultMaxListeners = before;
  });
}
