/**
 * The OGB drop-in against OGB's formula written out here from its definition (rank = 1 + #(neg > pos) +
 * #(neg == pos) / 2, comparisons in float64 after promotion, NaN compares false; lists in float32), on tie-heavy,
 * NaN-holding and mixed-precision inputs, sync and async, on every backend.
 */
import { describe, expect, it } from "vitest";

import { KgrankInputError, ogbEvaluate, ogbEvaluateSync } from "../src/index";
import { backendLabel } from "./helpers/backend";
import { rng } from "./helpers/reference";

function reference(pos: ArrayLike<number>, neg: ArrayLike<number>) {
  const n = pos.length;
  const k = neg.length / n;
  const out = {
    "hits@1_list": [] as number[],
    "hits@3_list": [] as number[],
    "hits@10_list": [] as number[],
    mrr_list: [] as number[],
  };
  for (let i = 0; i < n; i++) {
    let gt = 0;
    let ge = 0;
    for (let j = 0; j < k; j++) {
      const v = neg[i * k + j]!;
      if (v > pos[i]!) gt++;
      if (v >= pos[i]!) ge++;
    }
    const rank = 0.5 * (gt + ge) + 1;
    out["hits@1_list"].push(rank <= 1 ? 1 : 0);
    out["hits@3_list"].push(rank <= 3 ? 1 : 0);
    out["hits@10_list"].push(rank <= 10 ? 1 : 0);
    out.mrr_list.push(Math.fround(1 / Math.fround(rank)));
  }
  return out;
}

describe(`ogbEvaluate on ${backendLabel}`, () => {
  const next = rng(11);
  const n = 300;
  const k = 64;
  const cases: [string, ArrayLike<number>, Float32Array | Float64Array][] = [
    [
      "ties (integer scores)",
      Float32Array.from({ length: n }, () => Math.floor(next() * 6)),
      Float32Array.from({ length: n * k }, () => Math.floor(next() * 6)),
    ],
    ["float64", Float64Array.from({ length: n }, () => next()), Float64Array.from({ length: n * k }, () => next())],
    [
      "float64 positives, float32 negatives",
      Float64Array.from({ length: n }, (_, i) => (i % 3 === 0 ? Math.fround(0.5) : next())),
      Float32Array.from({ length: n * k }, (_, i) => (i % 5 === 0 ? 0.5 : next())),
    ],
    [
      "NaN negatives",
      Float32Array.from({ length: n }, () => next()),
      Float32Array.from({ length: n * k }, (_, i) => (i % 7 === 0 ? NaN : next())),
    ],
  ];
  for (const [what, pos, neg] of cases) {
    it(`equals OGB's formula: ${what}`, async () => {
      const want = reference(pos, neg);
      const sync = ogbEvaluateSync({ y_pred_pos: pos, y_pred_neg: neg });
      const async_ = await ogbEvaluate({ y_pred_pos: pos, y_pred_neg: { data: neg, shape: [n, k] } });
      for (const key of ["hits@1_list", "hits@3_list", "hits@10_list", "mrr_list"] as const) {
        expect(sync[key]).toBeInstanceOf(Float32Array);
        expect(Array.from(sync[key]), key).toEqual(want[key]);
        expect(async_[key]).toEqual(sync[key]);
      }
    });
  }

  it("refuses what OGB refuses, and a NaN positive (OGB would silently rank it first)", async () => {
    const bad: [() => unknown, string, RegExp][] = [
      [() => ogbEvaluateSync({ y_pred_pos: [0.5, NaN], y_pred_neg: new Float32Array(4) }), "y_pred_pos", /NaN/],
      [
        () => ogbEvaluateSync({ y_pred_pos: [0.5, 1], y_pred_neg: new Float32Array(3) }),
        "y_pred_neg",
        /K >= 1 per positive edge/,
      ],
      [
        () => ogbEvaluateSync({ y_pred_pos: [0.5], y_pred_neg: { data: new Float32Array(4), shape: [2, 2] } }),
        "y_pred_neg",
        /shape \(1, K\)/,
      ],
      [
        () => ogbEvaluateSync({ y_pred_pos: [0.5], y_pred_neg: [1, 2] as never }),
        "y_pred_neg",
        /Float32Array or Float64Array/,
      ],
      [() => ogbEvaluateSync({ y_pred_pos: [], y_pred_neg: new Float32Array(0) }), "y_pred_pos", /empty/],
      [
        () => ogbEvaluateSync({ y_pred_pos: [1], y_pred_neg: new Float32Array(1), y_pred: 1 } as never),
        "input",
        /y_pred/,
      ],
    ];
    for (const [call, argument, pattern] of bad) {
      let caught: unknown;
      try {
        call();
      } catch (e) {
        caught = e;
      }
      expect(caught, argument).toBeInstanceOf(KgrankInputError);
      expect((caught as KgrankInputError).argument).toBe(argument);
      expect((caught as Error).message).toMatch(pattern);
    }
    await expect(ogbEvaluate({ y_pred_pos: [NaN], y_pred_neg: new Float32Array(2) })).rejects.toThrow(/y_pred_pos/);
  });
});
