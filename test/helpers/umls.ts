/**
 * The UMLS fixture of the evaluator tests: the bundled dataset (135 entities, 46 relations) read by the test-side TSV
 * loader (helpers/datasets.ts, independent of src/io), with its sizes and splits named once.
 */
import { loadBundled, type MappedDataset } from "./datasets";

export interface UmlsFixture {
  dataset: MappedDataset;
  /** Number of entities. */
  N: number;
  /** Number of relations. */
  R: number;
  train: Int32Array;
  valid: Int32Array;
  test: Int32Array;
  /** train, valid and test: the filter of the filtered setting. */
  all: Int32Array[];
}

let cached: UmlsFixture | null = null;

export function umls(): UmlsFixture {
  if (cached) return cached;
  const dataset = loadBundled("umls");
  const { train, valid, test } = dataset.splits;
  cached = {
    dataset,
    N: dataset.entities.length,
    R: dataset.relations.length,
    train,
    valid,
    test,
    all: [train, valid, test],
  };
  return cached;
}
