/**
 * Filtered candidate counts of a split without scores: for the tail task of (h, r, t) every entity is a candidate
 * except the other known tails t' of (h, r, ·) in the filter triples; the same for heads. These are the N_i the
 * expectations of `kgrank adjust` and `kgrank expectations` are computed over (PyKEEN's filtered setting, with the
 * evaluated split always part of the filter). The known answers come from the evaluator's own filter index (one
 * per side, native or its TypeScript twin), not from a map of their own; one answerCounts call per side counts them
 * for every row.
 */
import { kernels } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";
import { tripleArray } from "../checks/validate";

export function filteredCandidateCounts(
  evaluated: Int32Array,
  filter: Int32Array[],
  numEntities: number,
  numRelations: number,
): { head: Float64Array; tail: Float64Array } {
  tripleArray("evaluated", evaluated, numEntities, numRelations);
  filter.forEach((t, i) => tripleArray(`filter[${i}]`, t, numEntities, numRelations));
  const n = evaluated.length / 3;
  const counts = { head: new Float64Array(n), tail: new Float64Array(n) };
  for (const side of ["head", "tail"] as const) {
    const index = kernels().buildFilterIndex([...filter, evaluated], numEntities, numRelations, side);
    const out = counts[side];
    const problem = index.answerCounts(evaluated, out);
    if (problem) {
      // The ids passed the check above, so the array changed since (memory another thread writes).
      throw new KgrankInputError(
        "evaluated",
        `element ${problem.index} was out of range during the call, after the ids had been checked: the array ` +
          `changed meanwhile (memory another thread writes?); pass an array that stays unchanged, e.g. a copy`,
      );
    }
    // The true answer is among the known ones (the evaluated split filters), and stays a candidate.
    for (let i = 0; i < n; i++) out[i] = numEntities - (out[i]! - 1);
  }
  return counts;
}

/**
 * Each task's candidate count N for estimates from sampled negatives (estimateFromSampledRanks), with the negatives
 * checked against what those estimates assume: K uniform draws from the task's other N - 1 candidates. So no
 * negative is the task's own answer, none repeats in a row unless drawn with replacement, and with `filter` (the
 * negatives were drawn from the filtered candidates) none is another known answer; N is then the filtered count,
 * else every entity. `negatives` holds rows x K validated entity ids, the candidates of each evaluated triple's `side`
 * task. A violation throws naming `name` (the caller's argument), the row, the column and the fix.
 */
export function sampledNegativeCandidates(
  evaluated: Int32Array,
  negatives: Int32Array,
  side: "head" | "tail",
  numEntities: number,
  numRelations: number,
  filter: Int32Array[] | null,
  replacement: boolean,
  name: string,
): Float64Array {
  const rows = evaluated.length / 3;
  const k = negatives.length / rows;
  const index = filter ? kernels().buildFilterIndex([...filter, evaluated], numEntities, numRelations, side) : null;
  const out = new Float64Array(rows);
  const own = side === "head" ? 0 : 2;
  const anchorAt = side === "head" ? 2 : 0;
  const seen = new Int32Array(numEntities).fill(-1); // the last row that drew each entity
  for (let i = 0; i < rows; i++) {
    const truth = evaluated[3 * i + own]!;
    const answers = index ? index.answers(evaluated[3 * i + anchorAt]!, evaluated[3 * i + 1]!) : null;
    const known = answers ? new Set(answers) : null;
    out[i] = answers ? numEntities - answers.length + 1 : numEntities;
    for (let c = 0; c < k; c++) {
      const e = negatives[i * k + c]!;
      const where = `row ${i}, column ${c}: entity ${e}`;
      if (e === truth) {
        throw new KgrankInputError(
          name,
          `${where} is the triple's own ${side}: the estimates assume negatives drawn from the other candidates; ` +
            `draw them without the true ${side}`,
        );
      }
      if (known?.has(e)) {
        throw new KgrankInputError(
          name,
          `${where} is another known ${side} of the triple's query (in the filter), but the negatives are taken ` +
            `as drawn from the filtered candidates: draw them from entities that are not known answers, or take ` +
            `them as drawn from every entity (unfiltered)`,
        );
      }
      if (!replacement) {
        if (seen[e] === i) {
          throw new KgrankInputError(
            name,
            `${where} appears twice in the row, but the negatives are taken as drawn without replacement: ` +
              `say they were drawn with replacement, or draw each row without repeats`,
          );
        }
        seen[e] = i;
      }
    }
  }
  return out;
}
