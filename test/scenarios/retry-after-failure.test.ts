/**
 * Issue 43, class 5 (pydantic-ai's flaky-tool test: the tool answers "Temporary failure, please retry", then the
 * identical retry succeeds): the first retry after a failure was blocked. Now an identical call runs again after an
 * error that passes, twice (the AI SDK's `maxRetries` 2; issue 63 raised the time-outs' and 5xx errors' one retry):
 * a time-out, a service or connection down, an HTTP 429/5xx, an error that says to retry. An error that comes back the
 * same ("no such order") is not retried: on the recorded runs those identical retries are waste (`npm run eval`).
 * Through createAgent, createReactAgent and replay.
 */
import { describe, expect, it } from "vitest";
import { ADAPTERS, failing, runScenario, step, stopAt, times } from "./support.js";

const call = step("get_forecast", { city: "Paris" });
// Replay reports a call that ran as "ran" whatever it returned; the live agents say "failed".
const ran = (outcomes: string[]) => outcomes.map((o) => (o === "failed" ? "ran" : o));

describe.each(ADAPTERS)("two retries after a failure that may pass, through %s", (adapter) => {
  it("'Temporary failure, please retry', then success: the identical retry runs", async () => {
    const flaky = failing("get_forecast", "Temporary failure, please retry", (n) => n === 1, "Sunny, 21°C");
    const r = await runScenario(adapter, [flaky], times(2, call));
    expect(ran(r.outcomes)).toEqual(["ran", "ran"]);
    expect(r.answers[1]).toContain("Sunny");
  });

  it("an error that says to retry: two retries run, the 4th identical call is blocked", async () => {
    const down = failing("get_forecast", "Temporary failure, please retry", () => true);
    const r = await runScenario(adapter, [down], times(5, call));
    expect(ran(r.outcomes).slice(0, 3)).toEqual(["ran", "ran", "ran"]);
    expect(r.outcomes[3]).toMatch(/^consecutive@1$/);
    expect(r.ran.get_forecast).toBe(3);
  });

  it("a service unavailable (a 503) twice, then success: both retries run", async () => {
    const down = failing("get_forecast", "503 Service Unavailable", (n) => n <= 2, "Sunny, 21°C");
    const r = await runScenario(adapter, [down], times(3, call));
    expect(ran(r.outcomes)).toEqual(["ran", "ran", "ran"]);
    expect(r.answers[2]).toContain("Sunny");
  });

  it("web_fetch timing out twice, then succeeding: all 3 run (issue 63, the AI SDK's maxRetries 2)", async () => {
    const fetch = failing("web_fetch", "Error: ETIMEDOUT", (n) => n <= 2, "200 OK: <html>…</html>");
    const r = await runScenario(adapter, [fetch], times(3, step("web_fetch", { url: "https://example.com/a" })));
    expect(ran(r.outcomes)).toEqual(["ran", "ran", "ran"]);
    expect(r.answers[2]).toContain("200 OK");
  });

  it("web_fetch timing out 4 times: two retries run, the 4th identical call is blocked", async () => {
    const fetch = failing("web_fetch", "Error: ETIMEDOUT", () => true);
    const r = await runScenario(adapter, [fetch], times(5, step("web_fetch", { url: "https://example.com/a" })));
    expect(ran(r.outcomes).slice(0, 3)).toEqual(["ran", "ran", "ran"]);
    expect(r.outcomes[3]).toMatch(/^consecutive@1$/);
    expect(r.ran.web_fetch).toBe(3);
  });

  for (const error of ["500 Internal Server Error", "502 Bad Gateway", "504 Gateway Timeout"]) {
    it(`'${error}' twice, then success: both retries run`, async () => {
      const down = failing("get_forecast", error, (n) => n <= 2, "Sunny, 21°C");
      const r = await runScenario(adapter, [down], times(3, call));
      expect(ran(r.outcomes)).toEqual(["ran", "ran", "ran"]);
    });
  }

  it("an error that comes back the same is not retried: the 2nd identical call is blocked, the loop stops", async () => {
    const missing = failing("get_forecast", "No forecast station for this city", () => true);
    const r = await runScenario(adapter, [missing], times(8, call));
    expect(r.outcomes[1]).toMatch(/^consecutive@1$/);
    expect(r.ran.get_forecast).toBe(1);
    expect(stopAt(r)).toBe(5);
  });
});
