/**
 * Cycles of 4 and 5 calls (issue 34, item 3). ml-intern and Hermes find cycles of 2 to 5 calls; before this the
 * cycle rule knew cycles of 2 and 3 only, so an agent going round 4 different calls whose results never change
 * (the reproduction: 4 rounds, never blocked) ran until a safety limit. The default window (10 calls) sees a
 * 5-call cycle go round twice. Each scenario runs through createReactAgent + escalationHook, createAgent +
 * guardMiddleware and replayGuards (support.ts).
 */
import { describe, expect, it } from "vitest";
import { ADAPTERS, type Adapter, changing, runScenario, type ScenarioResult, same, step, stopAt } from "./support.js";

const ran = (n: number) => Array.from({ length: n }, () => "ran");

/** A browser agent's round: unknown tools (they may change something), each answering the same every time. */
const ROUND = [
  { name: "focus_window", args: { id: 1 }, text: "Focused: Signup form" },
  { name: "click_button", args: { label: "Email" }, text: "Clicked: Email field" },
  { name: "type_text", args: { text: "ada@example.com" }, text: "Typed 15 characters." },
  { name: "press_key", args: { key: "Enter" }, text: "Error: the form did not submit." },
  { name: "select_option", args: { field: "plan", value: "free" }, text: "Selected: free" },
] as const;

const calls = (size: number) => ROUND.slice(0, size).map((c) => step(c.name, { ...c.args }));
const rounds = (size: number, n: number) => Array.from({ length: n }, () => calls(size)).flat();
const sameTools = (size: number) => ROUND.slice(0, size).map((c) => same(c.name, c.text));

describe.each(ADAPTERS)("cycles of 4 and 5 calls through %s (ml-intern, Hermes)", (adapter: Adapter) => {
  const live = adapter !== "replayGuards";
  const expectNothingBlocked = (r: ScenarioResult) => {
    expect(r.strikes).toBe(0);
    expect(Object.entries(r.toolGuard.stats.blocked).filter(([, n]) => n > 0)).toEqual([]);
  };

  it("4 calls gone round with identical results: the 3rd round is blocked and the run stops before the 4th ends", async () => {
    const r = await runScenario(adapter, sameTools(4), rounds(4, 4));
    // Two rounds run (8 calls); the 3rd round's first call is a cycle block, the next ones escalate to a stop.
    expect(r.outcomes).toEqual([...ran(8), "cycle@1", "cycle@2", "stop"]);
    expect(stopAt(r)).toBeLessThan(16); // the limit: before the 4th round ends
    expect(r.ran).toEqual({ focus_window: 2, click_button: 2, type_text: 2, press_key: 2 });
    if (live) expect(r.interrupt).toMatchObject({ level: 3, attempts: 3 });
  });

  it("5 calls gone round with identical results: the default window (10) sees two rounds, the 3rd is blocked", async () => {
    const r = await runScenario(adapter, sameTools(5), rounds(5, 4));
    expect(r.outcomes).toEqual([...ran(10), "cycle@1", "cycle@2", "stop"]);
    expect(r.ran).toEqual({ focus_window: 2, click_button: 2, type_text: 2, press_key: 2, select_option: 2 });
  });

  it("the model repeating one call of a stuck 4-call cycle: blocked as the cycle, strikes add up", async () => {
    const [A] = calls(4);
    const r = await runScenario(adapter, sameTools(4), [...rounds(4, 2), A!, A!, A!, A!]);
    expect(r.outcomes).toEqual([...ran(8), "cycle@1", "cycle@2", "stop"]);
  });

  it("a 4-call cycle whose results change every round is progress: never blocked", async () => {
    const moving = ROUND.slice(0, 4).map((c) => changing(c.name, (n) => `${c.text} (round ${n})`));
    const r = await runScenario(adapter, moving, rounds(4, 4));
    expect(r.outcomes).toEqual(ran(16));
    expectNothingBlocked(r);
  });

  it("a 5-call cycle with a wait in it (four polls, then sleep) is not stuck, however often it answers the same", async () => {
    const polls = ["get_build_status", "get_test_status", "get_lint_status", "get_deploy_status"];
    const tools = [...polls.map((p) => same(p, "running")), same("sleep", "slept 30 s")];
    const round = [...polls.map((p) => step(p, { id: "j1" })), step("sleep", { seconds: 30 })];
    const r = await runScenario(adapter, tools, [...round, ...round, ...round]);
    expect(r.outcomes).toEqual(ran(15));
    expectNothingBlocked(r);
  });
});
