/**
 * The HTML report as a person sees it: `kgrank report` of two saved runs opened in headless Chromium (Debian's
 * chromium): the page loads with no console error, every plot has marks, and a screenshot is written to
 * test-artifacts/report.png. `kgrank plot` writes one SVG with marks. Chromium missing: skipped, with the reason in
 * the name (CI installs it and fails on the skip).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

import { FrequencyBaseline, loadDataset, RankEvaluator } from "../src/index";
import { external, runs } from "./helpers/external";

const root = path.resolve(__dirname, "..");
const bin = path.join(root, "bin", "kgrank.js");
const dir = mkdtempSync(path.join(os.tmpdir(), "kgrank-report-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const p = (name: string) => path.join(dir, name);
const chromium = external("chromium", runs("chromium", ["--version"]), "install Debian's chromium package");

function kgrank(args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: "utf8", timeout: 300_000 });
  expect(r.status, r.stderr).toBe(0);
  return r;
}

function saveRuns(): [string, string] {
  const ds = loadDataset("nations");
  const { train, valid, test } = ds.splits;
  const b = new FrequencyBaseline(train, ds.numEntities, ds.numRelations);
  const files: [string, string] = [p("baseline.state"), p("noisy.state")];
  files.forEach((file, k) => {
    const ev = new RankEvaluator({ numEntities: ds.numEntities, numRelations: ds.numRelations, filterTriples: [train, valid, test] });
    for (const side of ["head", "tail"] as const) {
      ev.addSync({ triples: test, side, scores: b.scoreBatch(test, side).map((x, i) => x + k * ((i * 7919) % 5) * 0.5) });
    }
    writeFileSync(file, ev.serialize({ meta: { report: { relationLabels: ds.relationLabels } } }));
  });
  return files;
}

describe("kgrank report and plot", () => {
  const [a, b] = saveRuns();

  it("plot writes one SVG with marks for each plot name; an unknown name is refused", () => {
    for (const name of ["ranks", "hits", "relations"]) {
      kgrank(["plot", name, a, "--output", p(`${name}.svg`), "--quiet"]);
      const svg = readFileSync(p(`${name}.svg`), "utf8");
      expect(svg.startsWith("<svg"), name).toBe(true);
      expect(svg).toMatch(/class="mark-(rect|line)/);
      expect(svg).toMatch(/<text[^>]*>[^<]*(rank|Hits@k|MRR)/);
    }
    const bad = spawnSync(process.execPath, [bin, "plot", "pie", a], { encoding: "utf8" });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/NAME: "pie" is not a plot; choose ranks, hits, relations/);
  });

  it.skipIf(chromium.missing)(chromium.name("the report opens in headless Chromium: no console error, marks in every plot, a screenshot"), () => {
    kgrank(["report", a, b, "--output", p("report.html"), "--samples", "300", "--quiet"]);
    const html = readFileSync(p("report.html"), "utf8");
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=["']https?:/); // nothing fetched
    const url = `file://${p("report.html")}`;
    const flags = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0", `--user-data-dir=${p("profile")}`];
    const dom = spawnSync("chromium", [...flags, "--dump-dom", url], { encoding: "utf8", timeout: 120_000 });
    expect(dom.status, dom.stderr).toBe(0);
    expect(dom.stderr).not.toMatch(/CONSOLE.*(Uncaught|Error)/);
    const marks = /data-marks="([^"]*)"/.exec(dom.stdout)?.[1];
    expect(marks, "the report's script ran").toBeDefined();
    const counts = marks!.split(",").map((m) => m.split(":"));
    expect(counts.map(([name]) => name)).toEqual(["ranks", "hits", "relations", "ranks", "hits", "relations"]);
    for (const [name, n] of counts) expect(Number(n), name).toBeGreaterThan(0);
    expect(dom.stdout).toContain("Comparison with baseline.state");
    const artifacts = path.join(root, "test-artifacts");
    mkdirSync(artifacts, { recursive: true });
    const shot = path.join(artifacts, "report.png");
    const s = spawnSync("chromium", [...flags, "--window-size=1280,4000", `--screenshot=${shot}`, url], { encoding: "utf8", timeout: 120_000 });
    expect(s.status, s.stderr).toBe(0);
    expect(existsSync(shot) && statSync(shot).size > 50_000).toBe(true);
  }, 300_000);
});
