/**
 * `kgrank` as a process (bin/kgrank.js, from dist/): what only a process shows. The bin shim's exit codes and
 * streams, SIGINT (exit 130, no half-written file), the progress bar on a terminal, and the backend chosen from the
 * environment the process starts with. Runs once, on the default backend; every flag and output is tested in-process
 * by cli.test.ts.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import { external, runs } from "./helpers/external";
import { KGRANK_BIN, runKgrankProcess } from "./helpers/process";
import { tempDir } from "./helpers/temp";

const dir = tempDir("cli-process");
const p = (name: string) => path.join(dir, name);

let big: string | null = null;
/**
 * A synthetic dataset big enough that the baseline evaluation runs for seconds on a fast machine: 120,000 entities,
 * 160,000 test triples (4.8 s at 60,000 entities on a 2-core EPYC whose bus reads 70 GB/s; 1.4 s at 15,000 entities
 * there, too short for the SIGINT test's 1.5 s start-up allowance). Only interrupted runs use it.
 */
function bigDataset(): string {
  if (big) return big;
  const d = mkdtempSync(path.join(dir, "big-"));
  const E = 120000;
  const triple = (i: number, a: number, b: number) => `e${(i * a) % E}\tr${(i * 7) % 20}\te${(i * b + 5) % E}`;
  writeFileSync(path.join(d, "train.tsv"), Array.from({ length: 60000 }, (_, i) => triple(i, 1, 31)).join("\n") + "\n");
  writeFileSync(path.join(d, "valid.tsv"), triple(1, 1, 31) + "\n");
  // 160,000 test triples x 120,000 entities: seconds of work, long enough to interrupt and to show a bar.
  writeFileSync(path.join(d, "test.tsv"), Array.from({ length: 160000 }, (_, i) => triple(i, 7, 13)).join("\n") + "\n");
  return (big = d);
}

describe("kgrank as a process", () => {
  it("the bin shim: exit 0 with the table on stdout; a user error exits 1 with one line on stderr; no args prints help", () => {
    const ok = runKgrankProcess(["evaluate", "--metrics", "mrr", "--format", "json"], { cwd: dir });
    expect(ok.status, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout).dataset).toBe("nations");
    expect(ok.stderr).toBe("");
    const bad = runKgrankProcess(["evaluate", "--dataset", "nope"], { cwd: dir });
    expect(bad.status).toBe(1);
    expect(bad.stdout).toBe("");
    expect(bad.stderr.trim().split("\n"), bad.stderr).toHaveLength(1);
    expect(bad.stderr).toMatch(/^kgrank: --dataset: /);
    const help = runKgrankProcess([], { cwd: dir });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/Usage: kgrank/);
  });

  it("info on the fallback prints the whole reason it fell back", () => {
    writeFileSync(p("not-an-addon.node"), "not a shared object");
    const r = runKgrankProcess(["info"], {
      cwd: dir,
      env: { KGRANK_ADDON_PATH: p("not-an-addon.node"), KGRANK_BACKEND: "" },
    });
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.split("\n");
    const at = lines.findIndex((l) => l.startsWith("fallbackReason"));
    expect(at, r.stdout).toBeGreaterThanOrEqual(0);
    expect(lines[at]).toMatch(/the native addon could not be loaded:/);
    expect(lines[at + 1], r.stdout).toMatch(/^\s{17}.*not-an-addon\.node/);
  });

  it("SIGINT during a long run: exit 130, a one-line message, no output file", async () => {
    const d = bigDataset();
    const child = spawn(
      process.execPath,
      [KGRANK_BIN, "evaluate", "--dataset-dir", d, "--filter", "none", "--output", "sigint.txt"],
      { cwd: dir, env: process.env },
    );
    let stderr = "";
    child.stderr.on("data", (b) => (stderr += b));
    const closed = new Promise<number | null>((res) => child.on("close", (c, sig) => res(c ?? (sig ? 128 + 2 : null))));
    await new Promise((res) => setTimeout(res, 1500));
    expect(child.exitCode, "the run ended before the signal: make the synthetic dataset bigger").toBeNull();
    child.kill("SIGINT");
    expect(await closed).toBe(130);
    expect(stderr.trim()).toBe("kgrank: interrupted");
    expect(existsSync(p("sigint.txt"))).toBe(false);
    expect(readdirSync(dir).filter((f) => f.includes("sigint"))).toEqual([]);
  });

  it("SIGINT during a long --bootstrap: exit 130 at once, no output file (the bootstrap yields to the event loop)", async () => {
    // 1e6 replicates on Nations run for minutes; the bootstrap yields to the event loop, so the signal is handled
    // at once and no output is written.
    const child = spawn(process.execPath, [KGRANK_BIN, "evaluate", "--bootstrap", "1000000", "--output", "boot.txt"], {
      cwd: dir,
      env: process.env,
    });
    let stderr = "";
    child.stderr.on("data", (b) => (stderr += b));
    const closed = new Promise<number | string | null>((res) => child.on("close", (c, sig) => res(c ?? sig)));
    await new Promise((res) => setTimeout(res, 2500));
    expect(child.exitCode, "the run ended before the signal").toBeNull();
    const sent = Date.now();
    child.kill("SIGINT");
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000); // ends a hung process only (code "SIGKILL")
    const code = await closed;
    clearTimeout(timer);
    expect(code, `exit after SIGINT (${Date.now() - sent} ms)`).toBe(130);
    expect(stderr.trim()).toBe("kgrank: interrupted");
    expect(existsSync(p("boot.txt"))).toBe(false);
  });

  it("SIGINT during compare and report with many samples: exit 130, no output file", async () => {
    // 1e7 randomization and bootstrap samples (1e6 bootstrap replicates for report --bootstrap) on Nations run for
    // minutes; the resampling yields to the event loop, so the CLI's handler exits at once and nothing is written.
    const state = p("sigint-nations.state");
    const saved = runKgrankProcess(["evaluate", "--save-state", state, "--quiet"], { cwd: dir });
    expect(saved.status, saved.stderr).toBe(0);
    const commands = [
      ["compare", state, state, "--samples", "10000000", "--output", "sigint-compare.txt"],
      ["report", state, state, "--samples", "10000000", "--output", "sigint-report.html"],
      ["report", state, "--bootstrap", "1000000", "--output", "sigint-boot.html"],
    ];
    const children = commands.map((args) => {
      const child = spawn(process.execPath, [KGRANK_BIN, ...args], { cwd: dir, env: process.env });
      let stderr = "";
      child.stderr.on("data", (b) => (stderr += b));
      const closed = new Promise<{ code: number | string | null; stderr: string }>((res) =>
        child.on("close", (c, sig) => res({ code: c ?? sig, stderr })),
      );
      return { child, closed };
    });
    try {
      await new Promise((res) => setTimeout(res, 3000));
      for (const [k, { child, closed }] of children.entries()) {
        expect(child.exitCode, `${commands[k]![0]} ended before the signal`).toBeNull();
        const sent = Date.now();
        child.kill("SIGINT");
        // The resampling yields to the event loop, so the handler runs at once; SIGKILL only ends a hung process (its
        // code is then "SIGKILL", not 130), late enough for a loaded machine: no wall time is asserted.
        const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
        const { code, stderr } = await closed;
        clearTimeout(timer);
        expect(code, `${commands[k]!.join(" ")}: exit after SIGINT (${Date.now() - sent} ms)`).toBe(130);
        // Piped, a stage that ended before the signal has its one line ("kgrank: report: ...: 1.2 s"); then only this.
        const lines = stderr.trim().split("\n");
        expect(lines.at(-1)).toBe("kgrank: interrupted");
        for (const l of lines.slice(0, -1)) expect(l).toMatch(/^kgrank: report: .*: \d+\.\d s$/);
      }
    } finally {
      for (const { child } of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
    expect(readdirSync(dir).filter((f) => f.startsWith("sigint-") || f.startsWith(".sigint-"))).toEqual([
      "sigint-nations.state",
    ]);
  });

  const script = external("util-linux `script`", runs("script", ["--version"]), "install bsdutils");
  it.skipIf(script.missing)(
    script.name("on a terminal, work over a second shows a progress bar on stderr; --quiet hides it"),
    async () => {
      // util-linux `script` gives the command a pseudo-terminal and records what it prints. Each run is stopped once
      // the bar has been seen (or after 3 s for --quiet): the bar is the point, not the table.
      const tty = async (extra: string) => {
        const log = p(`tty${extra ? "-quiet" : ""}.log`);
        const cmd = `${JSON.stringify(process.execPath)} ${JSON.stringify(KGRANK_BIN)} evaluate --dataset-dir ${JSON.stringify(bigDataset())} --filter none --metrics mrr ${extra}`;
        const child = spawn("script", ["-qfec", cmd, log], {
          cwd: dir,
          env: process.env,
          detached: true,
          stdio: "ignore",
        });
        const closed = new Promise((res) => child.on("close", res));
        const t0 = Date.now();
        const seen = () => (existsSync(log) ? readFileSync(log, "utf8") : "");
        while (Date.now() - t0 < (extra ? 3000 : 60_000) && !/evaluating/.test(seen()) && child.exitCode === null) {
          await new Promise((res) => setTimeout(res, 100));
        }
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          // already finished
        }
        await closed;
        return seen();
      };
      expect(await tty("")).toMatch(/evaluating big-\w+ test \[[=-]+\] \d+% \| \d+\/\d+/);
      expect(await tty("--quiet")).not.toMatch(/evaluating/);
    },
  );
});
