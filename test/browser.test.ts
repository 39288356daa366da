/**
 * The browser build (dist/browser/kgrank.mjs, src/browser.ts) as a page uses it: examples/browser/ served over HTTP
 * (examples/browser/serve.mjs) and opened in headless Chromium (Debian's chromium), where it loads the WebAssembly
 * core and evaluates the bundled Nations with the frequency baseline. Its numbers must equal `kgrank evaluate --format
 * json` in Node (native): every rank-based number bit for bit; the geometric-mean family, which goes through
 * Math.log / Math.exp (V8's in the page, the C library's in the addon), within 1e-12 relative, as test/determinism
 * holds the backends to. Also loadWasm in this process: each kind of source, and that the kernels it installs give the
 * fallback's counts. Runs in the wasm tier (`npm run test:wasm`: the core must be built); Chromium missing: skipped
 * with the reason in the name (CI installs it and fails on the skip).
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";

import { backendInfo, kernels, loadWasm, nativeAddon } from "../src/backend/browser-backend";
import { tsKernels } from "../src/fallback";
import { caughtFrom } from "./helpers/errors";
import { external, runs } from "./helpers/external";
import { runKgrankProcess } from "./helpers/process";
import { tempDir } from "./helpers/temp";

const root = path.resolve(__dirname, "..");
const wasmFile = path.join(root, "wasm", "kgrank.wasm");
const chromium = external("chromium", runs("chromium", ["--version"]), "install Debian's chromium package");
const dir = tempDir("browser");

describe("loadWasm (the browser build's backend) in this process", () => {
  it("starts on the fallback and says how to load the core", () => {
    expect(nativeAddon()).toBeNull();
    const info = backendInfo();
    if (info.backend === "ts") expect(info.fallbackReason).toMatch(/loadWasm/);
  });

  it("takes the core's bytes, an ArrayBuffer, a Response, a promise of one or a compiled module", async () => {
    const bytes = new Uint8Array(readFileSync(wasmFile));
    const wasm = (globalThis as unknown as { WebAssembly: { compile(b: Uint8Array): Promise<object> } }).WebAssembly;
    const module = await wasm.compile(bytes);
    const sources = [
      bytes,
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
      new Response(bytes),
      Promise.resolve(new Response(bytes)),
      module,
    ];
    for (const source of sources) {
      const info = await loadWasm(source);
      expect(info).toMatchObject({ backend: "wasm", tier: "wasm", simd: "simd128", threads: 1 });
      expect(backendInfo().backend).toBe("wasm");
    }
  });

  it("the kernels it installs count as the fallback does", async () => {
    await loadWasm(readFileSync(wasmFile));
    const rows = 37;
    const cols = 101;
    const scores = new Float32Array(rows * cols).map((_, i) => ((i * 7919) % 13) - 6);
    const thresholds = new Float32Array(rows).map((_, r) => scores[r * cols + ((r * 31) % cols)]!);
    const run = (k: typeof tsKernels) => {
      const out = { greater: new Float64Array(rows), equal: new Float64Array(rows), nan: new Float64Array(rows) };
      k.countScores(scores, cols, thresholds, out);
      return out;
    };
    const want = run(tsKernels);
    expect(want.equal.some((e) => e > 1)).toBe(true); // ties are exercised
    expect(run(kernels())).toEqual(want);
  });
});

describe("the bundle (dist/browser/kgrank.mjs) imported as a page would, here in Node", () => {
  const bundle = path.join(root, "dist", "browser", "kgrank.mjs");
  type Bundle = typeof import("../src/browser");
  const load = () => import(pathToFileURL(bundle).href) as Promise<Bundle>;

  it("has every export of the package plus loadWasm, and no Node module inside", async () => {
    const k = await load();
    const cjs = (await import("../src/index")) as Record<string, unknown>;
    expect(Object.keys(k).sort()).toEqual([...Object.keys(cjs), "loadWasm"].sort());
    expect(readFileSync(bundle, "utf8")).not.toMatch(/\bfrom\s*["'](node:)?(fs|path|os|crypto|zlib|buffer)["']/);
  });

  it("what needs a file system says so (KGRANK_BROWSER), whatever it is asked", async () => {
    const k = await load();
    const calls: [string, () => unknown][] = [
      ["readNpy", () => k.readNpy("scores.npy")],
      ["readTriples", () => k.readTriples("train.tsv")],
      ["loadDataset", () => k.loadDataset("nations")],
      ["loadDatasetAsync", () => k.loadDatasetAsync("nations")],
      ["openEntityTable", () => k.openEntityTable("entity.npy")],
      ["writeNpy", () => k.writeNpy("out.npy", new Float32Array(2))],
    ];
    for (const [name, call] of calls) {
      const e = (await caughtFrom(call)) as Error & { code?: string };
      expect(e, name).toBeInstanceOf(Error);
      expect(e.message, name).toMatch(/not available in kgrank-native's browser build/);
    }
  });

  it("loadWasm rejects any bytes that are not the core (KgrankBackendError) and keeps the backend", async () => {
    const k = await load();
    const before = k.backendInfo().backend;
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 256 }), fc.boolean(), async (tail, magic) => {
        const bytes = magic ? Uint8Array.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, ...tail]) : tail;
        const e = await caughtFrom(() => k.loadWasm(bytes));
        expect(e).toBeInstanceOf(k.KgrankBackendError);
        expect(k.backendInfo().backend).toBe(before);
      }),
      { numRuns: 300, seed: 26 },
    );
  });
});

/** `command args` without blocking this process (the page's server runs in it); resolves with its output. */
function runAsync(command: string, args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      err ? reject(Object.assign(err, { stderr })) : resolve({ stdout, stderr }),
    );
  });
}

const unescapeHtml = (s: string) =>
  s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");

/** Leaf by leaf: `keys` paths and values; numbers compared as the header says. */
function compareJson(page: unknown, cli: unknown, where: string, problems: string[]): void {
  if (typeof cli === "number" && typeof page === "number") {
    if (Object.is(page, cli)) return;
    const logBased = /geometric/.test(where);
    if (logBased && Math.abs(page - cli) <= 1e-12 * Math.abs(cli)) return;
    problems.push(`${where}: page ${page}, CLI ${cli}`);
    return;
  }
  if (cli !== null && typeof cli === "object") {
    if (page === null || typeof page !== "object") {
      problems.push(`${where}: page ${JSON.stringify(page)}`);
      return;
    }
    const keys = new Set([...Object.keys(cli), ...Object.keys(page)]);
    for (const k of keys) {
      compareJson((page as Record<string, unknown>)[k], (cli as Record<string, unknown>)[k], `${where}.${k}`, problems);
    }
    return;
  }
  if (!Object.is(page, cli)) problems.push(`${where}: page ${JSON.stringify(page)}, CLI ${JSON.stringify(cli)}`);
}

describe("the example page in headless Chromium", () => {
  it.skipIf(chromium.missing)(
    chromium.name("evaluates Nations on the WebAssembly core; its numbers equal kgrank evaluate --format json"),
    async () => {
      const cli = runKgrankProcess(["evaluate", "--format", "json"], { cwd: root, timeout: 120_000 });
      expect(cli.status, cli.stderr).toBe(0);
      const want = JSON.parse(cli.stdout) as Record<string, unknown>;

      const { serveRepository } = (await import(path.join(root, "examples", "browser", "serve.mjs"))) as {
        serveRepository(root: string): Promise<{ server: import("node:http").Server; url: string }>;
      };
      const { server, url } = await serveRepository(root);
      let dom: string;
      let stderr: string;
      try {
        ({ stdout: dom, stderr } = await runAsync(
          "chromium",
          [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            `--user-data-dir=${path.join(dir, "profile")}`,
            // Virtual time runs until the page is idle (its fetches and the core's compilation included), at most 60 s.
            "--virtual-time-budget=60000",
            "--dump-dom",
            url,
          ],
          180_000,
        ));
      } finally {
        server.close();
      }
      const status = /<p id="status" data-state="([a-z]+)">([^<]*)<\/p>/.exec(dom);
      expect(status?.slice(1), "the page's status line").toEqual(["done", expect.stringMatching(/wasm backend/)]);
      const consoleLines = stderr.split("\n").filter((l) => /:CONSOLE[(:]\d+\)?\]/.test(l));
      expect(consoleLines, "console messages of the page").toEqual([]);
      const body = /<pre id="result">([^]*?)<\/pre>/.exec(dom)?.[1];
      expect(body, "the page's JSON").toBeDefined();
      const page = JSON.parse(unescapeHtml(body!)) as Record<string, unknown>;

      expect(page.backend).toMatchObject({ backend: "wasm", simd: "simd128", threads: 1, version: expect.any(String) });
      const problems: string[] = [];
      // What differs by design: the backend, and the results' own note of it.
      const { backend: _b, info: cliInfo, ...cliRest } = want;
      const { backend: _p, info: pageInfo, ...pageRest } = page;
      compareJson(pageRest, cliRest, "page", problems);
      compareJson(
        { ...(pageInfo as object), backend: "-" },
        { ...(cliInfo as object), backend: "-" },
        "info",
        problems,
      );
      expect(problems).toEqual([]);
      // The comparison covers every metric of every side and rank type.
      const results = want.results as Record<string, Record<string, Record<string, number>>>;
      expect(Object.keys(results).sort()).toEqual(["both", "head", "tail"]);
      expect(Object.keys(results.both!.realistic!).length).toBeGreaterThan(20);
    },
    240_000,
  );
});
