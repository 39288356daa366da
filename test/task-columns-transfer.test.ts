/**
 * RankEvaluator.taskColumns hands out copies: transferring them to a worker (postMessage with a transfer list) leaves
 * the evaluator's recorded tasks, which share buffers with other batches' (ColumnArena), intact. Run with a real
 * worker_threads Worker, on each backend.
 */
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";

import { FrequencyBaseline, loadDataset, RankEvaluator } from "../src/index";
import { backendLabel } from "./helpers/backend";

/** Sums what it is sent and posts the sums back. */
const ECHO = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", (cols) => {
  const sums = {};
  for (const [k, v] of Object.entries(cols)) sums[k] = v.reduce((a, b) => a + b, 0);
  parentPort.postMessage(sums);
});
`;

function send(worker: Worker, cols: object, transfer: ArrayBuffer[]): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
    worker.postMessage(cols, transfer);
  });
}

describe(`taskColumns transferred to a worker on ${backendLabel}`, () => {
  it("leaves the evaluator's tasks whole: finalize, states and later taskColumns as before", async () => {
    const ds = loadDataset("nations");
    const { train, valid, test } = ds.splits;
    const make = () => {
      const ev = new RankEvaluator({ numEntities: ds.numEntities, filterTriples: [train, valid, test] });
      const model = new FrequencyBaseline(train, ds.numEntities, ds.numRelations);
      // Several batches per side: their columns share the evaluator's blocks.
      for (const side of ["head", "tail"] as const)
        for (let r = 0; r < test.length / 3; r += 50) {
          const triples = test.subarray(3 * r, 3 * Math.min(test.length / 3, r + 50));
          ev.addSync({ triples, side, scores: model.scoreBatch(triples, side) });
        }
      return ev;
    };
    const ev = make();
    const want = make().finalize().toJSON();
    const before = ev.taskColumns("tail");
    const realistic = Array.from(before.realistic);
    const worker = new Worker(ECHO, { eval: true });
    try {
      for (const side of ["head", "tail"] as const) {
        const cols = ev.taskColumns(side);
        const buffers = [...new Set(Object.values(cols).map((c: Float64Array | Int32Array) => c.buffer))];
        const total = cols.numCandidates.reduce((a, b) => a + b, 0);
        const sums = await send(worker, cols, buffers as ArrayBuffer[]);
        expect(sums.numCandidates).toBe(total);
        // Transferred: the views sent are detached here.
        expect(cols.realistic.length).toBe(0);
      }
    } finally {
      await worker.terminate();
    }
    // The evaluator's own tasks are untouched.
    expect(Array.from(ev.taskColumns("tail").realistic)).toEqual(realistic);
    // And a copy changed by the caller does not change them either.
    ev.taskColumns("tail").realistic.fill(1);
    expect(Array.from(ev.taskColumns("tail").realistic)).toEqual(realistic);
    const restored = RankEvaluator.deserialize(ev.serialize());
    expect(ev.finalize().toJSON()).toEqual(want);
    expect(restored.finalize().toJSON()).toEqual(want);
  });
});
