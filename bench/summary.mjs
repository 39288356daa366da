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
      `dense counting, ${((sc.count.rows * sc.count.cols * 4) / 2 ** 20).toFixed(0)} MiB float32 (${c.bestNative})`,
      `${msf(c.bestNativeMs)} ms`,
      `${pct(c.fractionOfBestProbe)} of probe (q ${pct(c.fractionOfBestProbeQuartiles[0])}–${pct(c.fractionOfBestProbeQuartiles[1])})`,
      fx(c.speedupVsTs),
      "",
      "≥ 85 % probe",
      verdict(c.fractionOfBestProbe >= 0.85),
    ]);
  }
  const r = sc.ranks?.report;
  if (r) {
    const d = r.dense;
    rows.push([
      `ranks, dense ${(d.bytes / 2 ** 20).toFixed(0)} MiB float32`,
      `${msf(d.nativeMs)} ms`,
      `${pct(d.fractionOfProbe)} of probe (q ${pct(d.fractionOfProbeQuartiles[0])}–${pct(d.fractionOfProbeQuartiles[1])})`,
      fx(d.speedupVsTs),
      fx(d.speedupVsNumpy),
      "≥ 85 %, ≥ 8× TS, ≥ 8× NumPy",
      verdict(d.fractionOfProbe >= 0.85 && d.speedupVsTs >= 8 && (d.speedupVsNumpy === null || d.speedupVsNumpy >= 8)),
    ]);
    const k = r.cached;
    rows.push([
      `ranks, FB15k-237-width rows in cache (${k.rows} × ${k.cols})`,
      `${k.nativeUs.toFixed(0)} µs`,
      `${k.ratioToDram.toFixed(2)}× the DRAM probe rate`,
      fx(k.speedupVsTs),
      "",
      "≥ 1× DRAM rate",
      verdict(k.ratioToDram >= 1),
    ]);
    const s = r.sampled;
    rows.push([
      `ranks, sampled ${s.n.toLocaleString("en")} × ${s.k}`,
      `${msf(s.nativeMs)} ms`,
      `probe ${msf(s.probeMs)} ms`,
      fx(s.speedupVsTs),
      fx(s.speedupVsNumpy),
      "≤ 150 ms",
      verdict(s.nativeMs <= 150),
    ]);
    const e = r.eventLoop;
    rows.push([
      `event-loop delay during async ${(e.bytes / 2 ** 30).toFixed(1)} GiB jobs`,
      `p99 ${e.p99Ms.toFixed(1)} ms`,
      `max ${e.maxMs.toFixed(1)} ms`,
      "",
      "",
      "p99 ≤ 20 ms",
      verdict(e.p99Ms <= 20),
    ]);
  }
  const v = sc.evaluator?.report;
  if (v) {
    const f = v.fb15k237;
    if (f) {
      rows.push([
        "FB15k-237 test, both sides, filtered",
        `${msf(f.filteredMs)} ms`,
        `${f.ratioToProbe.toFixed(2)}× probe time`,
        fx(f.speedupVsTs),
        fx(f.speedupVsNumpy),
        "≤ 1.3× probe",
        verdict(f.ratioToProbe <= 1.3),
      ]);
      rows.push([
        "  filtered vs unfiltered",
        `${(100 * f.filteredVsUnfiltered).toFixed(1)} %`,
        "",
        "",
        "",
        "≤ 10 %",
        verdict(f.filteredVsUnfiltered <= 0.1),
      ]);
    }
    const w = v.wikikg2Index;
    rows.push([
      `filter index, ${(w.triples / 1e6).toFixed(0)} M triples, both sides`,
      `${msf(w.buildBothSidesMs)} ms`,
      `${w.bytesPerTriple.toFixed(2)} bytes/triple`,
      "",
      "",
      "≤ 12 bytes/triple",
      verdict(w.bytesPerTriple <= 12),
    ]);
    const d = v.wikikg2Slice;
    rows.push([
      `dense slice ${d.rows} × 2.5 M, filtered`,
      `${msf(d.evaluatorMs)} ms`,
      `${d.ratioToProbe.toFixed(2)}× probe time`,
      "",
      "",
      "bus speed",
      verdict(d.ratioToProbe <= 1.3),
    ]);
    const s = v.wikikg2Sampled;
    rows.push([
      `WikiKG2-shaped sampled, ${s.n.toLocaleString("en")} × ${s.K}, end to end`,
      `${msf(s.endToEndMs)} ms`,
      `peak RSS ${(s.peakRssMiB / 1024).toFixed(1)} GiB`,
      "",
      "",
      "≤ 2 s",
      verdict(s.endToEndMs <= 2000),
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
        labels[name] ?? name,
        `${msf(nat)} ms`,
        "",
        fx(ts / nat),
        np ? fx(np / nat) : "",
        target === null ? "practical" : `≤ ${target} ms`,
        target === null ? "" : verdict(nat <= target),
      ]);
    }
  }
  const tk = sc["top-k"];
  if (tk?.topKOverRank) {
    rows.push([
      `top-${tk.k} from embeddings: DistMult d = ${tk.dim}, ${tk.entities.toLocaleString("en")} entities × ${tk.rows} queries`,
      `${msf(tk.topKSeconds * 1e3)} ms`,
      `${tk.topKOverRank.toFixed(2)}× ranking the same queries (${msf(tk.rankSeconds * 1e3)} ms)`,
      "",
      "",
      "≤ 1.5× ranking",
      verdict(tk.topKOverRank <= 1.5),
    ]);
  }
  const e = sc.embeddings;
  if (e?.cases?.length) {
    const units = { complex: "4 madds / complex dim", rotate: "1 / complex dim" };
    for (const c of e.cases) {
      rows.push([
        `from embeddings: ${c.interaction}, ${c.entities.toLocaleString("en")} entities × ${c.queries} queries, d = ${c.width} (${units[c.interaction] ?? "1 madd / dim"})`,
        `${msf(c.seconds * 1e3)} ms`,
        `${pct(c.fraction)} of FMA probe (${(c.unitsPerSecond / 1e9).toFixed(1)} G/s)`,
        "",
        "",
        `≥ ${(100 * c.target).toFixed(0)} %`,
        verdict(c.fraction >= c.target),
      ]);
    }
    for (const t of e.torch ?? []) {
      const need = t.d >= 200 ? 1 : 2;
      rows.push([
        `FB15k-237 DistMult d = ${t.d}, full filtered, both sides: vs PyTorch pipeline`,
        `${msf(t.kgrankSeconds * 1e3)} ms`,
        `torch ${msf(t.torchSeconds * 1e3)} ms; MRR ${t.mrr.toFixed(6)} / ${t.torchMrr.toFixed(6)}`,
        "",
        "",
        `≥ ${need}× torch (${t.speedup.toFixed(2)}×)`,
        verdict(t.speedup >= need),
      ]);
    }
    for (const w of e.wikikg2 ?? []) {
      rows.push([
        `WikiKG2-shaped DistMult d = ${w.d}, ${w.sampleTasks.toLocaleString("en")} tasks × ${w.entities.toLocaleString("en")} entities`,
        `${msf(w.seconds * 1e3)} ms`,
        `${(w.perTaskCoreSeconds * 1e3).toFixed(1)} ms per task per vCPU`,
        "",
        "",
        `whole test set here: ${((w.testTasks * w.perTaskCoreSeconds) / w.threads / 3600).toFixed(1)} h`,
        "",
      ]);
    }
    if (e.eventLoop) {
      rows.push([
        `event loop during async addModel (${e.eventLoop.triples} triples × 2 sides × ${e.eventLoop.entities.toLocaleString("en")} entities)`,
        `p99 ${e.eventLoop.p99Ms.toFixed(1)} ms`,
        `max ${e.eventLoop.maxMs.toFixed(1)} ms`,
        "",
        "",
        "p99 ≤ 20 ms",
        verdict(e.eventLoop.p99Ms <= 20),
      ]);
    }
  }
  const so = sc["scale-out"];
  if (so?.merge) {
    rows.push([
      `merge ${so.merge.shards} shard states, ${so.merge.tasks.toLocaleString("en")} tasks`,
      `${msf(so.merge.medianMs)} ms`,
      `${so.merge.bytesPerTask.toFixed(1)} bytes of state per task`,
      "",
      "",
      "≤ 2000 ms",
      verdict(so.merge.medianMs <= 2000),
    ]);
  }
  if (so?.workers) {
    rows.push([
      "kgrank evaluate --workers 2 over --workers 1 (compute-bound: DistMult on the ts backend)",
      `${so.workers.speedup.toFixed(2)}×`,
      `${msf(so.workers.oneMs)} ms → ${msf(so.workers.twoMs)} ms` +
        (so.workers.ratios
          ? `; pairs ${so.workers.ratios.map((x) => x.toFixed(2)).join(", ")}, machine's two-process limit ${so.workers.limits.map((x) => x.toFixed(2)).join(", ")}`
          : ""),
      "",
      "",
      "≥ 1.8×",
      verdict(so.workers.speedup >= 1.8),
    ]);
  }
  if (so?.queue) {
    rows.push([
      "BullMQ queue overhead per shard (round trip, state write and read)",
      `${so.queue.perShardMs.toFixed(1)} ms`,
      `1 shard ${msf(so.queue.oneShardMs)} ms, 33 shards ${msf(so.queue.shards33Ms)} ms`,
      "",
      "",
      "≤ 50 ms",
      verdict(so.queue.perShardMs <= 50),
    ]);
  }
  return rows;
}

/**
 * Projected wall time of full filtered WikiKG2 from embeddings (598,543 test triples × 2 sides) on 16 and 64 machines,
 * from the rates measured in this run: compute = tasks × (seconds per task per vCPU) / (machines × vCPUs), plus one
 * shard's queue overhead per shard a machine runs (one shard per vCPU) and the merge of the shard states (measured for
 * 64 states of 1.2 M tasks). Per-vCPU rates are assumed to carry over (the kernel is compute-bound: entity tiles stay
 * in cache), which a machine with more cores per memory channel may not quite give.
 */
export function projectionRows(latest) {
  const e = latest.scenarios?.embeddings;
  const so = latest.scenarios?.["scale-out"];
  if (!e?.wikikg2?.length) return [];
  const out = [];
  for (const w of e.wikikg2) {
    for (const [label, vcpus] of [
      ["2-vCPU machines like this one", 2],
      ["32-vCPU machines", 32],
    ]) {
      for (const machines of [16, 64]) {
        const compute = (w.testTasks * w.perTaskCoreSeconds) / (machines * vcpus);
        const overhead = ((so?.queue?.perShardMs ?? 0) * vcpus + (so?.merge?.medianMs ?? 0)) / 1e3;
        const h = (compute + overhead) / 3600;
        out.push([
          `d = ${w.d}`,
          `${machines} × ${label}`,
          h >= 1 ? `${h.toFixed(2)} h` : `${(h * 60).toFixed(1)} min`,
          `${(compute / 3600).toFixed(2)} h compute + ${overhead.toFixed(1)} s queue and merge`,
        ]);
      }
    }
  }
  return out;
}
export const PROJECTION_HEADER = ["WikiKG2 full filtered, DistMult", "machines", "projected wall time", "arithmetic"];

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
      return [
        name.replace("native ", "").replace(/ t(\d+)$/, ", $1 thread(s)"),
        (r.median * 1e3).toFixed(1),
        (bytes / r.median / 1e9).toFixed(1),
        probe ? `${((100 * probe) / r.median).toFixed(1)} %` : "",
        (ts / r.median).toFixed(1),
      ];
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
      console.log(
        ["", line(SIMD_HEADER), line(SIMD_HEADER.map((_, i) => (i === 0 ? "---" : "---:"))), ...simd.map(line)].join(
          "\n",
        ),
      );
    }
    const proj = projectionRows(latest);
    if (proj.length) {
      const line = (cells) => `| ${cells.join(" | ")} |`;
      console.log(
        ["", line(PROJECTION_HEADER), line(PROJECTION_HEADER.map(() => "---")), ...proj.map(line)].join("\n"),
      );
    }
  } else {
    printTable(HEADER, rows);
    const simd = simdRows(latest);
    if (simd.length) {
      console.log("");
      printTable(SIMD_HEADER, simd);
    }
    const proj = projectionRows(latest);
    if (proj.length) {
      console.log("");
      printTable(PROJECTION_HEADER, proj);
    }
  }
}
