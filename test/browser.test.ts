/**
 * The browser build (dist/browser/kgrank.mjs, src/browser.ts) as a page uses it: examples/browser/ served over HTTP
 * (examples/browser/serve.mjs) and opened in headless Chromium (Debian's chromium), where it loads the WebAssembly
 * core and evaluates the bundled Nations with the frequency baseline. Its numbers must equal `kgrank evaluate --format
 * json` in Node (native): every rank-based number bit for bit; the geometric-mean family, which goes through
 * Math.log / Math.exp (V8's in the page, the C library's in the addon), within 1e-12 relative, as test/determinism
 * holds the backends to. A second page (test/fixtures/browser/) runs async calls whose work spans many slices, which
 * yield to a browser's event loop without setImmediate, and its bootstrap intervals equal Node's within 1e-12. Also loadWasm in this process: each kind of source, and that the kernels it installs give the
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
import { RankEvaluator } from "../src/index";
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

/**
 * Leaf by leaf: numbers compared as the header says; with `everyWithin`, every number within 1e-12 relative (the
 * fallback against native: sums of reciprocals and logs in another order).
 */
function compareJson(page: unknown, cli: unknown, where: string, problems: string[], everyWithin = false): void {
  if (typeof cli === "number" && typeof page === "number") {
    if (Object.is(page, cli)) return;
    // The geometric metrics and the median's expectation (the page's TypeScript medianMoments; the CLI's is C++) go
    // through Math.exp / Math.log / Math.log1p, which ECMAScript leaves to the engine to approximate: Chromium 150's
    // V8 put the expected median rank of Nations' head side one ulp from glibc's result (3.604659329465463 against
    // 3.6046593294654636), where Node 20's had agreed to the bit.
    const medianExpectation = /median/.test(where) && /(expected|variance|adjusted|z_)/.test(where);
    const loose = everyWithin || /geometric/.test(where) || medianExpectation;
    if (loose && Math.abs(page - cli) <= 1e-12 * Math.abs(cli)) return;
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
      const [p, c] = [(page as Record<string, unknown>)[k], (cli as Record<string, unknown>)[k]];
      compareJson(p, c, `${where}.${k}`, problems, everyWithin);
    }
    return;
  }
  if (!Object.is(page, cli)) problems.push(`${where}: page ${JSON.stringify(page)}, CLI ${JSON.stringify(cli)}`);
}

interface Served {
  server: import("node:http").Server;
  url: string;
}
const serveModule = () =>
  import(path.join(root, "examples", "browser", "serve.mjs")) as Promise<{
    SERVED: string[];
    serveRepository(root: string, port?: number, folders?: string[]): Promise<Served>;
  }>;

/** Serves the repository's example folders (and `extra`), opens `page` in headless Chromium; its DOM and log. */
async function openInChromium(page: string, extra: string[] = []): Promise<{ dom: string; consoleLines: string[] }> {
  const { SERVED, serveRepository } = await serveModule();
  const { server, url } = await serveRepository(root, 0, [...SERVED, ...extra]);
  try {
    const { stdout, stderr } = await runAsync(
      "chromium",
      [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--enable-logging=stderr",
        "--v=0",
        `--user-data-dir=${path.join(dir, "profile")}`,
        // Chromium dumps the DOM once the page's virtual time reaches this budget. Virtual time stands still while the
        // page runs or fetches, jumps to the end once nothing is left to do, but runs on, about 100 virtual seconds
        // per real one, while the core compiles off the main thread: a 60 s budget ran out in mid-compilation
        // on a loaded machine. 10^8 ms lasts ~1000 s of compilation (runAsync's 180 s bounds the real time); the
        // final jump takes longer the larger the budget (2^31 ms: 2.4-7 s more per page).
        "--virtual-time-budget=100000000",
        "--dump-dom",
        new URL(page, url.replace(/examples\/browser\/$/, "")).href,
      ],
      180_000,
    );
    return { dom: stdout, consoleLines: stderr.split("\n").filter((l) => /:CONSOLE[(:]\d+\)?\]/.test(l)) };
  } finally {
    server.close();
  }
}

/** The page's status line and the JSON of its <pre id="result">. */
function pageResult(dom: string): { status: string[] | undefined; json: Record<string, unknown> } {
  const status = /<p id="status" data-state="([a-z]+)">([^<]*)<\/p>/.exec(dom)?.slice(1);
  const body = /<pre id="result">([^]*?)<\/pre>/.exec(dom)?.[1];
  expect(status?.[0], `the page's status when Chromium dumped it: ${status?.[1]}`).toBe("done");
  expect(body, "the page's JSON").toBeTruthy();
  return { status, json: JSON.parse(unescapeHtml(body!)) as Record<string, unknown> };
}

describe("the example page in headless Chromium", () => {
  it.skipIf(chromium.missing)(
    chromium.name("evaluates Nations on the WebAssembly core; its numbers equal kgrank evaluate --format json"),
    async () => {
      const cli = runKgrankProcess(["evaluate", "--format", "json"], { cwd: root, timeout: 120_000 });
      expect(cli.status, cli.stderr).toBe(0);
      const want = JSON.parse(cli.stdout) as Record<string, unknown>;
      const { dom, consoleLines } = await openInChromium("examples/browser/");
      const { status, json: page } = pageResult(dom);
      expect(status, "the page's status line").toEqual(["done", expect.stringMatching(/wasm backend/)]);
      expect(consoleLines, "console messages of the page").toEqual([]);

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

  it.skipIf(chromium.missing)(
    chromium.name("async calls that span many slices yield without setImmediate, on the fallback and on the core"),
    async () => {
      const { dom, consoleLines } = await openInChromium("test/fixtures/browser/sliced.html", [
        "test/fixtures/browser",
      ]);
      const { status, json: page } = pageResult(dom);
      expect(status?.[0], `the page's status: ${status?.[1]}`).toBe("done");
      expect(consoleLines).toEqual([]);
      const { slicedWorkload } = (await import(path.join(root, "test", "fixtures", "browser", "workload.mjs"))) as {
        slicedWorkload(): { numEntities: number; triples: Int32Array; scores: Float32Array };
      };
      const { numEntities, triples, scores } = slicedWorkload();
      const evaluator = new RankEvaluator({ numEntities });
      await evaluator.add({ triples, side: "tail", scores });
      const results = await evaluator.finalizeAsync({ bootstrap: { samples: 200, seed: 1 } });
      const want = JSON.parse(
        JSON.stringify({ results: results.toFlatObject(), intervals: results.intervals() }, (_k, v) =>
          typeof v === "number" && !Number.isFinite(v) ? null : v,
        ),
      ) as Record<string, unknown>;
      for (const stage of ["ts", "wasm"]) {
        const got = page[stage] as { results: unknown; intervals: unknown; turns: number; progress: number };
        expect(got.turns, `${stage}: event-loop turns during the calls`).toBeGreaterThan(0);
        expect(got.progress, `${stage}: progress reported (throttled: at least once)`).toBeGreaterThan(0);
        const problems: string[] = [];
        compareJson({ results: got.results, intervals: got.intervals }, want, stage, problems, true);
        expect(problems).toEqual([]);
      }
    },
    240_000,
  );
});
