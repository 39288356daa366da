/**
 * --estimate-full with --negatives-ids: the negatives checked against what the estimators assume before anything
 * is scored, and the full-ranking estimates from the run's sampled ranks.
 */
import { KgrankInputError } from "../../checks/errors";
import { sampledNegativeCandidates } from "../../evaluation/candidate-counts";
import type { RankResults } from "../../evaluation/results";
import {
  estimateFromSampledRanks,
  estimatorsWithinLimits,
  type SampledRankEstimates,
  type SampledRankEstimator,
} from "../../evaluation/sampled-negatives";
import { SIDES, type TaskSide } from "../datasets";
import { type RunContext, runFilter } from "./context";
import type { EvaluateOptions } from "./options";

/** What --estimate-full estimates with: each side's candidate counts, K, the estimators. */
export interface SampledEstimatePlan {
  numCandidates: Partial<Record<TaskSide, Float64Array>>;
  k: number;
  replacement: boolean;
  estimators: SampledRankEstimator[];
}

/**
 * --estimate-full, checked before any scoring: the negatives of rows [lo, hi) against what the estimators assume
 * (none is the task's own answer, no repeat without --replacement, with --negatives-from filtered no other known
 * answer), each task's candidate count, and the estimators that fit the work limits.
 */
export function sampledEstimatePlan(
  run: RunContext,
  negatives: Int32Array,
  k: number,
  sides: readonly TaskSide[],
): SampledEstimatePlan {
  const { opts, ds, evaluated, lo, hi } = run;
  const filtered = opts.negativesFrom === "filtered";
  const filter = filtered ? runFilter(run, false) : null;
  if (filtered && !filter!.triples) {
    throw new KgrankInputError(
      "--negatives-from",
      "filtered needs known answers to filter by, but --filter is none: give the splits the negatives avoided",
    );
  }
  const replacement = Boolean(opts.replacement);
  const numCandidates: Partial<Record<TaskSide, Float64Array>> = {};
  const groups = new Set<number>();
  for (const side of sides) {
    const counts = sampledNegativeCandidates(
      evaluated.subarray(3 * lo, 3 * hi),
      negatives.subarray(lo * k, hi * k),
      side,
      ds.numEntities,
      ds.numRelations,
      filter?.triples ?? null,
      replacement,
      "--negatives-ids",
    );
    numCandidates[side] = counts;
    for (let i = 0; i < counts.length; i++) {
      groups.add(counts[i]!);
      if (!replacement && k > counts[i]! - 1) {
        throw new KgrankInputError(
          "--negatives-ids",
          `row ${lo + i} has ${k} negatives, but its ${side} task has only ${counts[i]! - 1} other candidates ` +
            `${filtered ? "after filtering" : ""}: without --replacement a row draws at most that many`,
        );
      }
    }
  }
  const fit = estimatorsWithinLimits([...groups], k);
  let estimators: SampledRankEstimator[];
  if (opts.estimateFull === true) estimators = fit;
  else {
    estimators = opts.estimateFull as SampledRankEstimator[];
    const over = estimators.find((e) => !fit.includes(e));
    if (over) {
      throw new KgrankInputError(
        "--estimate-full",
        `${over} is beyond the work limits for K = ${k} and ${groups.size === 1 ? `N = ${[...groups][0]}` : `${groups.size} distinct candidate counts (one table set each)`} ` +
          `(docs/evaluate.md, "Sampled negatives, corrected"): give --estimate-full ${fit.join(",")}`,
      );
    }
  }
  return { numCandidates, k, replacement, estimators };
}

/** The full-ranking estimates of each side ranked and of both together, from the run's realistic sampled ranks. */
export function sampledEstimates(
  results: RankResults,
  plan: SampledEstimatePlan,
  opts: EvaluateOptions,
): Partial<Record<"head" | "tail" | "both", SampledRankEstimates>> {
  const tasks = results.tasks();
  const ranks: Partial<Record<TaskSide, Float64Array>> = {};
  let at = 0;
  for (const side of SIDES) {
    const counts = plan.numCandidates[side];
    if (!counts) continue;
    ranks[side] = tasks.realistic.subarray(at, at + counts.length);
    at += counts.length;
  }
  if (at !== tasks.realistic.length)
    throw new Error(`--estimate-full: ${tasks.realistic.length} tasks ranked, ${at} planned`);
  const estimate = (r: Float64Array, numCandidates: Float64Array) =>
    estimateFromSampledRanks({
      ranks: r,
      numNegatives: plan.k,
      numCandidates: opts.negativesFrom === "filtered" ? numCandidates : numCandidates[0]!,
      replacement: plan.replacement,
      estimators: plan.estimators,
      ...(opts.ks ? { ks: opts.ks } : {}),
      ...(opts.bootstrap ? { bootstrap: { samples: opts.bootstrap, seed: opts.seed, confidenceLevel: 0.95 } } : {}),
    });
  const out: Partial<Record<"head" | "tail" | "both", SampledRankEstimates>> = {};
  const sides = SIDES.filter((s) => ranks[s]);
  for (const side of sides) out[side] = estimate(ranks[side]!, plan.numCandidates[side]!);
  if (sides.length === 2) {
    const both = new Float64Array(at);
    both.set(plan.numCandidates.head!);
    both.set(plan.numCandidates.tail!, plan.numCandidates.head!.length);
    out.both = estimate(tasks.realistic, both);
  }
  return out;
}
