/**
 * Stateful tools and cycles, end to end: each scenario is one script of model responses (one tool call each) run
 * through a createReactAgent with `GuardedToolNode` + `escalationHook`, a createAgent with `guardMiddleware`, and
 * `replayGuards` over the recording of the same script. Outcomes per call: "ran", "<rule>@<level>" or "stop" (the
 * run was interrupted for a person at escalation level 3; the model is not called again).
 */
import { describe, expect, it } from "vitest";
import { isReadOnlyCall, isStatefulCall } from "../../src/core/index.js";
import {
  ADAPTERS,
  type Adapter,
  changing,
  type FakeTool,
  runScenario,
  type ScenarioResult,
  same,
  sequence,
  step,
  stopAt,
  times,
} from "./support.js";

const ran = (n: number) => Array.from({ length: n }, () => "ran");

const SCROLLS = [
  { form: "scroll_down({})", name: "scroll_down", call: step("scroll_down") },
  {
    form: 'browser({ action: "scroll", direction: "down" })',
    name: "browser",
    call: step("browser", { action: "scroll", direction: "down" }),
  },
];

const CYCLES = [
  {
    form: "ls_dir({}) and view_page({ n: 1 })",
    a: { name: "ls_dir", args: {}, text: "index.html\nabout.html" },
    b: { name: "view_page", args: { n: 1 }, text: "Page 1 of 1: Welcome. Nothing else here." },
  },
  {
    form: "two unknown tools",
    a: { name: "open_menu", args: { menu: "File" }, text: "Menu File: New, Open, Save" },
    b: { name: "close_menu", args: {}, text: "Menu closed." },
  },
];

const TRIPLE = [
  { name: "focus_window", args: { id: 1 }, text: "Focused: Signup form" },
  { name: "type_text", args: { text: "ada@example.com" }, text: "Typed 15 characters." },
  { name: "press_key", args: { key: "Enter" }, text: "Error: the form did not submit." },
] as const;

describe("classification the scenarios rely on", () => {
  it("scrolls and status polls are stateful; read_file and an unknown tool are not", () => {
    expect(isStatefulCall("scroll_down", {})).toBe(true);
    expect(isStatefulCall("browser", { action: "scroll", direction: "down" })).toBe(true);
    expect(isStatefulCall("get_job_status", { id: "j1" })).toBe(true);
    expect(isReadOnlyCall("get_job_status", { id: "j1" })).toBe(true); // read-only by name, yet stateful
    expect(isStatefulCall("read_file", { path: "a.py" })).toBe(false);
    for (const name of ["ls_dir", "view_page", "open_menu", "close_menu", "lookup_sku", ...TRIPLE.map((t) => t.name)]) {
      expect(isStatefulCall(name, {}), name).toBe(false);
    }
    expect(isStatefulCall("lookup_sku", {}, { stateful: true })).toBe(true);
  });
});

describe.each(ADAPTERS)("stateful tools and cycles through %s", (adapter: Adapter) => {
  const live = adapter !== "replayGuards";

  /** The run stopped at the `position`-th call (1-based), asking a person about `tool` (live adapters). */
  const expectStopped = (r: ScenarioResult, position: number, tool: string) => {
    expect(stopAt(r)).toBe(position);
    expect(r.outcomes).toHaveLength(position); // the model was not called again
    if (live) expect(r.interrupt).toMatchObject({ level: 3, tool, attempts: 3 });
  };
  const expectNothingBlocked = (r: ScenarioResult) => {
    expect(r.strikes).toBe(0);
    expect(r.interrupt).toBeUndefined();
    const blocked = Object.entries(r.toolGuard.stats.blocked).filter(([, n]) => n > 0);
    expect(blocked).toEqual([]);
  };

  describe("1-2. scrolling", () => {
    it.each(SCROLLS)("10 scrolls $form that show new content each time all run, no strike", async ({ name, call }) => {
      const tools = [changing(name, (n) => `Viewport ${n}: items ${n * 10 - 9}-${n * 10}`)];
      const r = await runScenario(adapter, tools, times(10, call));
      expect(r.outcomes).toEqual(ran(10));
      expect(r.ran[name]).toBe(10);
      expectNothingBlocked(r);
    });

    it.each(SCROLLS)(
      "5 scrolls $form stuck on one page: 2 run, the 3rd is blocked, the 5th stops",
      async ({ name, call }) => {
        const tools = [same(name, "Viewport: items 1-10 (end of page)")];
        const r = await runScenario(adapter, tools, times(5, call));
        expect(r.outcomes).toEqual(["ran", "ran", "consecutive@1", "consecutive@2", "stop"]);
        expect(r.ran[name]).toBe(2);
        expectStopped(r, 5, name);
      },
    );
  });

  describe("3-4. a cycle of two calls", () => {
    const tools = (c: (typeof CYCLES)[number], results: "same" | "changing"): FakeTool[] =>
      results === "same"
        ? [same(c.a.name, c.a.text), same(c.b.name, c.b.text)]
        : [changing(c.a.name, (n) => `${c.a.text} (v${n})`), changing(c.b.name, (n) => `${c.b.text} (v${n})`)];

    it.each(CYCLES)(
      "$form with identical results: A,B,A,B run, A again is blocked (cycle) and repeats stop",
      async (c) => {
        const A = step(c.a.name, c.a.args);
        const B = step(c.b.name, c.b.args);
        const r = await runScenario(adapter, tools(c, "same"), [A, B, A, B, A, A, A, A]);
        expect(r.outcomes).toEqual([...ran(4), "cycle@1", "cycle@2", "stop"]);
        expect(r.ran).toEqual({ [c.a.name]: 2, [c.b.name]: 2 });
        expectStopped(r, 7, c.a.name);
      },
    );

    it.each(CYCLES)("$form with identical results, the model going round and round: escalates to a stop", async (c) => {
      const A = step(c.a.name, c.a.args);
      const B = step(c.b.name, c.b.args);
      const r = await runScenario(adapter, tools(c, "same"), [A, B, A, B, A, B, A, B, A, B]);
      expect(r.outcomes.slice(0, 5)).toEqual([...ran(4), "cycle@1"]);
      // B is a call of the same cycle: its block is the 2nd strike (as cycle or consecutive), A's 3rd round stops.
      expect(r.outcomes[5]).toMatch(/^(cycle|consecutive)@2$/);
      expect(r.ran).toEqual({ [c.a.name]: 2, [c.b.name]: 2 });
      expectStopped(r, 7, c.a.name);
    });

    it.each(CYCLES)("$form whose results change every round is never blocked", async (c) => {
      const A = step(c.a.name, c.a.args);
      const B = step(c.b.name, c.b.args);
      const r = await runScenario(adapter, tools(c, "changing"), [A, B, A, B, A, B, A, B]);
      expect(r.outcomes).toEqual(ran(8));
      expect(r.ran).toEqual({ [c.a.name]: 4, [c.b.name]: 4 });
      expectNothingBlocked(r);
    });
  });

  describe("5. polling a status", () => {
    const poll = step("get_job_status", { id: "j1" });

    it("a status that changes on every poll (running 1/3, running 2/3, done) is progress: all 3 run", async () => {
      const tools = [sequence("get_job_status", ["running: step 1/3", "running: step 2/3", "done"])];
      const r = await runScenario(adapter, tools, times(3, poll));
      expect(r.outcomes).toEqual(ran(3));
      expect(r.ran.get_job_status).toBe(3);
      expectNothingBlocked(r);
    });

    it('"running", "running", then "done" back to back: a job still running is waited for, all 3 run (issue 63)', async () => {
      // Two equal answers that say the job still runs are no stuck repeat: the 3rd poll, which answers "done", runs.
      const tools = [sequence("get_job_status", ["running", "running", "done"])];
      const r = await runScenario(adapter, tools, times(3, poll));
      expect(r.outcomes).toEqual(ran(3));
      expect(r.answers[2]).toBe("done");
      expectNothingBlocked(r);
    });

    it('"paused", "paused", then "done" back to back: two equal answers that do not say it runs block the 3rd', async () => {
      const tools = [sequence("get_job_status", ["paused", "paused", "done"])];
      const r = await runScenario(adapter, tools, times(3, poll));
      expect(r.outcomes).toEqual(["ran", "ran", "consecutive@1"]);
      expect(r.ran.get_job_status).toBe(2);
      expect(r.strikes).toBe(1);
    });

    it("polls with a wait between them (poll, sleep, poll, sleep, …) run until done, however often they repeat", async () => {
      const sleep = step("sleep", { seconds: 10 });
      const states = ["running", "running", "running", "running", "done"];
      const tools = [sequence("get_job_status", states), same("sleep", "slept 10 s")];
      const script = [poll, sleep, poll, sleep, poll, sleep, poll, sleep, poll];
      const r = await runScenario(adapter, tools, script);
      expect(r.outcomes).toEqual(ran(9));
      expect(r.ran.get_job_status).toBe(5);
      expect(r.ran.sleep).toBe(4);
      expectNothingBlocked(r);
    });

    it("waiting longer is no repeat: sleep, sleep, sleep all run", async () => {
      const sleep = step("wait_for_build", { minutes: 1 });
      const r = await runScenario(adapter, [same("wait_for_build", "still building")], times(3, sleep));
      expect(r.outcomes).toEqual(ran(3));
      expectNothingBlocked(r);
    });

    it('"running" forever: reminded from the 10th poll, blocked at the 20th (OpenClaw\'s poll_no_progress, issue 63)', async () => {
      const r = await runScenario(adapter, [same("get_job_status", "running")], times(24, poll));
      expect(r.outcomes.slice(0, 20)).toEqual([...ran(19), "repeat_ceiling@1"]);
      expect(r.ran.get_job_status).toBe(19);
      expect(r.answers[9]).toContain("[REPEATED CALL]");
      expect(stopAt(r)).toBeLessThanOrEqual(23);
    });
  });

  describe("6. a stateful read is never redundant", () => {
    const fileTools = [same("list_files", "a.py\nb.py"), same("read_file", "x = 1\n")];
    const between = [step("list_files", { path: "a" }), step("list_files", { path: "b" })];

    it("get_job_status polled again after other reads, with the same result, runs every time", async () => {
      const poll = step("get_job_status", { id: "j1" });
      const tools = [same("get_job_status", "running"), ...fileTools];
      const script = [poll, between[0]!, poll, between[1]!, poll];
      const r = await runScenario(adapter, tools, script);
      expect(r.outcomes).toEqual(ran(5));
      expect(r.ran.get_job_status).toBe(3);
      expectNothingBlocked(r);
      // Not even a would-be block: observe mode records none.
      const observed = await runScenario(adapter, tools, script, { mode: "observe" });
      expect(observed.toolGuard.observed).toEqual([]);
    });

    it("the same script with read_file (read-only, not stateful): the repeat is redundant", async () => {
      const read = step("read_file", { path: "a.py" });
      const r = await runScenario(adapter, fileTools, [read, between[0]!, read]);
      expect(r.outcomes).toEqual(["ran", "ran", "redundant@1"]);
      expect(r.ran.read_file).toBe(1);
    });
  });

  describe("7. a tool declared stateful: false", () => {
    const lookup = step("lookup_sku", { sku: "A-1" });
    const tools = [same("lookup_sku", "A-1: 4 in stock")];

    it("its 2nd identical call is blocked before it runs", async () => {
      const r = await runScenario(adapter, tools, times(2, lookup), { tools: { lookup_sku: { stateful: false } } });
      expect(r.outcomes).toEqual(["ran", "consecutive@1"]);
      expect(r.ran.lookup_sku).toBe(1);
    });

    it("undeclared (an unknown tool), the 2nd runs and the 3rd, after two equal results, is blocked", async () => {
      const r = await runScenario(adapter, tools, times(3, lookup));
      expect(r.outcomes).toEqual(["ran", "ran", "consecutive@1"]);
      expect(r.ran.lookup_sku).toBe(2);
    });
  });

  describe("8. a read-only deterministic tool (regression)", () => {
    it("read_file's 2nd identical call is blocked before it runs", async () => {
      const read = step("read_file", { path: "a.py" });
      const r = await runScenario(adapter, [same("read_file", "x = 1\n")], times(2, read));
      expect(r.outcomes).toEqual(["ran", "consecutive@1"]);
      expect(r.ran.read_file).toBe(1);
    });
  });

  describe("9. a cycle of three calls", () => {
    const tools = TRIPLE.map((t) => same(t.name, t.text));
    const [A, B, C] = TRIPLE.map((t) => step(t.name, { ...t.args })) as [
      ReturnType<typeof step>,
      ReturnType<typeof step>,
      ReturnType<typeof step>,
    ];

    it("with identical results: two rounds run, the 3rd round's call is blocked (cycle) and repeats stop", async () => {
      const r = await runScenario(adapter, tools, [A, B, C, A, B, C, A, A, A, A]);
      expect(r.outcomes).toEqual([...ran(6), "cycle@1", "cycle@2", "stop"]);
      expect(r.ran).toEqual({ focus_window: 2, type_text: 2, press_key: 2 });
      expectStopped(r, 9, "focus_window");
    });

    it("with identical results, the model going round and round: strikes go on to a stop in the 3rd round", async () => {
      const r = await runScenario(adapter, tools, [A, B, C, A, B, C, A, B, C, A, B, C]);
      expect(r.outcomes.slice(0, 8)).toEqual([...ran(6), "cycle@1", "cycle@2"]);
      expect(r.ran).toEqual({ focus_window: 2, type_text: 2, press_key: 2 });
      expectStopped(r, 9, "press_key");
    });

    it("whose results change every round is never blocked", async () => {
      const moving = TRIPLE.map((t) => changing(t.name, (n) => `${t.text} (${n})`));
      const r = await runScenario(adapter, moving, [A, B, C, A, B, C, A, B, C]);
      expect(r.outcomes).toEqual(ran(9));
      expectNothingBlocked(r);
    });
  });
});
