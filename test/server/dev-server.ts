/**
 * Starts `npx langgraphjs dev` on a free loopback port for a test file, and stops it with every process it started.
 * Offline: no tracing, no analytics, no browser.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { join } from "node:path";

const root = join(import.meta.dirname, "..", "..");
export const START_TIMEOUT_MS = 60_000;

export interface DevServer {
  url: string;
  /** The server's last output (stdout and stderr), for failure messages. */
  log(): string;
  /** Ends the server's whole process group (npx, the CLI, tsx watch, the server), SIGKILL if it lingers. */
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, "127.0.0.1");
  await once(probe, "listening");
  const address = probe.address();
  probe.close();
  await once(probe, "close");
  if (address === null || typeof address === "string") throw new Error("no TCP port");
  return address.port;
}

async function stopGroup(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  const alive = () => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(-pid, "SIGTERM");
  const deadline = Date.now() + 5_000;
  while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (alive()) process.kill(-pid, "SIGKILL");
}

/**
 * Serves `config` (a langgraph.json relative to the repository root) and polls `/ok` until the server answers;
 * fails early, with the server's output, if it exits. `env` is added to the server's environment.
 */
export async function startDevServer(config: string, env: Record<string, string> = {}): Promise<DevServer> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = "";
  const child = spawn(
    "npx",
    ["--no", "langgraphjs", "dev", "--no-browser", "--host", "127.0.0.1", "--port", String(port), "--config", config],
    {
      cwd: root,
      detached: true, // its own process group, so that stop() ends every process it started
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        // Offline: no LangSmith tracing, no CLI analytics, no browser.
        LANGSMITH_TRACING: "false",
        LANGSMITH_TRACING_V2: "false",
        LANGCHAIN_TRACING: "false",
        LANGCHAIN_TRACING_V2: "false",
        LANGGRAPH_CLI_NO_ANALYTICS: "1",
        BROWSER: "none",
        NO_COLOR: "1",
        ...env,
      },
    },
  );
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const server: DevServer = { url, log: () => output, stop: () => stopGroup(child) };
  try {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`the server exited (${child.exitCode ?? child.signalCode}):\n${output}`);
      const ok = await fetch(`${url}/ok`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return server;
      if (Date.now() > deadline) throw new Error(`the server did not answer within ${START_TIMEOUT_MS} ms:\n${output}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (error) {
    await server.stop();
    throw error;
  }
}
