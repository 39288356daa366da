#!/usr/bin/env node
// Serves what the example page needs on 127.0.0.1, so it can fetch the browser bundle, the WebAssembly core and the
// bundled data (browsers do not let a file:// page fetch files): GET and HEAD only; only files under the folders in
// SERVED (after following links, still inside the repository); no dot segment; only requests addressed to
// 127.0.0.1 or localhost at this port (a DNS-rebinding page cannot read them); nothing listed; regular files only (a
// FIFO, socket or device is refused with 403 and never opened: opening a FIFO waits for a writer, and enough such
// requests would hold every thread of the file system pool).
//   node examples/browser/serve.mjs [PORT]     (npm run example:browser; PORT 0, the default, picks a free one)
import { constants, createReadStream, fstatSync, realpathSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".tsv": "text/tab-separated-values; charset=utf-8",
};

/** The folders of the repository the example page reads. */
export const SERVED = ["examples/browser", "dist/browser", "wasm", "data"];

/**
 * Starts the server on `port` (0: a free one) for the files under `folders` of `root`; resolves once listening
 * (`url` is the example page).
 */
export function serveRepository(root, port = 0, folders = SERVED) {
  const realRoot = realpathSync(root);
  const allowed = folders.map((f) => join(realRoot, f) + sep);
  let hosts = [];
  const server = createServer((req, res) => {
    const fail = (status) => res.writeHead(status).end();
    if (req.method !== "GET" && req.method !== "HEAD") return fail(405);
    if (!hosts.includes(req.headers.host ?? "")) return fail(403);
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url ?? "/", "http://127.0.0.1").pathname);
    } catch {
      return fail(400);
    }
    if (pathname.split("/").some((segment) => segment.startsWith(".")) || pathname.includes("\0")) return fail(404);
    let file;
    try {
      file = resolve(realRoot, `.${pathname}`);
      if (statSync(file).isDirectory()) file = join(file, "index.html");
      file = realpathSync(file);
    } catch {
      return fail(404);
    }
    if (!allowed.some((dir) => file.startsWith(dir)) || relative(realRoot, file).startsWith("..")) return fail(404);
    const type = TYPES[extname(file)];
    if (!type) return fail(404);
    try {
      if (!statSync(file).isFile()) return fail(403);
    } catch {
      return fail(404);
    }
    // O_NONBLOCK: should the path have become a FIFO since the check, the open returns at once instead of waiting for
    // a writer, and the descriptor's own type is checked again below.
    const stream = createReadStream(file, { flags: constants.O_RDONLY | constants.O_NONBLOCK });
    stream.once("error", () => (res.headersSent ? res.destroy() : fail(404)));
    stream.once("open", (fd) => {
      let regular = false;
      try {
        regular = fstatSync(fd).isFile();
      } catch {
        // not regular, as far as anyone can tell
      }
      if (!regular) {
        stream.destroy();
        return fail(403);
      }
      res.writeHead(200, { "content-type": type, "cache-control": "no-store" });
      if (req.method === "HEAD") {
        stream.destroy();
        res.end();
      } else stream.pipe(res);
    });
  });
  return new Promise((done, failed) => {
    server.once("error", failed);
    server.listen(port, "127.0.0.1", () => {
      const bound = server.address().port;
      hosts = [`127.0.0.1:${bound}`, `localhost:${bound}`];
      done({ server, url: `http://127.0.0.1:${bound}/examples/browser/` });
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
  const { url } = await serveRepository(root, Number(process.argv[2] ?? 0));
  console.log(`open ${url} (Ctrl-C stops the server)`);
}
