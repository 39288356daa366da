/**
 * The HTML report as a person sees it: `kgrank report` of two saved runs opened in headless Chromium (Debian's
 * chromium): the page writes nothing to its console (no error, warning or log; a page that warns is checked to be
 * caught), every plot has marks, and a screenshot is written to test-artifacts/report.png. The relation-category
 * and degree sections hold the library's numbers. `kgrank plot` writes one SVG with marks. Chromium missing:
 * skipped, with the reason in the name (CI installs it and fails on the skip).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import { FrequencyBaseline, loadDataset, RankEvaluator, TemporalEvaluator } from "../src/index";
import { plotSpec, RELATION_ENDS } from "../src/report/plots";
import { markupLabel } from "../src/text/labels";
import { table } from "../src/text/table";
import { external, runs } from "./helpers/external";
import { expectUserError } from "./helpers/cli";
import { type Run, runKgrankProcess, runProcess } from "./helpers/process";
import { tempDir } from "./helpers/temp";

const root = path.resolve(__dirname, "..");
const dir = tempDir("report");
const p = (name: string) => path.join(dir, name);
const chromium = external("chromium", runs("chromium", ["--version"]), "install Debian's chromium package");

// A process per command: the plots import Vega's ES modules at run time, which vitest's module runner does not serve.
const runIn = async (args: string[], cwd: string): Promise<Run> => runKgrankProcess(args, { cwd, timeout: 300_000 });

/** `kgrank args`; it must succeed. */
async function kgrank(args: string[]): Promise<Run> {
  const r = await runIn(args, dir);
  expect(r.status, r.stderr).toBe(0);
  return r;
}

/** A command that must fail with one line on stderr (helpers/cli.ts expectUserError). */
async function kgrankFails(args: string[], pattern: RegExp): Promise<void> {
  expectUserError(await runIn(args, dir), pattern);
}

const chromiumFlags = (profile: string) => [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--enable-logging=stderr",
  "--v=0",
  `--user-data-dir=${p(profile)}`,
];

/**
 * Every message a page wrote to its console, from Chromium's log on stderr. Chromium logs console.log, info, warn
 * and error all as INFO:CONSOLE (the level is not in the line), so any console line counts: the report writes none.
 */
function consoleLines(stderr: string): string[] {
  return stderr.split("\n").filter((l) => /:CONSOLE[(:]\d+\)?\]/.test(l));
}

function saveRuns(): [string, string] {
  const ds = loadDataset("nations");
  const { train, valid, test } = ds.splits;
  const b = new FrequencyBaseline(train, ds.numEntities, ds.numRelations);
  const files: [string, string] = [p("baseline.state"), p("noisy.state")];
  files.forEach((file, k) => {
    const ev = new RankEvaluator({
      numEntities: ds.numEntities,
      numRelations: ds.numRelations,
      filterTriples: [train, valid, test],
    });
    for (const side of ["head", "tail"] as const) {
      ev.addSync({
        triples: test,
        side,
        scores: b.scoreBatch(test, side).map((x, i) => x + k * ((i * 7919) % 5) * 0.5),
      });
    }
    writeFileSync(file, ev.serialize({ meta: { report: { relationLabels: ds.relationLabels } } }));
  });
  return files;
}

describe("kgrank report and plot", () => {
  const [a, b] = saveRuns();

  it("the per-relation plot keeps the best and worst RELATION_ENDS relations when there are more than twice as many", async () => {
    const numRelations = 2 * RELATION_ENDS + 7;
    const ev = new RankEvaluator({ numEntities: 50, numRelations, sides: "tail" });
    const n = 3 * numRelations;
    const relations = Int32Array.from({ length: n }, (_, i) => i % numRelations);
    // Relation r's ranks are all 1 + r: MRR 1 / (1 + r), so the order of the bars is known.
    const ranks = Float64Array.from(relations, (r) => 1 + r);
    ev.addRanks({
      side: "tail",
      optimistic: ranks,
      pessimistic: ranks,
      realistic: ranks,
      numCandidates: new Float64Array(n).fill(50),
      relations,
    });
    const spec = plotSpec("relations", ev.finalize()) as { title: string; data: { values: { relation: string }[] } };
    const shown = spec.data.values.map((v) => Number(v.relation.split(" ")[0]));
    const want = [
      ...Array.from({ length: RELATION_ENDS }, (_, i) => i),
      ...Array.from({ length: RELATION_ENDS }, (_, i) => numRelations - RELATION_ENDS + i),
    ];
    expect(shown).toEqual(want);
    expect(spec.title).toBe(
      `MRR per relation: the ${RELATION_ENDS} best and ${RELATION_ENDS} worst of ${numRelations} (task count in brackets)`,
    );
    const few = new RankEvaluator({ numEntities: 50, numRelations: 3, sides: "tail" });
    const r3 = Int32Array.from([0, 1, 2]);
    const k3 = Float64Array.from([1, 2, 3]);
    few.addRanks({
      side: "tail",
      optimistic: k3,
      pessimistic: k3,
      realistic: k3,
      numCandidates: new Float64Array(3).fill(50),
      relations: r3,
    });
    const fewResults = few.finalize();
    expect((plotSpec("relations", fewResults) as { data: { values: unknown[] } }).data.values).toHaveLength(3);
    // Long labels keep their start, their end and the count (cut in the middle): labels that differ at either end
    // stay apart; two that shorten alike stay two bars (the id added).
    const long = "/a/very/long/freebase/relation/path/that/goes/on";
    const bars = (labels: string[]) =>
      (
        plotSpec("relations", fewResults, { relationLabels: labels }) as { data: { values: { relation: string }[] } }
      ).data.values.map((v) => v.relation);
    const ends = bars([`/x${long}/name`, `/y${long}/name`, "short"]);
    expect(ends).toContain("short (1)");
    expect(ends.filter((b) => /^\/[xy]\/a\/very\/long\/fr….*\/goes\/on\/name \(1\)$/.test(b))).toHaveLength(2);
    expect(new Set(ends).size).toBe(3);
    expect(ends.some((b) => / #\d$/.test(b))).toBe(false);
    const middle = bars(["one", "two"].map((w) => `/x/a/very/long/freebase/${w}/relation/path/that/goes/on/name`));
    expect(new Set(middle).size).toBe(3);
    expect(middle.some((b) => / #1$/.test(b))).toBe(true);
    // The full label is the shortened one's SVG title (a tooltip in a browser).
    writeFileSync(
      p("long.state"),
      few.serialize({ meta: { report: { relationLabels: [`/x${long}/one/name`, "b", "c"] } } }),
    );
    await kgrank(["plot", "relations", "long.state", "--output", "long.svg"]);
    const svg = readFileSync(p("long.svg"), "utf8");
    expect(svg).toMatch(new RegExp(`<text[^>]*><title>/x${long}/one/name</title>/x/a/very/long/fr…[^<]*</text>`));
  });

  it("several runs: the summary first (what was compared, each metric's values and best run), the same metrics in every run", async () => {
    await kgrank(["evaluate", "--metrics", "mrr", "--save-state", "only-mrr.state", "--quiet"]);
    await kgrank(["report", "only-mrr.state", b, "--samples", "200", "--output", "two.html", "--quiet"]);
    const html = readFileSync(p("two.html"), "utf8");
    const h2 = [...html.matchAll(/<h2>([^<]*)/g)].map((m) => m[1]);
    expect(h2).toEqual([
      "Summary: only-mrr.state vs noisy.state",
      "Comparison with only-mrr.state",
      "only-mrr.state",
      "noisy.state",
    ]);
    const summary = html.slice(html.indexOf('<section class="summary">'), html.indexOf("</section>"));
    const rows = [...summary.matchAll(/<tr><th scope="row">([^<]*) <span/g)].map((m) => m[1]);
    expect(rows).toEqual(["MRR", "Hits@1", "Hits@3", "Hits@10", "MR", "AMRI", "median rank"]);
    // The frequency baseline beats its noisy copy on MRR, in bold and named in the last column.
    expect(summary).toMatch(
      /<th scope="row">MRR [^]*?<td class="best">0\.5499<\/td><td>[^<]*<span class="diff">\(-[^]*?<td>only-mrr\.state<\/td><\/tr>/,
    );
    expect(summary).toContain("Best on most metrics: <b>only-mrr.state</b>");
    // A run evaluated with --metrics mrr shows the same metric rows as the other; no bootstrap column without --bootstrap.
    const runTables = [...html.matchAll(/<th>metric \(realistic ranks\)<\/th>[^]*?<\/table>/g)].map((m) => m[0]);
    expect(runTables).toHaveLength(2);
    const metricRows = (t: string) => [...t.matchAll(/<tr><th scope="row">([^<]*)<\/th>/g)].map((m) => m[1]);
    expect(metricRows(runTables[0]!)).toEqual(metricRows(runTables[1]!));
    expect(metricRows(runTables[0]!)).toContain("Hits@10");
    expect(html).not.toContain("bootstrap interval");
    await kgrank(["report", "only-mrr.state", "--bootstrap", "20", "--output", "boot.html", "--quiet"]);
    const boot = readFileSync(p("boot.html"), "utf8");
    expect(boot).toContain("<th>bootstrap interval (both)</th>");
    expect(boot).not.toMatch(/<td><\/td><\/tr>/); // every row's interval filled
  });

  it("the bundled Vega (dist/vendor/vega.mjs) renders every plot byte for byte as the vega and vega-lite packages do", () => {
    // A process of its own (vitest's module runner serves no ES module by file URL): each plot of the saved run
    // rendered by the report's renderSvg, which loads the bundle, and by the packages themselves (devDependencies).
    const script = p("compare-vega.mjs");
    writeFileSync(
      script,
      [
        `import { createRequire } from "node:module";`,
        `import { readFileSync } from "node:fs";`,
        `const require = createRequire(${JSON.stringify(path.join(root, "package.json"))});`,
        `const { RankEvaluator, loadDataset } = require("./dist/cjs/index.js");`,
        `const { PLOT_NAMES, plotSpec, renderSvg } = require("./dist/cjs/report/plots.js");`,
        `import { pathToFileURL } from "node:url";`,
        `const vega = await import(pathToFileURL(require.resolve("vega")).href);`,
        `const vl = await import(pathToFileURL(require.resolve("vega-lite")).href);`,
        `const ds = loadDataset("nations");`,
        `const results = RankEvaluator.deserialize(readFileSync(${JSON.stringify(a)})).finalize();`,
        `const context = { relationLabels: ds.relationLabels, trainTriples: ds.splits.train };`,
        `const out = {};`,
        `for (const name of PLOT_NAMES) {`,
        `  const spec = plotSpec(name, results, context);`,
        `  const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: "none" });`,
        `  const svg = await view.toSVG();`,
        `  view.finalize();`,
        `  const bundled = await renderSvg(spec);`,
        // renderSvg adds a <title> (the whole label) to each shortened relation label after Vega renders.
        `  const untitled = (s) => s.replace(/<title>[^<]*<[/]title>/g, "");`,
        `  out[name] = { bytes: svg.length, same: untitled(bundled) === untitled(svg) };`,
        `}`,
        `console.log(JSON.stringify(out));`,
      ].join("\n"),
    );
    const r = runProcess(process.execPath, [script], { cwd: root, timeout: 300_000 });
    expect(r.status, r.stderr).toBe(0);
    const got = JSON.parse(r.stdout) as Record<string, { bytes: number; same: boolean }>;
    expect(Object.keys(got)).toEqual(["ranks", "hits", "relations", "categories", "degrees"]);
    for (const [name, { bytes, same }] of Object.entries(got)) {
      expect(bytes, name).toBeGreaterThan(1000);
      expect(same, name).toBe(true);
    }
    // The licences of the bundled code travel with it.
    const licences = readFileSync(path.join(root, "dist", "vendor", "vega.LICENSES.txt"), "utf8");
    expect(licences).toMatch(/^vega \d+\.\d+\.\d+ \(BSD-3-Clause\)$/m);
    expect(licences).toMatch(/^vega-lite \d+\.\d+\.\d+ \(BSD-3-Clause\)$/m);
    expect(licences).toMatch(/^d3-scale \d+\.\d+\.\d+ \(ISC\)$/m);
  });

  it("plot writes one SVG with marks for each plot name; an unknown name is refused", async () => {
    for (const name of ["ranks", "hits", "relations"]) {
      await kgrank(["plot", name, a, "--output", p(`${name}.svg`), "--quiet"]);
      const svg = readFileSync(p(`${name}.svg`), "utf8");
      expect(svg.startsWith("<svg"), name).toBe(true);
      expect(svg).toMatch(/class="mark-(rect|line)/);
      expect(svg).toMatch(/<text[^>]*>[^<]*(rank|Hits@k|MRR)/);
    }
    const bad = await runIn(["plot", "pie", a], dir);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/NAME: "pie" is not a plot; choose ranks, hits, relations/);
  });

  it("a relation-prediction section where the runs ranked relations, and their relation tasks compared apart", async () => {
    const ds = loadDataset("nations");
    const { train, valid, test } = ds.splits;
    const base = new FrequencyBaseline(train, ds.numEntities, ds.numRelations);
    const files = [p("rel-a.state"), p("rel-b.state")];
    const evaluators = files.map((file, k) => {
      const ev = new RankEvaluator({
        numEntities: ds.numEntities,
        filterTriples: [train, valid, test],
        sides: ["head", "tail", "relation"],
      });
      for (const side of ["head", "tail"] as const)
        ev.addSync({ triples: test, side, scores: base.scoreBatch(test, side) });
      const scores = base.scoreRelations(test).map((x, i) => x + k * ((i * 7919) % 5) * 0.5);
      ev.addRelationScores({ triples: test, scores });
      writeFileSync(file, ev.serialize());
      return RankEvaluator.deserialize(ev.serialize()).finalize();
    });
    await kgrank(["report", ...files, "--output", p("rel.html"), "--quiet"]);
    const html = readFileSync(p("rel.html"), "utf8");
    const at = html.indexOf("<h3>Relation prediction</h3>");
    expect(at).toBeGreaterThan(0);
    const mrr = (k: number, rt: string) => evaluators[k]!.get(`relation.${rt}.mrr`).toFixed(4);
    expect(html.slice(at)).toContain(
      `<th scope="row">MRR</th><td>${mrr(0, "realistic")}</td><td>${mrr(0, "optimistic")}</td><td>${mrr(0, "pessimistic")}</td>` +
        `<td>${evaluators[0]!.expected("relation.mrr")!.toFixed(4)}</td>`,
    );
    expect(html).toContain("<h2>Comparison with rel-a.state</h2>");
    const compared = html.slice(html.indexOf("<h2>Relation prediction compared with rel-a.state</h2>"));
    expect(compared).toContain(`${test.length / 3} paired tasks`);
    expect(compared).toContain(
      `<th scope="row">inverse_harmonic_mean_rank</th><td>rel-b.state</td><td>${mrr(0, "realistic")}</td><td>${mrr(1, "realistic")}</td>`,
    );
    // A run of relation tasks alone: the report shows them; a plot (of head and tail tasks) is refused.
    const alone = new RankEvaluator({
      numEntities: ds.numEntities,
      filterTriples: [train, valid, test],
      sides: ["relation"],
    });
    alone.addRelationScores({ triples: test, scores: base.scoreRelations(test) });
    writeFileSync(p("rel-alone.state"), alone.serialize());
    await kgrank(["report", p("rel-alone.state"), "--output", p("rel-alone.html"), "--quiet"]);
    expect(readFileSync(p("rel-alone.html"), "utf8")).toContain("<h3>Relation prediction</h3>");
    await kgrankFails(
      ["plot", "ranks", p("rel-alone.state"), "--output", p("rel-alone.svg")],
      /^kgrank: NAME: every plot is of head and tail tasks, and .*rel-alone\.state holds relation tasks only/,
    );
    // A run without the relation side has no such section.
    const [plain] = saveRuns();
    await kgrank(["report", plain, "--output", p("plain.html"), "--quiet"]);
    expect(readFileSync(p("plain.html"), "utf8")).not.toContain("Relation prediction");
  });

  it("says which protocol a run was ranked in: typed candidates, a temporal setting", async () => {
    await kgrank(["evaluate", "--constrain-candidates", "train", "--save-state", p("typed.state"), "--quiet"]);
    await kgrank(["report", p("typed.constrained.state"), "--output", p("typed.html"), "--quiet"]);
    const typed = readFileSync(p("typed.html"), "utf8");
    expect(typed).toMatch(
      /<h3>Typed candidates<\/h3><p class="meta">Each head or tail task ranked against its relation's allowed entities and its true answer: the heads and tails each relation has in train, \d+ allowed relation-entity pairs \(fingerprint [0-9a-f]{16}\)/,
    );
    await kgrank(["report", p("typed.state"), "--output", p("untyped.html"), "--quiet"]);
    expect(readFileSync(p("untyped.html"), "utf8")).not.toContain("Typed candidates");
    // A temporal evaluation's time-aware state (four quadruples over two timestamps).
    const q = Int32Array.of(0, 0, 1, 0, 0, 0, 2, 1, 1, 0, 2, 0, 2, 0, 0, 1);
    const ev = new TemporalEvaluator({ numEntities: 3, numRelations: 1, numTimestamps: 2, filterQuadruples: q });
    ev.addSync({ quadruples: q, side: "tail", scores: Float32Array.from({ length: 12 }, (_, i) => (i * 5) % 7) });
    writeFileSync(p("time.state"), ev.serialize().timeAware);
    await kgrank(["report", p("time.state"), "--output", p("time.html"), "--quiet"]);
    expect(readFileSync(p("time.html"), "utf8")).toContain(
      '<h3>Time-aware evaluation</h3><p class="meta">Quadruples (h, r, t, τ) over 2 timestamps, time-aware filter: only the facts known at the task\'s own timestamp removed.',
    );
  });

  it("the relation-category and degree sections: from the dataset the state records, or --dataset; the numbers are the library's", async () => {
    const ds = loadDataset("nations");
    await kgrank(["evaluate", "--save-state", p("cli.state"), "--quiet"]);
    await kgrank(["report", p("cli.state"), "--output", p("cli.html"), "--quiet"]);
    const html = readFileSync(p("cli.html"), "utf8");
    const results = RankEvaluator.deserialize(new Uint8Array(readFileSync(p("cli.state")))).finalize();
    const section = (title: string) =>
      html.slice(html.indexOf(`<h3>${title}</h3>`), html.indexOf("</table>", html.indexOf(`<h3>${title}</h3>`)));
    const categories = results.byRelationCategory(ds.splits.train);
    expect(categories.length).toBeGreaterThan(1);
    for (const g of categories) {
      const mrr = g.results.get("both.realistic.inverse_harmonic_mean_rank").toFixed(4);
      expect(section("By relation category")).toContain(
        `<th scope="row">${g.category}</th><td>${g.relations.length}</td><td>${g.count}</td><td>${g.tasks.head}</td><td>${g.tasks.tail}</td><td>${mrr}</td>`,
      );
    }
    const degrees = results.byDegree(ds.splits.train);
    expect(degrees.length).toBeGreaterThan(1);
    for (const g of degrees) {
      const mrr = g.results.get("both.realistic.inverse_harmonic_mean_rank").toFixed(4);
      expect(section("By degree")).toContain(
        `<th scope="row">${g.label}</th><td>${g.count}</td><td>${g.tasks.head}</td><td>${g.tasks.tail}</td><td>${mrr}</td>`,
      );
    }
    expect(html).toMatch(/data-plot="categories"><svg/);
    expect(html).toMatch(/data-plot="degrees"><svg/);
    // A state that names no dataset: the sections say how to get them; --dataset brings them.
    const [a] = saveRuns();
    const r = await runIn(["report", a, "--output", p("plain.html")], dir);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /^kgrank report: baseline\.state: no relation-category and degree breakdowns: the state names no dataset: give --dataset NAME/m,
    );
    // Piped, each stage reports itself in one line when it ends.
    expect(r.stderr).toMatch(/^kgrank: report: tables, plots and breakdowns of 1 run: \d+\.\d s$/m);
    const two = await runIn(["report", a, b, "--samples", "50", "--output", p("two.html")], dir);
    expect(two.status, two.stderr).toBe(0);
    expect(two.stderr.split("\n").filter((l) => l.startsWith("kgrank: report: "))).toEqual([
      expect.stringMatching(/^kgrank: report: tables, plots and breakdowns of 2 runs: \d+\.\d s$/),
      expect.stringMatching(/^kgrank: report: comparison of 1 run with \S+: \d+\.\d s$/),
    ]);
    expect(readFileSync(p("plain.html"), "utf8")).toMatch(
      /class="meta note">Relation-category and degree breakdowns: the state names no dataset/,
    );
    await kgrank(["report", a, "--dataset", "nations", "--output", p("with.html"), "--quiet"]);
    expect(readFileSync(p("with.html"), "utf8")).toContain(section("By relation category"));
    // One plot each, from the recorded dataset.
    for (const name of ["categories", "degrees"]) {
      await kgrank(["plot", name, p("cli.state"), "--output", p(`${name}.svg`), "--quiet"]);
      expect(readFileSync(p(`${name}.svg`), "utf8")).toMatch(/class="mark-rect/);
    }
    // The wrong dataset, an unknown one, or none for a plot that needs it: one line naming the flag.
    await kgrankFails(
      ["report", p("cli.state"), "--dataset", "umls"],
      /^kgrank: --dataset: umls has 135 entities and 46 relations, but cli\.state was evaluated over 14 entities/,
    );
    await kgrankFails(["report", p("cli.state"), "--dataset", "fb16k"], /^kgrank: --dataset: unknown dataset "fb16k"/);
    await kgrankFails(["report", p("cli.state"), "--dataset-dir", p("nowhere")], /^kgrank: --dataset-dir: /);
    await kgrankFails(
      ["plot", "degrees", a],
      /^kgrank: --dataset: the degrees plot needs the run's training triples, but the state names no dataset/,
    );
  }, 300_000);

  it("a custom dataset evaluated with --dataset-dir DIR: report and plot take the same --dataset-dir DIR", async () => {
    mkdirSync(p("mykg"));
    for (const split of ["train", "valid", "test"]) {
      copyFileSync(path.join(root, "data", "nations", `${split}.tsv`), p(`mykg/${split}.tsv`));
    }
    await kgrank(["evaluate", "--dataset-dir", "mykg", "--save-state", "mykg.state", "--quiet"]);
    await kgrank(["report", "mykg.state", "--dataset-dir", "mykg", "--output", "mykg.html", "--quiet"]);
    const html = readFileSync(p("mykg.html"), "utf8");
    expect(html).toMatch(/data-plot="categories"><svg/);
    expect(html).not.toMatch(/class="meta note">Relation-category and degree breakdowns/);
    for (const name of ["categories", "degrees"]) {
      await kgrank(["plot", name, "mykg.state", "--dataset-dir", "mykg", "--output", `mykg-${name}.svg`, "--quiet"]);
      expect(readFileSync(p(`mykg-${name}.svg`), "utf8")).toMatch(/class="mark-rect/);
    }
  }, 300_000);

  it("a custom dataset's relation labels: plot relations and the report take them from --dataset-dir (.txt splits too)", async () => {
    mkdirSync(p("mykg-txt"));
    for (const split of ["train", "valid", "test"]) {
      copyFileSync(path.join(root, "data", "nations", `${split}.tsv`), p(`mykg-txt/${split}.txt`));
    }
    await kgrank(["evaluate", "--dataset-dir", "mykg-txt", "--save-state", "mykg-txt.state", "--quiet"]);
    const labelled = (file: string) => {
      const text = readFileSync(p(file), "utf8");
      // Nations' relations by name (every one in the test split is plotted: fewer than twice RELATION_ENDS)
      expect(text, file).toMatch(/militaryalliance \(\d+\)/);
      expect(text, file).not.toMatch(/>0 \(\d+\)</);
    };
    await kgrank([
      "plot",
      "relations",
      "mykg-txt.state",
      "--dataset-dir",
      "mykg-txt",
      "--output",
      "rel.svg",
      "--quiet",
    ]);
    labelled("rel.svg");
    await kgrank(["report", "mykg-txt.state", "--dataset-dir", "mykg-txt", "--output", "mykg-txt.html", "--quiet"]);
    labelled("mykg-txt.html");
  }, 300_000);

  it("labels cannot reverse the numbers beside them (bidi controls isolated) nor break the SVG's XML (controls escaped)", async () => {
    const RLO = "\u202E";
    const FSI = "\u2068";
    const PDI = "\u2069";
    // Text and markdown tables: a cell with a bidi control is isolated; every other cell is byte-identical.
    for (const format of ["table", "markdown"] as const) {
      const plain = table(format, ["relation", "tasks"], [["plain", "12"]]);
      const out = table(
        format,
        ["relation", "tasks"],
        [
          ["plain", "12"],
          [`evil${RLO}`, "12"],
        ],
      );
      expect(out.startsWith(plain), format).toBe(true);
      expect(out, format).toContain(`${FSI}evil${RLO}${PDI}`);
    }
    for (const c of ["\u202A", "\u202E", "\u2066", "\u2069", "\u200E", "\u200F", "\u061C"])
      expect(markupLabel(`a${c}b`)).toBe(`${FSI}a${c}b${PDI}`);
    expect(markupLabel("nul\u0000bell\u0007")).toBe("nul\\x00bell\\x07");
    expect(markupLabel("tab\tplain é ✓")).toBe("tab\tplain é ✓");

    // `kgrank plot` and `kgrank report` of a run whose relation labels hold an override and a NUL.
    const ev = new RankEvaluator({ numEntities: 50, numRelations: 3, sides: "tail" });
    const k3 = Float64Array.from([1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3]);
    ev.addRanks({
      side: "tail",
      optimistic: k3,
      pessimistic: k3,
      realistic: k3,
      numCandidates: new Float64Array(12).fill(50),
      relations: Int32Array.from([0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]),
    });
    const labels = [`rel${RLO}reversed`, "nul\u0000label", "plain"];
    writeFileSync(p("labels.state"), ev.serialize({ meta: { report: { relationLabels: labels } } }));
    await kgrank(["plot", "relations", p("labels.state"), "--output", p("labels.svg"), "--quiet"]);
    await kgrank(["report", p("labels.state"), "--output", p("labels.html"), "--quiet"]);
    // What XML 1.0 forbids: C0 controls but tab, newline and carriage return; U+FFFE, U+FFFF.
    // eslint-disable-next-line no-control-regex -- finding control characters is this pattern's purpose
    const forbidden = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;
    for (const file of ["labels.svg", "labels.html"]) {
      const text = readFileSync(p(file), "utf8");
      expect(forbidden.test(text), file).toBe(false);
      expect(text, file).toContain("nul\\x00label (4)");
      // The override stays inside its isolate, so the count "(4)" after it reads left to right.
      expect(text, file).toContain(`${FSI}rel${RLO}reversed${PDI} (4)`);
      expect(text, file).toContain("plain (4)");
      expect(text.split(RLO).length - 1, file).toBe(text.split(`${RLO}reversed${PDI}`).length - 1);
    }
    if (!chromium.missing) {
      // Chromium shows an XML parse error page for an SVG that is not XML.
      const dom = runProcess("chromium", [...chromiumFlags("svg-profile"), "--dump-dom", `file://${p("labels.svg")}`]);
      expect(dom.status, dom.stderr).toBe(0);
      expect(dom.stdout).not.toMatch(/parsererror|This page contains the following errors/);
      expect(dom.stdout).toContain("plain (4)");
    }
  }, 300_000);

  it.skipIf(chromium.missing)(
    chromium.name("the report opens in headless Chromium: no console message, marks in every plot, a screenshot"),
    async () => {
      await kgrank([
        "report",
        a,
        b,
        "--dataset",
        "nations",
        "--output",
        p("report.html"),
        "--samples",
        "300",
        "--quiet",
      ]);
      const html = readFileSync(p("report.html"), "utf8");
      expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=["']https?:/); // nothing fetched
      const url = `file://${p("report.html")}`;
      const flags = chromiumFlags("profile");
      // The check itself: a page that warns and errs without the word "Error" is caught.
      writeFileSync(
        p("noisy.html"),
        `<!DOCTYPE html><html><body><script>console.warn("careful"); console.error("bad thing");</script></body></html>`,
      );
      const noisy = runProcess("chromium", [...flags, "--dump-dom", `file://${p("noisy.html")}`]);
      expect(consoleLines(noisy.stderr).join("\n")).toMatch(/"careful"[^]*"bad thing"/);
      const dom = runProcess("chromium", [...flags, "--dump-dom", url]);
      expect(dom.status, dom.stderr).toBe(0);
      expect(consoleLines(dom.stderr), "console messages of the report").toEqual([]);
      const marks = /data-marks="([^"]*)"/.exec(dom.stdout)?.[1];
      expect(marks, "the report's script ran").toBeDefined();
      const counts = marks!.split(",").map((m) => m.split(":"));
      const perRun = ["ranks", "hits", "relations", "categories", "degrees"];
      expect(counts.map(([name]) => name)).toEqual([...perRun, ...perRun]);
      for (const [name, n] of counts) expect(Number(n), name).toBeGreaterThan(0);
      expect(dom.stdout).toContain("Comparison with baseline.state");
      // The first screen says what was compared and who won: the summary is the first section.
      const firstH2 = /<h2>([^<]*)<\/h2>/.exec(dom.stdout)?.[1];
      expect(firstH2).toBe("Summary: baseline.state vs noisy.state");
      const artifacts = path.join(root, "test-artifacts");
      mkdirSync(artifacts, { recursive: true });
      const shot = path.join(artifacts, "report.png");
      const s = runProcess("chromium", [...flags, "--window-size=1280,7000", `--screenshot=${shot}`, url]);
      expect(s.status, s.stderr).toBe(0);
      expect(existsSync(shot) && statSync(shot).size > 50_000).toBe(true);
    },
    300_000,
  );
});
