/**
 * What a run's printed results say about it besides the numbers (ReportInfo, saved in shard states so a merged run
 * prints the same), the provenance --save-state writes (RunMeta), and how a --metrics list reads.
 */
import type { CandidateProtocol } from "../ranking/candidate-sets";
import type { TemporalProtocol } from "../evaluation/types";
import type { RankResults } from "../evaluation/results";

/** What the printed results say about the run besides the numbers; saved in shard states so merge prints the same. */
export interface ReportInfo {
  title: string;
  /** Null for dataset-free sampled ranking (--positive-scores / --negative-scores). */
  dataset: string | null;
  split: string | null;
  numEntities: number | null;
  triples: number;
  dropped: number;
  setting: string;
  scorer: string;
  metrics: string[] | null;
  ks: number[] | null;
  byRelation: boolean;
  bootstrap: number | null;
  seed: number;
  relationLabels: string[] | null;
}

/** The provenance `--save-state` writes into the state (RankEvaluator.serialize({ meta })). */
export interface RunMeta {
  kgrank: "evaluate";
  fingerprint: string;
  shard: number;
  shards: number;
  rows: [number, number];
  report: ReportInfo;
  /** --entity-shard I/N: the state holds partial counts over that entity shard. */
  entityShard?: { index: number; count: number };
  /** --constrain-candidates: this state holds the typed-candidate protocol's tasks (the state beside the run's). */
  candidates?: CandidateProtocol;
  /** --quadruples: this state holds one temporal setting's tasks (one of three beside --save-state). */
  temporal?: TemporalProtocol;
}

/** Results ranked against typed candidates (kgrank evaluate --constrain-candidates), and where the sets came from. */
export interface ConstrainedResults {
  results: RankResults;
  candidates: CandidateProtocol;
}

/** `--metrics all`: every metric of the catalogue, at every rank type (the full table). */
const ALL_METRICS = "all";

/** Whether a --metrics list asks for every metric (`--metrics all`). */
function allMetrics(metrics: readonly string[] | null | undefined): boolean {
  return metrics?.length === 1 && metrics[0]!.trim().toLowerCase() === ALL_METRICS;
}

/** The metrics an evaluator computes for a --metrics list: every one for none or `all` (undefined), else the list. */
export function evaluatorMetrics(metrics: readonly string[] | null | undefined): string[] | undefined {
  return !metrics || allMetrics(metrics) ? undefined : [...metrics];
}
