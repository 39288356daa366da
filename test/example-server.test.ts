/**
 * The example page's server (examples/browser/serve.mjs, `npm run example:browser`) serves regular files only: a
 * FIFO inside a served folder is refused at once, and however many requests ask for it the server still answers
 * the next one. Opening a FIFO for reading waits for a writer; before, each such request held one thread of libuv's
 * file system pool (4 by default), and a few of them stopped every file the server serves.
 */
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdirSync, openSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import { tempDir } from "./helpers/temp";

const root = path.resolve(__dirname, "..");
const site = tempDir("example-server");

const serveModule = () =>
  import(path.join(root, "examples", "browser", "serve.mjs")) as Promise<{
    serveRepository(root: string, port?: number, folders?: string[]): Promise<{ server: Server; url: string }>;
  }>;

describe("the example page's server", () => {
  it("refuses a FIFO in a served folder (403) and still serves its regular files", async () => {
    mkdirSync(path.join(site, "data"), { recursive: true });
    writeFileSync(path.join(site, "data", "ok.tsv"), "a\tr\tb\n");
    const fifo = path.join(site, "data", "pipe.tsv");
    execFileSync("mkfifo", [fifo]);
    const { serveRepository } = await serveModule();
    const { server, url } = await serveRepository(site, 0, ["data"]);
    const base = url.replace(/examples\/browser\/$/, "");
    const get = (p: string) => fetch(new URL(p, base), { signal: AbortSignal.timeout(20_000) });
    try {
      // More requests for the FIFO than the file system pool has threads.
      const refused = await Promise.all(Array.from({ length: 8 }, () => get("data/pipe.tsv")));
      expect(refused.map((r) => r.status)).toEqual(Array(8).fill(403));
      const ok = await get("data/ok.tsv");
      expect(ok.status).toBe(200);
      expect(await ok.text()).toBe("a\tr\tb\n");
      expect((await get("data/none.tsv")).status).toBe(404);
    } finally {
      server.closeAllConnections();
      server.close();
      // A server that did open the FIFO waits for a writer: one comes, so that no thread stays blocked.
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // no reader waiting
      }
    }
  });
});
