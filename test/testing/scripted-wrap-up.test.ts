/**
 * ScriptedChatModel's wrap-up (the answer to a call made with the tools off): what was asked, the calls made by
 * tool, how many failed, the last problem, in plain words, singular and plural.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { scriptedWrapUp } from "../../src/testing/scripted-model.js";

const call = (id: string) => new AIMessage({ content: "", tool_calls: [{ id, name: "get_weather", args: { id } }] });
const result = (id: string, status: "success" | "error") =>
  new ToolMessage({ tool_call_id: id, content: status === "error" ? "Error: down\nmore" : "Sunny", status });

describe("scriptedWrapUp", () => {
  it("counts one call and one failure in the singular", () => {
    const text = scriptedWrapUp([new HumanMessage("Weather?"), call("a"), result("a", "error")]);
    expect(text).toBe(
      'I have to stop here. You asked: "Weather?". I made 1 tool call (get_weather 1); 1 of them failed or was not ' +
        "run. The last problem: Error: down. What is left: the task is not finished; tell me how you would like me to go on.",
    );
  });

  it("counts several in the plural, and says when no call was made", () => {
    const text = scriptedWrapUp([call("a"), result("a", "success"), call("b"), result("b", "success")]);
    expect(text).toContain("I made 2 tool calls (get_weather 2); 0 of them failed or were not run.");
    expect(scriptedWrapUp([new HumanMessage("Hi")])).toContain("I made no tool calls.");
  });
});
