// One table of every scenario's headline numbers from bench/results/latest.json: what `npm run bench` prints at the
// end and what BENCHMARKS.md quotes.   node bench/summary.mjs [--markdown] [FILE]
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { printTable, resultsDir } from "./lib.mjs";

const pct = (x) => `${(100 * x).toFixed(1)} %`;
const fx = (x, d = 1) => (x === null || x === undefined || !Number.isFinite(x) ? "n/a" : `${x.toFixed(d)}×`);
const msf = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/** Rows: [scenario, native, vs machine limit, × TS fallback, × NumPy, target, verdict]. */
export function summaryRows(latest) {
  const rows = [];
  // Targets are stated for the full sizes; a --quick run shows its numbers but does not judge them.
  const quick = (latest.args ?? []).includes("--quick");
  const verdict = (ok) => (quick ? "(quick)" : ok ? "met" : "**missed**");
  const sc = latest.scenarios ?? {};
  const c = sc.count?.headline;
  if (c) {
    rows.push([
      `dense counting, ${(sc.count.rows * sc.count.cols * 4 / 2 ** 20).toFixed(0)} MiB float32 (${c.bestNative})`,
      `${msf(c.bestNativeMs)} ms`,
      `${pct(c.fractionOfBestProbe)} of probe (q ${pct(c.fractionOfBestProbeQuartiles[0])}–${pct(c.fractionOfBestProbeQuartiles[1])})`,
      fx(c.speedupVsTs), "", "≥ 85 % probe", verdict(c.fractionOfBestProbe >= 0.85),
    ]);
  }
  const r = sc.ranks?.report;
  if (r) {
    const d = r.dense;
    rows.push([
      `ranks, dense ${(d.bytes / 2 ** 20).toFixed(0)} MiB float32`, `${msf(d.nativeMs)} ms`,
      `${pct(d.fractionOfProbe)} of probe (q ${pct(d.fractionOfProbeQuartiles[0])}–${pct(d.fractionOfProbeQuartiles[1])})`,
      fx(d.speedupVsTs), fx(d.speedupVsNumpy), "≥ 85 %, ≥ 8× TS, ≥ 8× NumPy",
      verdict(d.fractionOfProbe >= 0.85 && d.speedupVsTs >= 8 && (d.speedupVsNumpy === null || d.speedupVsNumpy >= 8)),
    ]);
    const k = r.cached;
    rows.push([
      `ranks, FB15k-237-width rows in cache (${k.rows} × ${k.cols})`, `${k.nativeUs.toFixed(0)} µs`,
      `${k.ratioToDram.toFixed(2)}× the DRAM probe rate`, fx(k.speedupVsTs), "", "≥ 1× DRAM rate", verdict(k.ratioToDram >= 1),
    ]);
    const s = r.sampled;
    rows.push([
      `ranks, sampled ${s.n.toLocaleString("en")} × ${s.k}`, `${msf(s.nativeMs)} ms`, `probe ${msf(s.probeMs)} ms`,
      fx(s.speedupVsTs), fx(s.speedupVsNumpy), "≤ 150 ms", verdict(s.nativeMs <= 150),
    ]);
    const e = r.eventLoop;
    rows.push([
      `event-loop delay during async ${(e.bytes / 2 ** 30).toFixed(1)} GiB jobs`, `p99 ${e.p99Ms.toFixed(1)} ms`,
      `max ${e.maxMs.toFixed(1)} ms`, "", "", "p99 ≤ 20 ms", verdict(e.p99Ms <= 20),
    ]);
  }
  const v = sc.evaluator?.report;
  if (v) {
    const f = v.fb15k237;
    if (f) {
      rows.push([
        "FB15k-237 test, both sides, filtered", `${msf(f.filteredMs)} ms`, `${f.ratioToProbe.toFixed(2)}× probe time`,
        fx(f.speedupVsTs), fx(f.speedupVsNumpy), "≤ 1.3× probe", verdict(f.ratioToProbe <= 1.3),
      ]);
      rows.push([
        "  filtered vs unfiltered", `${(100 * f.filteredVsUnfiltered).toFixed(1)} %`, "", "", "", "≤ 10 %",
        verdict(f.filteredVsUnfiltered <= 0.1),
      ]);
    }
    const w = v.wikikg2Index;
    rows.push([
      `filter index, ${(w.triples / 1e6).toFixed(0)} M triples, both sides`, `${msf(w.buildBothSidesMs)} ms`,
      `${w.bytesPerTriple.toFixed(2)} bytes/triple`, "", "", "≤ 12 bytes/triple", verdict(w.bytesPerTriple <= 12),
    ]);
    const d = v.wikikg2Slice;
    rows.push([
      `dense slice ${d.rows} × 2.5 M, filtered`, `${msf(d.evaluatorMs)} ms`, `${d.ratioToProbe.toFixed(2)}× probe time`,
      "", "", "bus speed", verdict(d.ratioToProbe <= 1.3),
    ]);
    const s = v.wikikg2Sampled;
    rows.push([
      `WikiKG2-shaped sampled, ${s.n.toLocaleString("en")} × ${s.K}, end to end`, `${msf(s.endToEndMs)} ms`,
      `peak RSS ${(s.peakRssMiB / 1024).toFixed(1)} GiB`, "", "", "≤ 2 s", verdict(s.endToEndMs <= 2000),
    ]);
  }
  const m = sc.metrics;
  if (m?.native?.results) {
    const labels = {
      closed: "E + Var of MR, MRR, Hits@10, GMR, z-GMR, AMRR, n = 1.2 M",
      values: "value() of every base metric, 1e7 ranks",
      estimate: "estimate(), 1000 samples × 20,000 ranks",
      median: "E + Var of the median, n = 1.2 M",
    };
    for (const [name, target] of Object.entries(m.targets ?? {})) {
      const nat = m.native.results[name]?.median * 1e3;
      const ts = m.ts?.results?.[name]?.median * 1e3;
      const np = m.numpy?.[name];
      rows.push([
        labels[name] ?? name, `${msf(nat)} ms`, "", fx(ts / nat), np ? fx(np / nat) : "",
        target === null ? "practical" : `≤ ${target} ms`, target === null ? "" : verdict(nat <= target),
      ]);
    }
  }
  return rows;
}

/** Dense counting at every SIMD level and thread count: [case, ms, GB/s, % of the same configuration's probe, × TS]. */
export function simdRows(latest) {
  const c = latest.scenarios?.count;
  if (!c?.results) return [];
  const bytes = c.rows * c.cols * 4;
  const ts = c.results["ts fallback"].median;
  return Object.entries(c.results)
    .filter(([name]) => name.startsWith("native"))
    .map(([name, r]) => {
      const probe = c.results[name.replace("native", "probe")]?.median;
      return [name.replace("native ", "").replace(/ t(\d+)$/, ", $1 thread(s)"), (r.median * 1e3).toFixed(1),
        (bytes / r.median / 1e9).toFixed(1), probe ? `${((100 * probe) / r.median).toFixed(1)} %` : "", (ts / r.median).toFixed(1)];
    });
}
export const SIMD_HEADER = ["SIMD level, threads", "ms", "GB/s", "% of same-config probe", "× TS"];

export const HEADER = ["scenario", "native", "vs machine limit", "× TS", "× NumPy", "target", ""];

export function markdownTable(rows) {
  const line = (cells) => `| ${cells.join(" | ")} |`;
  return [line(HEADER), line(HEADER.map((_, i) => (i === 0 ? "---" : "---:"))), ...rows.map(line)].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith("--")) ?? join(resultsDir, "latest.json");
  if (!existsSync(file)) {
    console.error(`summary: ${file} not found; run \`npm run bench\` first`);
    process.exit(1);
  }
  const rows = summaryRows(JSON.parse(readFileSync(file, "utf8")));

  const latest = JSON.parse(readFileSync(file, "utf8"));
  if (args.includes("--markdown")) {
    console.log(markdownTable(rows));
    const simd = simdRows(latest);
    if (simd.length) {
      const line = (cells) => `| ${cells.join(" | ")} |`;
      console.log(["", line(SIMD_HEADER), line(SIMD_HEADER.map((_, i) => (i === 0 ? "---" : "---:"))), ...simd.map(line)].join("\n"));
    }
  } else {
    printTable(HEADER, rows);
    const simd = simdRows(latest);
    if (simd.length) {
      console.log("");
      printTable(SIMD_HEADER, simd);
    }
  }
}
