/**
 * The warning `kgrank evaluate` prints on stderr when its ranks are indistinguishable from uniformly random ranking:
 * the z-scores of the realistic MRR and MR over the entity tasks (each rank taken as uniform over its task's
 * candidates, the closed forms the results' z-scored metrics use) both lie within +-RANDOM_Z. A trained model lies
 * far outside (the frequency baseline on Nations: z of MRR 12.3); a model read in another id order, with a wrong id
 * map or against another dataset lands inside. Not part of the printed results (table, JSON, CSV).
 */
import type { RankEvaluator } from "../evaluation/evaluator";
import { prepareCandidates } from "../metrics/candidates";
import { getMetric } from "../metrics/catalogue";
import { zScored } from "../metrics/derived";

/** |z| below this for both MRR and MR: what uniformly random ranking gives in about 99.7 % of runs. */
const RANDOM_Z = 3;
/** Fewer tasks than this say too little either way: no warning. */
const MIN_TASKS = 20;

/** The z-scores of the realistic MRR and MR over the head and tail tasks, or null (too few tasks, no variance). */
export function randomRankingScores(evaluator: RankEvaluator): { mrr: number; mr: number; tasks: number } | null {
  const cols = (["head", "tail"] as const)
    .filter((s) => evaluator.taskCounts[s] > 0)
    .map((s) => evaluator.taskColumns(s));
  const tasks = cols.reduce((n, c) => n + c.realistic.length, 0);
  if (tasks < MIN_TASKS) return null;
  const ranks = new Float64Array(tasks);
  const counts = new Float64Array(tasks);
  let at = 0;
  for (const c of cols) {
    ranks.set(c.realistic, at);
    counts.set(c.numCandidates, at);
    at += c.realistic.length;
  }
  try {
    const nc = prepareCandidates(counts);
    const z = (key: string) => {
      const metric = getMetric(key);
      return zScored(metric).adjust(metric.value(ranks, counts), nc as never);
    };
    return { mrr: z("inverse_harmonic_mean_rank"), mr: z("arithmetic_mean_rank"), tasks };
  } catch {
    return null; // every task with one candidate: no variance, nothing to tell
  }
}

/** The warning's text (one paragraph ending in a newline), or null when the ranks are not random-like. */
export function randomRankingWarning(evaluator: RankEvaluator, fromModel: boolean): string | null {
  const z = randomRankingScores(evaluator);
  if (!z || !(Math.abs(z.mrr) < RANDOM_Z && Math.abs(z.mr) < RANDOM_Z)) return null;
  const causes = fromModel
    ? "embedding rows in another order than the dataset's entity ids (a model trained with its own id maps needs " +
      "them: --entity-ids / --relation-ids, or entities.tsv / relations.tsv beside the embeddings), a wrong " +
      "--entity-ids or --relation-ids map, or another dataset than the one the model was trained on (--dataset)"
    : "score columns in another order than the dataset's entity ids, score rows in another order than the split's " +
      "triples, or another dataset or split than the scores were computed for (--dataset, --split)";
  return (
    `kgrank: warning: these ranks are indistinguishable from uniformly random ranking (z-scores over ${z.tasks} ` +
    `tasks: realistic MRR ${z.mrr.toFixed(2)}, MR ${z.mr.toFixed(2)}; |z| < ${RANDOM_Z} for both, where a trained ` +
    `model lies far above). Usual causes: ${causes}.\n`
  );
}
