/**
 * A PostgreSQL server for tests: the one `PG_URL` points at, or a throwaway cluster started here (initdb + pg_ctl,
 * trust auth, loopback only, fsync off) and removed by `stop()`. `.ci/postgres.sh` does the same for CI.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { appendFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";

export interface PgServer {
  url: string;
  stop(): Promise<void>;
}

/** The directory holding initdb and pg_ctl, or undefined when PostgreSQL is not installed. */
function findBinDir(): string | undefined {
  const has = (dir: string) => existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"));
  const candidates: string[] = [];
  if (process.env.PG_BINDIR) candidates.push(process.env.PG_BINDIR);
  try {
    candidates.push(execFileSync("pg_config", ["--bindir"], { encoding: "utf8", stdio: "pipe" }).trim());
  } catch {
    // no pg_config: look further
  }
  try {
    const versions = readdirSync("/usr/lib/postgresql")
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(`/usr/lib/postgresql/${v}/bin`);
  } catch {
    // not Debian's layout
  }
  candidates.push(...(process.env.PATH ?? "").split(delimiter).filter(Boolean));
  return candidates.find(has);
}

/** uid and gid of a user from /etc/passwd. */
function userIds(name: string): { uid: number; gid: number } | undefined {
  try {
    for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
      const [user, , uid, gid] = line.split(":");
      if (user === name && uid && gid) return { uid: Number(uid), gid: Number(gid) };
    }
  } catch {
    // no /etc/passwd
  }
  return undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** The last non-empty lines of a command's output or a log, on one line. */
function tail(text: string, lines = 3): string {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-lines)
    .join(" | ");
}

/**
 * PG_URL when set (never stopped by us); else a throwaway cluster: initdb + pg_ctl as an unprivileged user
 * (Debian's `postgres` when running as root — initdb/pg_ctl refuse root), in a temp dir, on a free loopback port;
 * `{ skip }` with one clear reason when PostgreSQL is not installed or cannot start.
 */
export async function startPostgres(): Promise<PgServer | { skip: string }> {
  if (process.env.PG_URL) return { url: process.env.PG_URL, stop: async () => {} };

  const bin = findBinDir();
  if (!bin) {
    return {
      skip: "PostgreSQL is not installed (no initdb/pg_ctl via pg_config, /usr/lib/postgresql/*/bin or PATH) and PG_URL is not set",
    };
  }
  const isRoot = process.getuid?.() === 0;
  const owner = isRoot ? (userIds("postgres") ?? userIds("nobody")) : undefined;
  if (isRoot && !owner)
    return { skip: "running as root and no unprivileged user (postgres, nobody) to run PostgreSQL" };

  const dir = mkdtempSync(join(tmpdir(), "lgg-pg-"));
  const data = join(dir, "data");
  const log = join(dir, "server.log");
  if (owner) {
    chmodSync(dir, 0o755);
    chownSync(dir, owner.uid, owner.gid);
  }
  const run = (cmd: string, args: string[]) =>
    spawnSync(join(bin, cmd), args, {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, LC_ALL: "C", LANG: "C" },
      timeout: 60_000,
      ...(owner ?? {}),
    });
  const fail = (what: string, detail: string) => {
    rmSync(dir, { recursive: true, force: true });
    return { skip: `PostgreSQL cannot start (${what}): ${detail}` };
  };

  const init = run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
  if (init.status !== 0) return fail("initdb", tail(`${init.stderr ?? ""}\n${init.error?.message ?? ""}`));

  // Fast and private: no durability, loopback only, the socket inside the temp dir.
  const conf = [
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${dir}'`,
    "fsync = off",
    "synchronous_commit = off",
    "full_page_writes = off",
    "max_connections = 300",
    "shared_buffers = 32MB",
  ];
  await appendFile(join(data, "postgresql.conf"), `\n${conf.join("\n")}\n`);

  let lastError = "";
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const start = run("pg_ctl", ["start", "-D", data, "-l", log, "-w", "-t", "30", "-o", `-p ${port}`]);
    if (start.status === 0) {
      const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
      let stopped = false;
      const stopSync = () => {
        if (stopped) return;
        stopped = true;
        run("pg_ctl", ["stop", "-D", data, "-m", "immediate", "-w"]);
        rmSync(dir, { recursive: true, force: true });
      };
      // A test process that exits without calling stop() does not leave the cluster running.
      process.once("exit", stopSync);
      return {
        url,
        stop: async () => {
          process.removeListener("exit", stopSync);
          stopSync();
        },
      };
    }
    let logText = "";
    try {
      logText = readFileSync(log, "utf8");
    } catch {
      // no log written
    }
    lastError = tail(`${start.stderr ?? ""}\n${logText}\n${start.error?.message ?? ""}`);
    // the port may have been taken between freePort() and the start: try another
    if (!/already in use|could not bind/i.test(logText)) break;
  }
  return fail("pg_ctl start", lastError);
}

/** A new empty database on the server (CREATE DATABASE with a unique name) and its URL. */
export async function freshDatabase(server: PgServer): Promise<string> {
  const name = `lgg_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Whether a fixture's `<db-file | memory>` argument is a PostgreSQL URL. */
export const isPostgresUrl = (where: string) => /^postgres(ql)?:\/\//.test(where);

/**
 * `PostgresSaver.fromConnString(url)` and its `setup()`, which creates the tables. Setup is not safe to run twice at
 * once on a new database (two processes race on the migrations table), so it holds an advisory lock. Close the
 * saver's pool with `saver.end()`, or the process waits for its idle connections.
 */
export async function openPostgresSaver(url: string): Promise<PostgresSaver> {
  const saver = PostgresSaver.fromConnString(url);
  const lock = new pg.Client({ connectionString: url });
  await lock.connect();
  try {
    await lock.query("SELECT pg_advisory_lock(7146)");
    await saver.setup();
  } catch (e) {
    await saver.end();
    throw e;
  } finally {
    await lock.end(); // ends the session: releases the lock
  }
  return saver;
}
