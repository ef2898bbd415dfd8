/**
 * A block never quotes stale content (issue 34, item 6). With the file tools, the cycle and threshold rules blocked
 * a `read_file` after the file changed on disk, and quoted the old content as the "previous result": list, read,
 * list, read, an edit made outside the agent, read — the answer showed `DEBUG = True` while the file said
 * `DEBUG = False`, though docs/file-tools.md promises that edits made outside the tools are never served stale.
 * Now the file tools' freshness check decides first, in every rule: a read whose answer would differ from the one a
 * block would quote is no repeat. Loops over unchanged files are still blocked. Run through createReactAgent
 * (GuardedToolNode over createFileTools + escalationHook), createAgent (guardMiddleware + fileToolsMiddleware), and
 * replayGuards over the recording of the same script run without guards (the recorded answers stand for the check).
 */
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { afterEach, describe, expect, it } from "vitest";
import { createFileTools } from "../../src/fs/tools.js";
import { escalationHook, GuardedToolNode, GuardMessagesState, type ToolGuardState } from "../../src/index.js";
import { fileToolsMiddleware, guardMiddleware } from "../../src/middleware/index.js";
import { replayGuards, runFromMessages } from "../../src/replay/index.js";
import { ScriptedChatModel, type ScriptedToolCall, type ScriptStep } from "../../src/testing/index.js";
import { outcomesOf } from "./support.js";

const OLD = "DEBUG = True\nDATABASE_URL = 'sqlite:///app.db'\n";
const NEW = "DEBUG = False\nDATABASE_URL = 'sqlite:///app.db'\n";
/** A file long enough that a repeat read is answered with a reference to the earlier result. */
const LONG = (debug: boolean) =>
  `DEBUG = ${debug ? "True" : "False"}\n${Array.from({ length: 40 }, (_, i) => `SETTING_${i} = ${i}`).join("\n")}\n`;

const list = { name: "list_files", args: {} };
const read = { name: "read_file", args: { path: "config.py" } };

/** One model response: a call, after `before` (an edit made outside the agent) when given. */
interface Step {
  call: ScriptedToolCall;
  before?: (root: string) => void;
}
const edit =
  (content: string) =>
  (root: string): void =>
    writeFileSync(join(root, "config.py"), content);
const remove = (root: string): void => unlinkSync(join(root, "config.py"));

type Adapter = "createReactAgent" | "createAgent" | "replayGuards";
const ADAPTERS: readonly Adapter[] = ["createReactAgent", "createAgent", "replayGuards"];

interface Run {
  outcomes: string[];
  answers: string[];
  toolGuard: ToolGuardState;
}

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A project with `config.py` holding `content`. */
function project(content: string): string {
  const root = mkdtempSync(join(tmpdir(), "stale-reads-"));
  roots.push(root);
  writeFileSync(join(root, "config.py"), content);
  return root;
}

/** The model's script: each step's edit is made when the model is called for it. */
function model(root: string, steps: readonly Step[]): ScriptedChatModel {
  const script: ScriptStep[] = steps.map(({ call, before }) => () => {
    before?.(root);
    return { toolCalls: [call] };
  });
  return new ScriptedChatModel([...script, "Finished."]);
}

const config = (thread: string) => ({ configurable: { thread_id: thread }, recursionLimit: 200 });
const input = { messages: [{ role: "user", content: "Check the config." }] };

async function runLive(adapter: Exclude<Adapter, "replayGuards">, content: string, steps: Step[]): Promise<Run> {
  const root = project(content);
  let result: Record<string, unknown>;
  if (adapter === "createReactAgent") {
    const node = new GuardedToolNode(createFileTools({ root }));
    const agent = createReactAgent({
      llm: model(root, steps),
      tools: node,
      stateSchema: GuardMessagesState,
      postModelHook: escalationHook(node),
      checkpointer: new MemorySaver(),
    });
    result = (await agent.invoke(input, config("react"))) as Record<string, unknown>;
  } else {
    const agent = createAgent({
      model: model(root, steps),
      tools: [],
      middleware: [guardMiddleware(), fileToolsMiddleware({ root })],
      checkpointer: new MemorySaver(),
    });
    result = (await agent.invoke(input, config("agent"))) as Record<string, unknown>;
  }
  return { ...outcomesOf(result.messages as BaseMessage[]), toolGuard: result.toolGuard as ToolGuardState };
}

/** The script run without guards (the file tools and their cache as they are), then replayed through the guards. */
async function runReplay(content: string, steps: Step[]): Promise<Run> {
  const root = project(content);
  const tools = createFileTools({ root });
  const agent = createReactAgent({
    llm: model(root, steps),
    tools: new ToolNode(tools),
    stateSchema: GuardMessagesState,
    checkpointer: new MemorySaver(),
  });
  const result = await agent.invoke(input, config("recorded"));
  const run = runFromMessages(result.messages, "recorded");
  const { decisions, state } = replayGuards(run, { agentTools: tools });
  // An allowed call answers what it answered in the recording ("ran" or "failed").
  const recorded = outcomesOf(result.messages as BaseMessage[]).outcomes;
  const outcomes = decisions.map((d, i) =>
    d.action === "allow" ? (recorded[i] ?? "ran") : d.action === "block" ? `${d.rule}@${d.escalation}` : d.action,
  );
  return { outcomes, answers: decisions.map((d) => d.content), toolGuard: state };
}

const run = (adapter: Adapter, content: string, steps: Step[]) =>
  adapter === "replayGuards" ? runReplay(content, steps) : runLive(adapter, content, steps);

const ran = (n: number) => Array.from({ length: n }, () => "ran");
const blocks = (r: Run) => Object.values(r.toolGuard.stats.blocked).reduce((a, b) => a + b, 0);

describe.each(ADAPTERS)(
  "stale reads through %s (docs/file-tools.md: edits made outside are never served stale)",
  (adapter) => {
    it("list, read, list, read, an outside edit, read: the read runs and answers the new content", async () => {
      const r = await run(adapter, OLD, [
        { call: list },
        { call: read },
        { call: list },
        { call: read },
        { call: read, before: edit(NEW) },
      ]);
      expect(r.outcomes).toEqual(ran(5));
      expect(r.answers[4]).toContain("DEBUG = False");
      expect(r.answers[4]).not.toContain("DEBUG = True");
      expect(blocks(r)).toBe(0);
      expect(r.toolGuard.escalation.strikes).toBe(0);
    });

    it("an outside edit that changes only a timestamp: the read runs (results are compared exactly here)", async () => {
      // The file tools' results are compared exactly (a file's content is data), by the rules and by the freshness
      // check: the file that changed is read, and no block quotes the old stamp.
      const stamped = (at: string) => `# generated ${at}\n${OLD}`;
      const r = await run(adapter, stamped("2025-01-02T10:00:03Z"), [
        { call: list },
        { call: read },
        { call: list },
        { call: read },
        { call: read, before: edit(stamped("2025-01-02T10:05:41Z")) },
      ]);
      expect(r.outcomes).toEqual(ran(5));
      expect(r.answers[4]).toContain("2025-01-02T10:05:41Z");
      expect(blocks(r)).toBe(0);
    });

    it("a stamp changed between reads: the count of identical answers starts again there (one call later)", async () => {
      // Normalized, the four answers would be one answer, and the 4th read a threshold block though the file had
      // changed since the first; compared exactly, the reads after the change are counted afresh.
      const stamped = (at: string) => `# generated ${at}\n${OLD}`;
      const r = await run(adapter, stamped("2025-01-02T10:00:03Z"), [
        { call: read },
        { call: read, before: edit(stamped("2025-01-02T10:05:41Z")) },
        { call: read },
        { call: read },
        { call: read },
      ]);
      expect(r.outcomes).toEqual([...ran(4), "threshold@1"]);
      expect(r.answers[4]).toContain("2025-01-02T10:05:41Z");
    });

    it("read three times, an outside edit, read: the threshold rule lets the changed file be read", async () => {
      const r = await run(adapter, OLD, [
        { call: read },
        { call: read },
        { call: read },
        { call: read, before: edit(NEW) },
      ]);
      expect(r.outcomes).toEqual(ran(4));
      expect(r.answers[3]).toContain("DEBUG = False");
      expect(blocks(r)).toBe(0);
    });

    it("a long file answered by reference: the stuck cycle's read after an outside edit runs with the new content", async () => {
      const steps = [list, read, list, read, list, read].map((call): Step => ({ call }));
      const r = await run(adapter, LONG(true), [...steps, { call: read, before: edit(LONG(false)) }]);
      expect(r.outcomes).toEqual(ran(7));
      expect(r.answers[6]).toContain("DEBUG = False");
      expect(blocks(r)).toBe(0);
    });

    it("the file removed outside: the read runs and says so, rather than a block quoting the old content", async () => {
      const r = await run(adapter, OLD, [
        { call: list },
        { call: read },
        { call: list },
        { call: read },
        { call: read, before: remove },
      ]);
      expect(r.outcomes.slice(0, 4)).toEqual(ran(4));
      expect(r.outcomes[4]).toBe("failed");
      expect(r.answers[4]).not.toContain("DEBUG = True");
      expect(blocks(r)).toBe(0);
    });

    it("after a cycle block, an outside edit: the read the model repeats runs (no reminder, no strike) with the new content", async () => {
      const steps: Step[] = [list, read, list, read, read].map((call): Step => ({ call }));
      const r = await run(adapter, OLD, [...steps, { call: read, before: edit(NEW) }]);
      expect(r.outcomes).toEqual([...ran(4), "cycle@1", "ran"]);
      expect(r.answers[4]).toContain("DEBUG = True"); // the block quoted what the file held then
      expect(r.answers[5]).toContain("DEBUG = False");
      expect(r.toolGuard.escalation.strikes).toBe(0); // the read ran and succeeded: progress
    });

    describe("loops over unchanged files are still blocked, quoting what the file holds", () => {
      it("list, read, list, read, read: the 5th call is a cycle block", async () => {
        const r = await run(
          adapter,
          OLD,
          [list, read, list, read, read].map((call): Step => ({ call })),
        );
        expect(r.outcomes).toEqual([...ran(4), "cycle@1"]);
        expect(r.answers[4]).toContain("DEBUG = True");
      });

      it("an outside edit that changes nothing the read shows (the same content written again) is no change", async () => {
        const r = await run(
          adapter,
          OLD,
          [list, read, list, read].map((call): Step => ({ call })).concat([{ call: read, before: edit(OLD) }]),
        );
        expect(r.outcomes).toEqual([...ran(4), "cycle@1"]);
      });

      it("a file that holds a timestamp, unchanged: list, read, list, read, read is still a cycle block", async () => {
        // The rules and the freshness check compare the exact text: an unchanged file is unchanged.
        const r = await run(
          adapter,
          `# generated 2025-01-02T10:00:03Z\n${OLD}`,
          [list, read, list, read, read].map((call): Step => ({ call })),
        );
        expect(r.outcomes).toEqual([...ran(4), "cycle@1"]);
      });

      it("read four times: the 4th is a threshold block", async () => {
        const r = await run(
          adapter,
          OLD,
          [read, read, read, read].map((call): Step => ({ call })),
        );
        expect(r.outcomes).toEqual([...ran(3), "threshold@1"]);
      });
    });
  },
);
