/**
 * Entity shards (RankEvaluatorOptions.entityShard): every task ranked against 1/N of the entities, the partial
 * counts saved, and the N states merged: the merged state must equal, byte for byte, the state of one evaluator that
 * ranked every entity, for tables in memory and read in chunks, filtered and raw, in any order of the states and
 * combined with task shards. Bad combinations are typed errors, and nothing is merged.
 */
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import {
  EmbeddingModel,
  encodeNpy,
  KgrankInputError,
  KgrankStateError,
  openEntityTable,
  RankEvaluator,
} from "../src/index";
import { decodeState, encodeState } from "../src/evaluation/state";
import { backendLabel } from "./helpers/backend";
import { randomValues } from "./helpers/embedding-reference";
import { seededTriples } from "./helpers/seeded-triples";
import { tempDir } from "./helpers/temp";

const N = 301;
const R = 7;
const D = 8;

const triples = (count: number, seed: number) => seededTriples(count, seed, N, R, 2);

const TRAIN = triples(1500, 1);
const TEST = triples(90, 2);
const dir = tempDir("kgrank-entity-shards-");

const ent = randomValues(N * 2 * D, 3, 0.5);
const rel = randomValues(R * 2 * D, 4, 0.5);
// Duplicated rows make ties across shard boundaries.
for (let r = 0; r < 40; r++) ent.copyWithin((7 * r + 100) * 2 * D, r * 2 * D, (r + 1) * 2 * D);
const entFile = path.join(dir, "entity.npy");
writeFileSync(entFile, encodeNpy(ent, [N, 2 * D]));

function model(streamed: boolean, entity = ent): EmbeddingModel {
  return new EmbeddingModel({
    interaction: "complex",
    complexLayout: "interleaved",
    entityEmbeddings: streamed ? openEntityTable(entFile) : { data: entity, shape: [N, 2 * D] },
    relationEmbeddings: { data: rel, shape: [R, 2 * D] },
  });
}

function evaluator(filtered: boolean, entityShard?: { index: number; count: number }) {
  return new RankEvaluator({
    numEntities: N,
    numRelations: R,
    ...(filtered ? { filterTriples: [TRAIN, TEST] } : {}),
    ...(entityShard ? { entityShard } : {}),
  });
}

async function shardStates(m: EmbeddingModel, filtered: boolean, count: number, rows = TEST) {
  const states: Uint8Array[] = [];
  for (let index = 0; index < count; index++) {
    const e = evaluator(filtered, { index, count });
    await e.addModel({ model: m, triples: rows, memoryBudget: 1 << 20 });
    states.push(e.serialize());
  }
  return states;
}

const bytes = (e: RankEvaluator) => Buffer.from(e.serialize());

describe(`entity shards [${backendLabel}]`, () => {
  for (const streamed of [false, true]) {
    it(`${streamed ? "a table read in chunks" : "a table in memory"}: N entity shards merge into the whole run, byte for byte`, async () => {
      for (const filtered of [true, false]) {
        const whole = evaluator(filtered);
        await whole.addModel({ model: model(streamed), triples: TEST });
        const want = bytes(RankEvaluator.merge([whole.serialize()]));
        for (const count of [1, 3, 7]) {
          const states = await shardStates(model(streamed), filtered, count);
          expect(bytes(RankEvaluator.merge(states)), `filtered ${filtered}, ${count} shards`).toEqual(want);
          expect(bytes(RankEvaluator.merge([...states].reverse()))).toEqual(want);
        }
        expect(
          RankEvaluator.merge(await shardStates(model(streamed), filtered, 3))
            .finalize()
            .toJSON(),
        ).toEqual(RankEvaluator.merge([whole.serialize()]).finalize().toJSON());
      }
    });
  }

  it("chunked slices: entity shards of given ranges (NaN columns among them) merge into the whole chunked run", () => {
    // Scores with ties and NaN columns (no candidates; never a row's true answer), the true scores read off them.
    const rows = TEST.length / 3;
    const scores = new Float64Array(rows * N);
    for (let i = 0; i < rows; i++) {
      for (let c = 0; c < N; c++) scores[i * N + c] = c % 13 === 5 ? NaN : Math.floor(((i * 31 + c * 17) % 97) / 4);
      scores[i * N + TEST[3 * i + 2]!] = (i % 9) + 3;
    }
    const trueScores = Float64Array.from({ length: rows }, (_, i) => scores[i * N + TEST[3 * i + 2]!]!);
    /** The scores of entities [s, s + w), row-major. */
    const part = (s: number, w: number) => {
      const out = new Float64Array(rows * w);
      for (let i = 0; i < rows; i++) out.set(scores.subarray(i * N + s, i * N + s + w), i * w);
      return out;
    };
    const slices = (e: RankEvaluator, lo: number, hi: number, width: number) => {
      const b = e.chunked({ triples: TEST, side: "tail", trueScores });
      for (let s = lo; s < hi; s += width) b.addSync({ scores: part(s, Math.min(width, hi - s)), entityStart: s });
      b.finish();
    };
    for (const filtered of [true, false]) {
      const base = { numEntities: N, numRelations: R, sides: "tail" as const };
      const filter = filtered ? { filterTriples: [TRAIN, TEST] } : {};
      const whole = new RankEvaluator({ ...base, ...filter });
      slices(whole, 0, N, 64);
      const want = bytes(RankEvaluator.merge([whole.serialize()]));
      for (const ranges of [
        [[0, N]],
        [
          [0, 100],
          [100, 101],
          [101, N],
        ],
      ]) {
        const states = ranges.map(([begin, end], index) => {
          const e = new RankEvaluator({
            ...base,
            ...filter,
            entityShard: { index, count: ranges.length, begin: begin!, end: end! },
          });
          slices(e, begin!, end!, 37);
          return e.serialize();
        });
        expect(bytes(RankEvaluator.merge(states)), `filtered ${filtered}, ${ranges.length} shards`).toEqual(want);
        expect(bytes(RankEvaluator.merge([...states].reverse()))).toEqual(want);
      }
      // A slice outside the shard's range, a range left uncovered, and ranges that do not tile: typed errors.
      const shard = (index: number, begin: number, end: number) =>
        new RankEvaluator({ ...base, ...filter, entityShard: { index, count: 2, begin, end } });
      const outside = shard(0, 0, 100).chunked({ triples: TEST, side: "tail", trueScores });
      expect(() => outside.addSync({ scores: part(100, 1), entityStart: 100 })).toThrow(
        /^entityStart: slice entities \[100, 101\) leave this entity shard's entities \[0, 100\)/,
      );
      const short = shard(0, 0, 100).chunked({ triples: TEST, side: "tail", trueScores });
      short.addSync({ scores: part(0, 10), entityStart: 0 });
      expect(() => short.finish()).toThrow(KgrankStateError);
      const gap = [shard(0, 0, 100), shard(1, 101, N)];
      slices(gap[0]!, 0, 100, 50);
      slices(gap[1]!, 101, N, 50);
      expect(() => RankEvaluator.merge(gap.map((e) => e.serialize()))).toThrow(
        /^states\[1\]: ranks entities \[101, 301\), but the entity shards before it end at 100/,
      );
    }
    expect(
      () => new RankEvaluator({ numEntities: N, entityShard: { index: 0, count: 2, begin: 5, end: N + 1 } }),
    ).toThrow(/^entityShard: range \[begin, end\) must be integers with 0 <= begin < end <= numEntities/);
  });

  it("a grid: task shards x entity shards merge into the whole run", async () => {
    const whole = evaluator(true);
    await whole.addModel({ model: model(true), triples: TEST });
    const grid: Uint8Array[] = [];
    for (const [lo, hi] of [
      [0, 40],
      [40, 90],
    ]) {
      grid.push(...(await shardStates(model(false), true, 3, TEST.subarray(3 * lo!, 3 * hi!))));
    }
    expect(bytes(RankEvaluator.merge(grid))).toEqual(bytes(RankEvaluator.merge([whole.serialize()])));
  });

  it("task shards whose rows were all skipped merge as empty shards, keeping their skipped counts", async () => {
    // Each task shard's states carry its number (equal states are refused as a state given twice).
    const run = async (rows: Int32Array, index: number, count: number, shard: number) => {
      const e = new RankEvaluator({
        numEntities: N,
        numRelations: R,
        restrictRelations: [0, 1],
        entityShard: { index, count },
      });
      await e.addModel({ model: model(false), triples: rows });
      return e.serialize({ meta: { shard } });
    };
    const none = Int32Array.from([5, 3, 6, 7, 4, 8]); // relations 3 and 4: skipped by the restriction
    const some = Int32Array.from([5, 0, 6, 7, 1, 8, 9, 3, 10]);
    const states: Uint8Array[] = [];
    for (const [shard, rows] of [none, some, none].entries()) {
      for (let i = 0; i < 2; i++) states.push(await run(rows, i, 2, shard));
    }
    const whole = new RankEvaluator({ numEntities: N, numRelations: R, restrictRelations: [0, 1] });
    for (const rows of [none, some, none]) await whole.addModel({ model: model(false), triples: rows });
    // The merged header is the first state's (with its meta): compare the tasks, the skipped rows and the results.
    const merged = decodeState(RankEvaluator.merge(states).serialize());
    const want = decodeState(RankEvaluator.merge([whole.serialize()]).serialize());
    expect(merged.sides).toEqual(want.sides);
    expect(merged.header.skipped).toEqual(want.header.skipped);
    expect(merged.header.skipped.tail).toBe(5); // 2 + 2 rows of the empty task shards, 1 of the other: once each
    expect(RankEvaluator.merge(states).finalize().toJSON()).toEqual(whole.finalize().toJSON());
  });

  it("a crafted partial state whose counts cannot be a rank is refused at the merge", async () => {
    const states = await shardStates(model(false), true, 2);
    const { header, sides } = decodeState(states[1]!);
    for (const t of [0, 1]) {
      // Move the true answer's own "equal" count of task t away: the shards' counts then miss the answer.
      const c = sides.tail;
      if (c.realistic[t]! >= 1) c.realistic[t] = 0;
    }
    const d0 = decodeState(states[0]!);
    for (const t of [0, 1]) if (d0.sides.tail.realistic[t]! >= 1) d0.sides.tail.realistic[t] = 0;
    expect(() => RankEvaluator.merge([encodeState(d0.header, d0.sides), encodeState(header, sides)])).toThrow(
      /states\[0\]: tail task \d+: its entity shards' counts do not add up to a rank/,
    );
  });

  it("refuses what does not add up, naming the state; nothing is merged", async () => {
    const states = await shardStates(model(false), true, 3);
    expect(() => RankEvaluator.merge([states[0]!, states[2]!])).toThrow(
      /states\[0\]: its tasks lack entity shard 1\/3/,
    );
    expect(() => RankEvaluator.merge([states[0]!, states[1]!, states[1]!.slice(), states[2]!])).toThrow(
      /states\[2\]: repeats states\[1\]/,
    );
    const other = await shardStates(model(false), true, 2);
    expect(() => RankEvaluator.merge([...states, other[0]!])).toThrow(
      /states\[3\]: is entity shard 0\/2 of the tasks of states\[0\], an entity shard of 3/,
    );
    const moved = ent.slice();
    moved[5] = moved[5]! + 0.25;
    const another = await shardStates(model(false, moved), true, 3);
    expect(() => RankEvaluator.merge([states[0]!, another[1]!, states[2]!])).toThrow(
      /states\[1\]: scores .* task \d+ .* where states\[0\] scores it .*: the entity shards come from different models or runs/,
    );
    const shard = evaluator(true, { index: 1, count: 3 });
    expect(() => shard.finalize()).toThrow(KgrankStateError);
    await shard.addModel({ model: model(false), triples: TEST });
    expect(() => shard.finalize()).toThrow(/entity shard 1\/3, whose tasks hold partial counts/);
    expect(() => shard.addSync({ triples: TEST.subarray(0, 3), side: "tail", scores: new Float32Array(N) })).toThrow(
      /entity shard 1\/3, which ranks a model's embeddings/,
    );
    expect(() => shard.addModelSync({ model: model(false), triples: TEST })).toThrow(KgrankStateError);
    await expect(
      evaluator(false, { index: 0, count: 2 }).addModel({
        model: model(false),
        triples: TEST,
        negatives: { head: TEST, tail: TEST },
      }),
    ).rejects.toThrow(/negatives: are the candidates of the OGB protocol, which has no entity shards/);
    for (const bad of [
      { index: 3, count: 3 },
      { index: 0, count: 0 },
      { index: 0, count: N + 1 },
      { index: 0.5, count: 2 },
      "0/2",
    ]) {
      expect(() => evaluator(true, bad as never)).toThrow(/entityShard: must be \{ index, count \}/);
    }
    // The value is shown as what it holds, not as "Object".
    expect(() => evaluator(true, { index: 0, count: N + 1 })).toThrow(`got { index: 0, count: ${N + 1} }`);
    expect(
      () => new RankEvaluator({ numEntities: N, restrictEntities: [1, 2], entityShard: { index: 0, count: 2 } }),
    ).toThrow(KgrankInputError);
  });
});
