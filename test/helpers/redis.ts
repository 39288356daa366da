/**
 * A real Redis for the queue's tests (test/queue.test.ts, test/pbg-shards.test.ts): Debian's redis-server started on
 * a free localhost port without persistence, ready once it answers PING, and killed by the test; the bullmq package
 * (a devDependency) beside it. Both are externals: a test that needs one skips with the reason where it is missing,
 * and fails under KGRANK_REQUIRE_EXTERNAL=1 (CI).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import * as net from "node:net";

import { external, runs } from "./external";
import { waitFor } from "./wait";

let bullmqInstalled = true;
try {
  require.resolve("bullmq");
} catch {
  bullmqInstalled = false;
}
export const redisServer = external(
  "redis-server",
  runs("redis-server", ["--version"]),
  "install Debian's redis-server package",
);
export const bullmq = external("the package bullmq", bullmqInstalled, "npm install (bullmq is a devDependency)");

/** A localhost TCP port nobody listens on at the moment of asking. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

/** redis-server on 127.0.0.1:port with nothing saved to disk, once it answers PING (the wait fails loudly). */
export async function startRedisServer(port: number): Promise<ChildProcess> {
  const server = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: "ignore" },
  );
  await waitFor(
    `redis-server on port ${port} to answer PING`,
    () => spawnSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" }).stdout?.trim() === "PONG",
  );
  return server;
}

/** SIGKILL a child process and wait for its exit; nothing when there is none or it has ended. */
export async function killAndWait(child: ChildProcess | null): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.on("exit", r));
  child.kill("SIGKILL");
  await gone;
}
