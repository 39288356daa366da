/**
 * The checks test/embeddings.test.ts and test/embeddings-fb15k.test.ts share: a model of random embeddings for a
 * case and its float64 twin (build), the known answers of a dataset (known), and the comparison of an evaluator's
 * filtered ranks and metrics with the float64 reference within the float32 bound (checkAgainstReference).
 */
import { expect } from "vitest";

import { EmbeddingModel, RankEvaluator, type RankResults } from "../../src/index";
import type { MappedDataset } from "./datasets";
import {
  EMBEDDING_CASES,
  type EmbeddingCase,
  randomValues,
  refMagnitude,
  type RefModel,
  refScore,
} from "./embedding-reference";

type Case = EmbeddingCase;
export const CASES = EMBEDDING_CASES;

export function label(c: Case): string {
  return `${c.name}${c.layout ? `/${c.layout}` : ""}${c.phases === undefined ? "" : c.phases ? "/phases" : "/complex-rel"}`;
}

export function build(
  c: Case,
  ds: MappedDataset,
  dim: number,
  seed: number,
  precision: "float32" | "float64" = "float32",
) {
  const n = ds.entities.length;
  const nr = ds.relations.length;
  const rotation = c.name === "rotate" || c.name === "rotate-l2";
  const width = c.name === "complex" || rotation ? 2 * dim : dim;
  const relWidth = c.name === "pairre" ? 2 * width : rotation && c.phases ? width / 2 : width;
  const ent = randomValues(n * width, seed, 0.5);
  const rel = randomValues(nr * relWidth, seed + 1, rotation && c.phases ? 3 : 0.5);
  const phaseScale = c.phases ? 1.0471975511965976 : 1;
  const model = new EmbeddingModel({
    interaction: c.name,
    entityEmbeddings: { data: ent, shape: [n, width] },
    relationEmbeddings: { data: rel, shape: [nr, relWidth] },
    ...(c.layout ? { complexLayout: c.layout } : {}),
    ...(c.phases ? { phaseScale } : {}),
    precision,
  });
  const ref: RefModel = {
    name: c.name,
    ent: Float64Array.from(ent),
    rel: Float64Array.from(rel),
    width,
    relWidth,
    interleaved: c.layout === "interleaved",
    phaseScale,
  };
  return { model, ref, width };
}

/** Known answers per (anchor, relation) of a side, built once per dataset. */
const knownCache = new WeakMap<MappedDataset, Record<"head" | "tail", Map<string, Set<number>>>>();
export function known(ds: MappedDataset, side: "head" | "tail"): Map<string, Set<number>> {
  let both = knownCache.get(ds);
  if (!both) {
    both = { head: new Map(), tail: new Map() };
    for (const t of [ds.splits.train, ds.splits.valid, ds.splits.test]) {
      for (let i = 0; i < t.length; i += 3) {
        for (const s of ["head", "tail"] as const) {
          const [a, b] = s === "tail" ? [t[i]!, t[i + 2]!] : [t[i + 2]!, t[i]!];
          const key = `${a},${t[i + 1]}`;
          const m = both[s];
          if (!m.has(key)) m.set(key, new Set());
          m.get(key)!.add(b);
        }
      }
    }
    knownCache.set(ds, both);
  }
  return both[side];
}

export const HITS = [1, 3, 10] as const;

/**
 * Checks the evaluator's filtered ranks of `triples` against the reference, then its metrics (realistic MRR, MR,
 * Hits@1/3/10 per side and both) against the reference's: equal up to summation rounding (1e-12) plus what the
 * tasks the float32 bound leaves open can move them by. An open task's rank (the evaluator's and the exact one) lies
 * in [1 + above, 1 + aboveOrClose], so it can move MRR by at most 1/(1 + above) - 1/(1 + aboveOrClose), MR by
 * aboveOrClose - above, Hits@k by 1 when k lies in that interval, each divided by the number of tasks. The promise
 * of metrics within 1e-6 of the float64 reference is asserted wherever that bound is below 1e-6 (on the
 * FB15k-237 cases here it is for MRR but in one case, whose bound is 3e-6). Finalizes the evaluator; returns its
 * results and the number of open tasks.
 */
export function checkAgainstReference(
  ev: RankEvaluator,
  ds: MappedDataset,
  ref: RefModel,
  triples: Int32Array,
  wide: boolean,
): { open: number; results: RankResults } {
  const n = ds.entities.length;
  const u = wide ? 2 ** -53 : 2 ** -24;
  let open = 0;
  type Acc = { tasks: number; mrr: number; mr: number; hits: number[]; bMrr: number; bMr: number; bHits: number[] };
  const acc = (): Acc => ({
    tasks: 0,
    mrr: 0,
    mr: 0,
    hits: HITS.map(() => 0),
    bMrr: 0,
    bMr: 0,
    bHits: HITS.map(() => 0),
  });
  const per: Record<"head" | "tail" | "both", Acc> = { head: acc(), tail: acc(), both: acc() };
  const scores = new Float64Array(n);
  const mags = new Float64Array(n);
  for (const side of ["head", "tail"] as const) {
    const cols = ev.taskColumns(side);
    const answers = known(ds, side);
    expect(cols.optimistic.length).toBe(triples.length / 3);
    for (let i = 0; i < triples.length / 3; i++) {
      const [h, r, t] = [triples[3 * i]!, triples[3 * i + 1]!, triples[3 * i + 2]!];
      const [anchor, truth] = side === "tail" ? [h, t] : [t, h];
      for (let e = 0; e < n; e++) {
        scores[e] = side === "tail" ? refScore(ref, h, r, e) : refScore(ref, e, r, t);
        mags[e] = (ref.width + 4) * u * (side === "tail" ? refMagnitude(ref, h, r, e) : refMagnitude(ref, e, r, t));
      }
      const ts = scores[truth]!;
      const bt = mags[truth]!;
      const filtered = answers.get(`${anchor},${r}`)!;
      let above = 0;
      let aboveOrClose = 0;
      let greater = 0;
      let equalish = 0;
      for (let e = 0; e < n; e++) {
        if (e === truth || filtered.has(e)) continue;
        const s = scores[e]!;
        const b = bt + mags[e]!;
        if (s - ts > b) above++;
        if (s - ts > -b) aboveOrClose++;
        if (s > ts) greater++;
        if (s === ts) equalish++;
      }
      const opt = cols.optimistic[i]!;
      const pess = cols.pessimistic[i]!;
      expect(cols.numCandidates[i]).toBe(n - filtered.size + 1);
      const isOpen = above !== aboveOrClose;
      if (!isOpen) {
        expect(opt, `${side} task ${i}: optimistic rank`).toBe(1 + greater);
        expect(pess, `${side} task ${i}: pessimistic rank`).toBe(1 + greater + equalish);
      } else {
        open++;
        expect(opt).toBeGreaterThanOrEqual(1 + above);
        expect(pess).toBeLessThanOrEqual(1 + aboveOrClose);
      }
      const rank = 1 + greater + equalish / 2; // the exact realistic rank
      for (const a of [per[side], per.both]) {
        a.tasks++;
        a.mrr += 1 / rank;
        a.mr += rank;
        HITS.forEach((k, j) => (a.hits[j]! += rank <= k ? 1 : 0));
        if (isOpen) {
          a.bMrr += 1 / (1 + above) - 1 / (1 + aboveOrClose);
          a.bMr += aboveOrClose - above;
          HITS.forEach((k, j) => (a.bHits[j]! += 1 + above <= k && k < 1 + aboveOrClose ? 1 : 0));
        }
      }
    }
  }
  const results = ev.finalize();
  for (const key of ["head", "tail", "both"] as const) {
    const a = per[key];
    const check = (metric: string, want: number, bound: number) => {
      const got = results.get(`${key}.realistic.${metric}`);
      const tol = bound / a.tasks + 1e-12 * Math.max(1, Math.abs(want));
      expect(
        Math.abs(got - want),
        `${key} ${metric}: ${got} vs the reference's ${want} (bound ${tol})`,
      ).toBeLessThanOrEqual(tol);
      if (bound / a.tasks < 1e-6) expect(Math.abs(got - want)).toBeLessThan(1e-6);
    };
    check("mrr", a.mrr / a.tasks, a.bMrr);
    check("mr", a.mr / a.tasks, a.bMr);
    HITS.forEach((k, j) => check(`hits@${k}`, a.hits[j]! / a.tasks, a.bHits[j]!));
  }
  return { open, results };
}

export function evaluatorFor(ds: MappedDataset, extra: Partial<ConstructorParameters<typeof RankEvaluator>[0]> = {}) {
  return new RankEvaluator({
    numEntities: ds.entities.length,
    numRelations: ds.relations.length,
    filterTriples: [ds.splits.train, ds.splits.valid, ds.splits.test],
    ...extra,
  });
}
