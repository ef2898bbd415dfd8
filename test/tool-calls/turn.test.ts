/**
 * The turn itself (`GuardedTurn`), without an adapter: what the tool node, the middleware and replay all act on.
 * Each test drives one turn as an adapter would (open, answer the blocked calls, settle the others, write the
 * update) and reads the guard state back through the channel's reducer.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { describe, expect, it } from "vitest";
import { emptyToolGuardState, reduceToolGuard, resolveToolGuardOptions } from "../../src/core/index.js";
import type { ToolGuardState } from "../../src/index.js";
import { ToolTraits } from "../../src/tool-calls/traits.js";
import { GuardedTurn, type TurnEnv } from "../../src/tool-calls/turn.js";

const options = resolveToolGuardOptions({ escalation: { askFrom: 1 } });

function env(written: unknown[] = []): TurnEnv {
  const traits = new ToolTraits(options);
  return { options, context: traits.context(undefined), host: { writer: (chunk) => written.push(chunk) } };
}

const call = (args: Record<string, unknown>, id: string): ToolCall => ({
  name: "read_file",
  args,
  id,
  type: "tool_call",
});
const asking = (calls: ToolCall[], id: string) => new AIMessage({ content: "", tool_calls: calls, id });
const answer = (c: ToolCall, content: string) => new ToolMessage({ content, tool_call_id: c.id ?? "", name: c.name });

/** One turn as the tool node runs it: blocked calls answered, the others "run" by `run`; the state after it. */
async function runTurn(state: ToolGuardState, messages: BaseMessage[], run: (c: ToolCall) => string, e = env()) {
  const turn = GuardedTurn.open(state, messages, e);
  const answers = await Promise.all(turn.calls.map((c, i) => turn.answer(i, async () => answer(c, run(c)))));
  const update = turn.update();
  return { turn, answers: answers as ToolMessage[], update, state: reduceToolGuard(state, update.toolGuard) };
}

describe("GuardedTurn (the turn every adapter acts on)", () => {
  it("runs a new call: nothing blocked, its outcome recorded, the output given back as it is", async () => {
    const c = call({ path: "a.py" }, "c1");
    const { turn, answers, state } = await runTurn(
      emptyToolGuardState(),
      [new HumanMessage("go"), asking([c], "m1")],
      () => "A",
    );
    expect(turn.stop).toBeUndefined();
    expect(turn.decisions.map((d) => d.allowed)).toEqual([true]);
    expect(answers[0]?.content).toBe("A");
    expect(state.stats.allowed).toBe(1);
    expect(state.repetition.window.map((r) => r.tool)).toEqual(["read_file"]);
  });

  it("blocks a consecutive duplicate with one error answer that says why, and writes its event", async () => {
    const first = call({ path: "a.py" }, "c1");
    const again = call({ path: "a.py" }, "c2");
    const history: BaseMessage[] = [new HumanMessage("go"), asking([first], "m1"), answer(first, "A")];
    const before = (await runTurn(emptyToolGuardState(), history.slice(0, 2), () => "A")).state;
    const written: unknown[] = [];
    const ran: string[] = [];
    const { answers, update, state } = await runTurn(
      before,
      [...history, asking([again], "m2")],
      (c) => {
        ran.push(c.id ?? "");
        return "A";
      },
      env(written),
    );
    expect(ran).toEqual([]);
    expect(answers[0]?.status).toBe("error");
    expect(answers[0]?.tool_call_id).toBe("c2");
    expect(String(answers[0]?.content)).toMatch(/read_file/);
    expect(state.stats.blocked.consecutive).toBe(1);
    expect(update.guardLog?.map((e) => e.kind)).toContain("blocked");
    expect(written.length).toBeGreaterThan(0); // the same events on the custom stream
  });

  it("splits across hooks and resumes each call from the record; an edited call is decided again", async () => {
    const a = call({ path: "a.py" }, "c1");
    const b = call({ path: "b.py" }, "c2");
    const messages: BaseMessage[] = [new HumanMessage("go"), asking([a, b], "m1")];
    const state = emptyToolGuardState();
    const { record, answers } = GuardedTurn.open(state, messages, env()).split();
    expect(answers).toEqual([]); // calls with ids are answered later, by wrapToolCall
    expect(record.ids).toEqual(["c1", "c2"]);
    const resumed = GuardedTurn.resume(record, b, state, messages, env());
    expect(resumed?.decision(0).call.id).toBe("c2");
    const ran: string[] = [];
    await resumed?.answer(0, async () => {
      ran.push("c2");
      return answer(b, "B");
    });
    expect(ran).toEqual(["c2"]); // allowed: the tool ran
    // humanInTheLoopMiddleware's "edit": the call that really runs is decided, not the planned one.
    const edited = GuardedTurn.resume(record, { ...b, args: { path: "c.py" } }, state, messages, env());
    expect(edited?.decision(0).call.args).toEqual({ path: "c.py" });
    expect(GuardedTurn.resume(record, call({ path: "z.py" }, "unknown"), state, messages, env())).toBeUndefined();
  });

  it("stops at level 4 after repeated blocks: no call runs, every call answered, the run ended in words", async () => {
    let state = emptyToolGuardState();
    const messages: BaseMessage[] = [new HumanMessage("go")];
    let stopped: GuardedTurn | undefined;
    for (let i = 0; i < 12 && stopped === undefined; i += 1) {
      const c = call({ path: "a.py" }, `c${i}`);
      messages.push(asking([c], `m${i}`));
      const turn = GuardedTurn.open(state, messages, env());
      if (turn.stop !== undefined) {
        stopped = turn;
        break;
      }
      const out = await runTurn(state, messages, () => "A");
      state = out.state;
      messages.push(out.answers[0] as ToolMessage);
    }
    expect(stopped?.stop?.level).toBeGreaterThanOrEqual(3);
    const result = stopped?.halt(stopped.stop as NonNullable<GuardedTurn["stop"]>, false);
    expect(result?.kind).toBe("ended");
    const final = result?.messages?.at(-1);
    expect(AIMessage.isInstance(final)).toBe(true);
    expect((final as AIMessage).response_metadata.guard).toMatchObject({ kind: "escalation", level: 4 });
    const notRun = result?.messages?.filter((m) => ToolMessage.isInstance(m)) ?? [];
    expect(notRun.map((m) => (m as ToolMessage).tool_call_id)).toEqual([stopped?.calls[0]?.id]);
  });
});
