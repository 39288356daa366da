#!/usr/bin/env node
// Serves the repository's files on 127.0.0.1 so the example page can fetch the browser bundle, the WebAssembly core and
// the bundled data (browsers do not let a file:// page fetch files). GET and HEAD only, nothing outside the
// repository, nothing listed.
//   node examples/browser/serve.mjs [PORT]     (npm run example:browser; PORT 0, the default, picks a free one)
import { createReadStream, statSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".tsv": "text/tab-separated-values; charset=utf-8",
  ".json": "application/json",
  ".css": "text/css",
};

/** Starts the server on `port` (0: a free one); resolves to it once listening (`url` is the example page). */
export function serveRepository(root, port = 0) {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    let file = resolve(root, `.${decodeURIComponent(url.pathname)}`);
    const inside = relative(root, file);
    if (
      (req.method !== "GET" && req.method !== "HEAD") ||
      inside.startsWith("..") ||
      inside.split(sep).includes(".git")
    ) {
      res.writeHead(req.method === "GET" || req.method === "HEAD" ? 404 : 405).end();
      return;
    }
    try {
      if (statSync(file).isDirectory()) file = join(file, "index.html");
      const size = statSync(file).size;
      res.writeHead(200, {
        "content-type": TYPES[extname(file)] ?? "application/octet-stream",
        "content-length": size,
        "cache-control": "no-store",
      });
      if (req.method === "HEAD") res.end();
      else createReadStream(file).pipe(res);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((done, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", () => {
      const { port: bound } = server.address();
      done({ server, url: `http://127.0.0.1:${bound}/examples/browser/` });
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
  const { url } = await serveRepository(root, Number(process.argv[2] ?? 0));
  console.log(`open ${url} (Ctrl-C stops the server)`);
}
