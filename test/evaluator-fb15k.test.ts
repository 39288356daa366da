/**
 * RankEvaluator on FB15k-237 (read from ../shared/datasets or $KGRANK_DATASETS) with seeded synthetic float32
 * scores full of ties and some NaN: ranks and every metric against a brute-force reference written here (NaN-mask
 * the other known answers, count by plain loops, metrics by plain sums). Tolerance: ranks exact; metric values
 * 1e-12 relative (the library sums with compensation, the reference naively over ~1,000 terms).
 */
import { expect, it } from "vitest";

import { RankEvaluator } from "../src/index";
import { loadShared, sharedDataset } from "./helpers/datasets";
import { describeWith } from "./helpers/external";
import { refValue } from "./helpers/metrics-reference";
import { knownAnswers, rng } from "./helpers/reference";
import { backendLabel } from "./helpers/backend";

const label = backendLabel;
const fb = loadShared("fb15k-237");

type Side = "head" | "tail";

function relClose(actual: number, expected: number, tol = 1e-12) {
  if (Number.isNaN(expected)) return expect(actual).toBeNaN();
  const err = expected === 0 ? Math.abs(actual) : Math.abs(actual - expected) / Math.abs(expected);
  expect(err, `${actual} vs ${expected}`).toBeLessThanOrEqual(tol);
}

describeWith(`RankEvaluator on FB15k-237 on ${label}`, fb, sharedDataset("fb15k-237"), (fb) => {
  const { train, valid, test } = fb.splits;
  const N = fb.entities.length;
  const filter = [train, valid, test];
  // A seeded sample of 400 test triples keeps the brute force quick; the filter is the full train+valid+test.
  const pick = rng(237);
  const rowsIdx = Array.from({ length: 400 }, () => Math.floor(pick() * (test.length / 3)));
  const triples = Int32Array.from(rowsIdx.flatMap((i) => [test[3 * i]!, test[3 * i + 1]!, test[3 * i + 2]!]));
  const rows = rowsIdx.length;

  function scoresFor(side: Side): Float32Array {
    const next = rng(side === "head" ? 11 : 12);
    // Coarse levels give many ties; 0.5 % NaN (non-candidates).
    const s = new Float32Array(rows * N);
    for (let i = 0; i < s.length; i++) s[i] = next() < 0.005 ? NaN : Math.floor(next() * 64) / 16;
    for (let i = 0; i < rows; i++) {
      const truth = side === "tail" ? triples[3 * i + 2]! : triples[3 * i]!;
      if (Number.isNaN(s[i * N + truth]!)) s[i * N + truth] = 2;
    }
    return s;
  }

  function bruteForce(side: Side, scores: Float32Array) {
    const known = knownAnswers(filter, side);
    const out = {
      optimistic: [] as number[],
      pessimistic: [] as number[],
      realistic: [] as number[],
      numCandidates: [] as number[],
    };
    for (let i = 0; i < rows; i++) {
      const [h, r, t] = [triples[3 * i]!, triples[3 * i + 1]!, triples[3 * i + 2]!];
      const truth = side === "tail" ? t : h;
      const others = known.get(side === "tail" ? `${h},${r}` : `${t},${r}`)!;
      const row = Float64Array.from(scores.subarray(i * N, (i + 1) * N));
      for (const k of others) if (k !== truth) row[k] = NaN;
      const x = row[truth]!;
      let greater = 0;
      let geq = 0;
      let cand = 0;
      for (let e = 0; e < N; e++) {
        const s = row[e]!;
        if (Number.isNaN(s)) continue;
        cand++;
        if (s > x) greater++;
        if (s >= x) geq++;
      }
      out.optimistic.push(1 + greater);
      out.pessimistic.push(geq);
      out.realistic.push((1 + greater + geq) / 2);
      out.numCandidates.push(cand);
    }
    return out;
  }

  const scores = { head: scoresFor("head"), tail: scoresFor("tail") };
  const want = { head: bruteForce("head", scores.head), tail: bruteForce("tail", scores.tail) };

  /** Plain-loop references of base metrics and of the derived metrics with simple closed forms. */
  function referenceMetrics(ranks: number[], nc: number[]): Record<string, number> {
    const n = ranks.length;
    const mean = (f: (i: number) => number) => {
      let s = 0;
      for (let i = 0; i < n; i++) s += f(i);
      return s / n;
    };
    const H = (m: number) => {
      let s = 0;
      for (let j = m; j >= 1; j--) s += 1 / j;
      return s;
    };
    const mr = refValue("arithmetic_mean_rank", ranks);
    const mrr = refValue("inverse_harmonic_mean_rank", ranks);
    const eMr = mean((i) => (nc[i]! + 1) / 2);
    const vMr = mean((i) => (nc[i]! ** 2 - 1) / 12) / n;
    const hn = nc.map((m) => H(m));
    const h2 = nc.map((m) => {
      let s = 0;
      for (let j = m; j >= 1; j--) s += 1 / (j * j);
      return s;
    });
    const eMrr = mean((i) => hn[i]! / nc[i]!);
    const vMrr = mean((i) => h2[i]! / nc[i]! - (hn[i]! / nc[i]!) ** 2) / n;
    const out: Record<string, number> = {
      arithmetic_mean_rank: mr,
      inverse_harmonic_mean_rank: mrr,
      geometric_mean_rank: refValue("geometric_mean_rank", ranks),
      harmonic_mean_rank: refValue("harmonic_mean_rank", ranks),
      median_rank: refValue("median_rank", ranks),
      variance: refValue("variance", ranks),
      standard_deviation: refValue("standard_deviation", ranks),
      median_absolute_deviation: refValue("median_absolute_deviation", ranks),
      adjusted_arithmetic_mean_rank: mr / eMr,
      adjusted_arithmetic_mean_rank_index: 1 - (mr - 1) / (eMr - 1),
      adjusted_inverse_harmonic_mean_rank: (mrr - eMrr) / (1 - eMrr),
      z_arithmetic_mean_rank: -(mr - eMr) / Math.sqrt(vMr),
      z_inverse_harmonic_mean_rank: (mrr - eMrr) / Math.sqrt(vMrr),
      count: n,
    };
    for (const k of [1, 3, 5, 10]) {
      const hits = refValue(`hits_at_${k}`, ranks);
      const p = nc.map((m) => Math.min(k, m) / m);
      const e = mean((i) => p[i]!);
      const v = mean((i) => p[i]! * (1 - p[i]!)) / n;
      out[`hits_at_${k}`] = hits;
      out[`adjusted_hits_at_${k}`] = (hits - e) / (1 - e);
      out[`z_hits_at_${k}`] = (hits - e) / Math.sqrt(v);
    }
    return out;
  }

  it("records brute-force filtered ranks for both sides, fed in batches of 64 rows (sync and async)", async () => {
    const ev = new RankEvaluator({ numEntities: N, filterTriples: filter });
    for (const side of ["head", "tail"] as Side[]) {
      for (let start = 0, b = 0; start < rows; start += 64, b++) {
        const end = Math.min(rows, start + 64);
        const batch = {
          triples: triples.subarray(3 * start, 3 * end),
          side,
          scores: scores[side].subarray(start * N, end * N),
        };
        if (b % 2) await ev.add(batch);
        else ev.addSync(batch);
      }
      const got = ev.taskColumns(side);
      expect(Array.from(got.optimistic)).toEqual(want[side].optimistic);
      expect(Array.from(got.pessimistic)).toEqual(want[side].pessimistic);
      expect(Array.from(got.realistic)).toEqual(want[side].realistic);
      expect(Array.from(got.numCandidates)).toEqual(want[side].numCandidates);
    }
    const results = ev.finalize();
    let checked = 0;
    for (const side of ["head", "tail", "both"] as const) {
      for (const rt of ["optimistic", "realistic", "pessimistic"] as const) {
        const ranks = side === "both" ? [...want.head[rt], ...want.tail[rt]] : want[side][rt];
        const nc =
          side === "both" ? [...want.head.numCandidates, ...want.tail.numCandidates] : want[side].numCandidates;
        for (const [key, value] of Object.entries(referenceMetrics(ranks, nc))) {
          const flat = results.toFlatObject();
          if (!(`${side}.${rt}.${key}` in flat)) continue; // e.g. metrics defined for realistic ranks only
          relClose(results.get(`${side}.${rt}.${key}`), value);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(150);
    // Ties are frequent, so rank types differ.
    expect(results.meanRankWidth("both")).toBeGreaterThan(10);
  });

  it("serialize/merge of 2, 3 and 7 shards equals the single run, median included", () => {
    const single = new RankEvaluator({ numEntities: N, filterTriples: filter });
    const feed = (ev: RankEvaluator, from: number, to: number) => {
      for (const side of ["head", "tail"] as Side[]) {
        if (to > from)
          ev.addSync({
            triples: triples.subarray(3 * from, 3 * to),
            side,
            scores: scores[side].subarray(from * N, to * N),
          });
      }
    };
    feed(single, 0, rows);
    const expected = single.finalize().toFlatObject();
    for (const shards of [2, 3, 7]) {
      const states: Uint8Array[] = [];
      for (let s = 0; s < shards; s++) {
        const ev = new RankEvaluator({ numEntities: N, filterTriples: filter });
        feed(ev, Math.floor((s * rows) / shards), Math.floor(((s + 1) * rows) / shards));
        states.push(ev.serialize());
      }
      const merged = RankEvaluator.merge(states).finalize().toFlatObject();
      expect(merged).toEqual(expected);
    }
  });
});
