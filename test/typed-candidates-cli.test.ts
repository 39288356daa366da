/**
 * Typed candidates from files and in the CLI: the candidate-file format (lists and types with domain / range) against
 * sets written out here, `kgrank evaluate --constrain-candidates train|FILE` against the library's evaluator on the
 * frequency baseline's scores, its states (beside --save-state), merge and compare of them, and every user error
 * (file, line and fix; flags it does not go with).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

import {
  CandidateSets,
  EmbeddingModel,
  FrequencyBaseline,
  loadDataset,
  parseCandidateText,
  RankEvaluator,
  writeNpy,
} from "../src/index";
import { backendLabel } from "./helpers/backend";
import { expectUserError, kgrank } from "./helpers/cli";
import { randomValues } from "./helpers/embedding-reference";
import { expectInputError } from "./helpers/errors";
import { modelScoreMatrix } from "./helpers/model-scores";
import { KgrankInputError } from "../src/checks/errors";
import { tempDir } from "./helpers/temp";

describe(`typed candidates in files and the CLI on ${backendLabel}`, () => {
  const ds = loadDataset("nations");
  const E = ds.entityLabels;
  const R = ds.relationLabels;
  const labels = { entityLabels: E, relationLabels: R };

  it("reads head / tail lists and entity types with domain / range, the union per relation and side", () => {
    const text = [
      "# typed candidates for two relations",
      `type\t${E[0]}\tcountry\tbig`,
      `type\t${E[1]}\tcountry`,
      `type\t${E[2]}\tbig`,
      `domain\t${R[0]}\tcountry`,
      `range\t${R[0]}\tbig`,
      `tail\t${R[0]}\t${E[5]}\t${E[6]}`,
      "",
      `head\t${R[1]}\t${E[7]}\r`,
      `tail\t${R[1]}\t${E[8]}`,
    ].join("\n");
    const sets = parseCandidateText(text, { ...labels, name: "types.tsv" });
    expect(Array.from(sets.allowed("head", 0))).toEqual([0, 1]);
    expect(Array.from(sets.allowed("tail", 0))).toEqual([0, 2, 5, 6]);
    expect(Array.from(sets.allowed("head", 1))).toEqual([7]);
    expect(Array.from(sets.allowed("tail", 1))).toEqual([8]);
    expect(sets.size("head", 2)).toBe(0);
    expect(sets.source).toBe("types.tsv");
    expect(sets.pairs).toBe(8);
  });

  it("names the file, the line and the fix for every malformed line", () => {
    const bad: [string, RegExp][] = [
      [`member\t${R[0]}\t${E[0]}`, /f\.tsv line 1: starts with "member", not one of head, tail, type, domain, range/],
      [`head\t${R[0]}`, /f\.tsv line 1: needs head<TAB>RELATION<TAB>ENTITY/],
      [`head\t${R[0]}\t\t${E[0]}`, /line 1: needs .*no empty field/],
      [
        `# c\nhead\tnot-a-relation\t${E[0]}`,
        /f\.tsv line 2: relation "not-a-relation" is not one of the dataset's relations/,
      ],
      [`tail\t${R[0]}\tatlantis`, /line 1: entity "atlantis" is not one of the dataset's entities: use its label/],
      [`type\tatlantis\tcountry`, /line 1: entity "atlantis"/],
      [`domain\t${R[0]}\tplanet`, /line 1: type "planet" has no entity: give type lines/],
      ["# only a comment\n\n", /f\.tsv has no head, tail, type, domain or range line/],
    ];
    for (const [text, message] of bad)
      expectInputError(() => parseCandidateText(text, { ...labels, name: "f.tsv", argument: "file" }), "file", message);
  });

  it("parses any mix of statements as the definition says, or refuses it with a typed error (property)", () => {
    const ent = ["e0", "e1", "e2", "e3"];
    const rel = ["r0", "r1"];
    const token = (valid: string[]) => fc.oneof(fc.constantFrom(...valid), fc.constantFrom("", "zz", " e0", "#"));
    const statement = fc.oneof(
      fc.tuple(fc.constantFrom("head", "tail"), token(rel), fc.array(token(ent), { minLength: 0, maxLength: 3 })),
      fc.tuple(fc.constant("type"), token(ent), fc.array(token(["t0", "t1"]), { minLength: 0, maxLength: 2 })),
      fc.tuple(
        fc.constantFrom("domain", "range", "hed"),
        token(rel),
        fc.array(token(["t0", "t1", "t9"]), { maxLength: 2 }),
      ),
    );
    fc.assert(
      fc.property(fc.array(statement, { maxLength: 8 }), fc.constantFrom("\n", "\r\n"), (lines, eol) => {
        const text = lines.map(([k, a, rest]) => [k, a, ...rest].join("\t")).join(eol);
        const parse = (): CandidateSets | KgrankInputError => {
          try {
            return parseCandidateText(text, {
              entityLabels: ent,
              relationLabels: rel,
              name: "p.tsv",
              argument: "file",
            });
          } catch (e) {
            expect(e, String(e)).toBeInstanceOf(KgrankInputError);
            return e as KgrankInputError;
          }
        };
        const got = parse();
        if (got instanceof KgrankInputError) {
          expect(got.argument).toBe("file");
          expect(got.message.length).toBeLessThan(600);
          return;
        }
        // Accepted: every statement was well formed, and the sets are the union the definition gives.
        const types = new Map<string, Set<number>>();
        const want = { head: rel.map(() => new Set<number>()), tail: rel.map(() => new Set<number>()) };
        const clean = (xs: string[]) => xs.map((x) => x.trim());
        for (const [k, a, rest] of lines) {
          if (k === "type")
            for (const t of clean(rest)) (types.get(t) ?? types.set(t, new Set()).get(t)!).add(ent.indexOf(a.trim()));
        }
        for (const [k, a, rest] of lines) {
          const r = rel.indexOf(a.trim());
          if (k === "head" || k === "tail") for (const e of clean(rest)) want[k][r]!.add(ent.indexOf(e));
          if (k === "domain" || k === "range")
            for (const t of clean(rest))
              for (const e of types.get(t)!) want[k === "domain" ? "head" : "tail"][r]!.add(e);
        }
        for (const side of ["head", "tail"] as const)
          for (let r = 0; r < rel.length; r++)
            expect(Array.from(got.allowed(side, r))).toEqual([...want[side][r]!].sort((x, y) => x - y));
      }),
      { numRuns: 300, seed: 27 },
    );
  });

  /** The library's numbers for the frequency baseline on Nations test, filtered, against these sets. */
  function libraryResults(sets: CandidateSets) {
    const { train, valid, test } = ds.splits;
    const ev = new RankEvaluator({
      numEntities: ds.numEntities,
      numRelations: ds.numRelations,
      filterTriples: [train, valid, test],
      candidates: sets,
    });
    const baseline = new FrequencyBaseline(train, ds.numEntities, ds.numRelations);
    for (const side of ["head", "tail"] as const)
      ev.addSync({ triples: test, side, scores: baseline.scoreBatch(test, side) });
    return ev.finalize().toJSON();
  }

  it("evaluate --constrain-candidates train|FILE: the library's numbers beside the unconstrained ones", async () => {
    const dir = tempDir("typed-cli");
    const plain = JSON.parse((await kgrank(["evaluate", "--format", "json"], dir)).stdout);
    const run = await kgrank(["evaluate", "--constrain-candidates", "train", "--format", "json"], dir);
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout);
    // The unconstrained results are as without the flag; the constrained ones are the library's.
    expect(out.results).toEqual(plain.results);
    const train = CandidateSets.fromTriples(ds.splits.train, {
      numEntities: ds.numEntities,
      numRelations: ds.numRelations,
    });
    expect(out.constrained.results).toEqual(libraryResults(train));
    expect(out.constrained.candidates).toEqual({ source: "train", fingerprint: train.fingerprint, pairs: train.pairs });
    // Fewer candidates: the random expectation of MR drops.
    expect(out.constrained.expected.both.arithmetic_mean_rank).toBeLessThan(out.expected.both.arithmetic_mean_rank);
    // A file listing every relation's training heads and tails gives the same sets, so the same numbers.
    const lines: string[] = [];
    for (let r = 0; r < ds.numRelations; r++) {
      lines.push(["head", R[r], ...Array.from(train.allowed("head", r), (e) => E[e])].join("\t"));
      lines.push(["tail", R[r], ...Array.from(train.allowed("tail", r), (e) => E[e])].join("\t"));
    }
    writeFileSync(path.join(dir, "seen.tsv"), lines.join("\n") + "\n");
    const fromFile = JSON.parse(
      (await kgrank(["evaluate", "--constrain-candidates", "seen.tsv", "--format", "json"], dir)).stdout,
    );
    expect(fromFile.constrained.results).toEqual(out.constrained.results);
    expect(fromFile.constrained.candidates.fingerprint).toBe(train.fingerprint);
    // The text output shows both tables, the typed one under its heading.
    const text = (await kgrank(["evaluate", "--constrain-candidates", "train", "--metrics", "mrr"], dir)).stdout;
    expect(text).toMatch(/Typed candidates \(the heads and tails each relation has in train; \d+ allowed/);
    expect(text.match(/inverse_harmonic_mean_rank/g)).toHaveLength(2);
  });

  it("evaluate --model-dir --constrain-candidates: the numbers of the model's score files, bit for bit", async () => {
    const dir = tempDir("typed-model");
    // A grid of quarters: many exact ties.
    const entity = randomValues(ds.numEntities * 8, 41).map((x) => Math.round(4 * x) / 4);
    const relation = randomValues(ds.numRelations * 8, 42);
    const model = new EmbeddingModel({
      interaction: "distmult",
      entityEmbeddings: { data: entity, shape: [ds.numEntities, 8] },
      relationEmbeddings: { data: relation, shape: [ds.numRelations, 8] },
    });
    mkdirSync(path.join(dir, "model"));
    writeNpy(path.join(dir, "model", "entity_embedding.npy"), entity, [ds.numEntities, 8]);
    writeNpy(path.join(dir, "model", "relation_embedding.npy"), relation, [ds.numRelations, 8]);
    writeFileSync(
      path.join(dir, "model", "config.json"),
      JSON.stringify({ model: "DistMult", hidden_dim: 8, gamma: 0 }),
    );
    const test = ds.splits.test;
    for (const side of ["head", "tail"] as const)
      writeNpy(path.join(dir, `${side}.npy`), modelScoreMatrix(model, test, side) as Float32Array, [
        test.length / 3,
        ds.numEntities,
      ]);
    // Nations' ids, and a sparse file whose sets leave out many true answers (and one relation with one entity).
    const lines: string[] = [];
    for (let r = 0; r < ds.numRelations; r++) {
      lines.push(["head", R[r], ...E.filter((_, e) => (e + r) % 3 === 0)].join("\t"));
      lines.push(
        ["tail", R[r], ...(r === 0 ? [E[5]!] : E.filter((_, e) => (e * r) % 4 === 1 || e === r % 7))].join("\t"),
      );
    }
    writeFileSync(path.join(dir, "sparse.tsv"), lines.join("\n") + "\n");
    for (const sets of ["train", "sparse.tsv"]) {
      // --metrics all / a list: the typed evaluator takes the metrics the main one takes, whatever the score source.
      for (const filter of [[], ["--filter", "none"], ["--metrics", "all"], ["--metrics", "mrr,hits@10"]]) {
        const common = ["evaluate", "--dataset", "nations", "--constrain-candidates", sets, ...filter];
        const fromModel = await kgrank([...common, "--model-dir", "model", "--format", "json", "-q"], dir);
        expect(fromModel.status, fromModel.stderr).toBe(0);
        const fromFiles = await kgrank(
          [...common, "--scores-head", "head.npy", "--scores-tail", "tail.npy", "--format", "json", "-q"],
          dir,
        );
        expect(fromFiles.status, fromFiles.stderr).toBe(0);
        const a = JSON.parse(fromModel.stdout);
        const b = JSON.parse(fromFiles.stdout);
        expect(a.constrained, `${sets} ${filter.join(" ")}`).toEqual(b.constrained);
        expect(a.results).toEqual(b.results);
        expect(a.constrained.results.both.realistic.inverse_harmonic_mean_rank).not.toBe(
          a.results.both.realistic.inverse_harmonic_mean_rank,
        );
      }
    }
    // --ranks-out and states: the typed state beside --save-state holds the same tasks.
    for (const [name, flags] of [
      ["m", ["--model-dir", "model"]],
      ["f", ["--scores-head", "head.npy", "--scores-tail", "tail.npy"]],
    ] as const) {
      const r = await kgrank(
        [
          "evaluate",
          "--dataset",
          "nations",
          "--constrain-candidates",
          "sparse.tsv",
          ...flags,
          "--save-state",
          `${name}.kgrs`,
          "-q",
        ],
        dir,
      );
      expect(r.status, r.stderr).toBe(0);
    }
    const states = ["m", "f"].map((n) =>
      RankEvaluator.deserialize(readFileSync(path.join(dir, `${n}.constrained.kgrs`))),
    );
    for (const side of ["head", "tail"] as const)
      for (const key of ["optimistic", "pessimistic", "numCandidates"] as const)
        expect(Array.from(states[0]!.taskColumns(side)[key])).toEqual(Array.from(states[1]!.taskColumns(side)[key]));
  });

  it("saves the typed protocol's state beside --save-state; its shards merge, protocols never mix", async () => {
    const dir = tempDir("typed-state");
    const whole = JSON.parse(
      (await kgrank(["evaluate", "--constrain-candidates", "train", "--format", "json"], dir)).stdout,
    );
    for (const i of [0, 1]) {
      const r = await kgrank(
        ["evaluate", "--constrain-candidates", "train", "--shard", `${i}/2`, "--save-state", `s${i}.kgrs`],
        dir,
      );
      expect(r.status, r.stderr).toBe(0);
    }
    const merged = await kgrank(["merge", "s0.constrained.kgrs", "s1.constrained.kgrs", "--format", "json"], dir);
    expect(merged.status, merged.stderr).toBe(0);
    expect(JSON.parse(merged.stdout).results).toEqual(whole.constrained.results);
    const plain = await kgrank(["merge", "s0.kgrs", "s1.kgrs", "--format", "json"], dir);
    expect(JSON.parse(plain.stdout).results).toEqual(whole.results);
    expectUserError(
      await kgrank(["merge", "s0.kgrs", "s1.constrained.kgrs"], dir),
      /s1\.constrained\.kgrs: was ranked against typed candidates train \(fingerprint [0-9a-f]{16}\), s0\.kgrs against every entity: merge the shards of each protocol separately/,
    );
    await kgrank(["evaluate", "--constrain-candidates", "train", "--save-state", "w.kgrs", "-q"], dir);
    expectUserError(
      await kgrank(["compare", "w.kgrs", "w.constrained.kgrs", "--samples", "100"], dir),
      /runs: w\.constrained\.kgrs was ranked against typed candidates train .*every entity.*compare runs of one protocol/,
    );
  });

  it("refuses the flags it does not go with, and a file that does not read", async () => {
    const dir = tempDir("typed-refuse");
    writeFileSync(path.join(dir, "bad.tsv"), `tail\t${R[0]}\tatlantis\n`);
    const cases: [string[], RegExp][] = [
      [["--constrain-candidates", "bad.tsv"], /^kgrank: --constrain-candidates: bad\.tsv line 1: entity "atlantis"/],
      [["--constrain-candidates", "missing.tsv"], /^kgrank: --constrain-candidates: .*missing\.tsv/],
      [["--constrain-candidates", "train", "--sample-tasks", "50"], /does not go with --sample-tasks/],
      [["--constrain-candidates", "train", "--workers", "2"], /does not go with --workers/],
      [
        ["--constrain-candidates", "train", "--dataset", "nations", "--model-dir", "model", "--memory", "64MiB"],
        /does not go with --memory: a model's typed candidates are gathered .*drop --memory/,
      ],
      [
        ["--constrain-candidates", "train", "--dataset", "nations", "--model-dir", "model", "--negatives-ids", "n.npy"],
        /does not go with --negatives-ids: sampled negatives are a candidate set of their own/,
      ],
    ];
    for (const [args, message] of cases) expectUserError(await kgrank(["evaluate", ...args], dir), message);
    expectUserError(
      await kgrank(["evaluate", "--constrain-candidates", "train", "--sides", "relation"], dir),
      /^kgrank: --constrain-candidates: constrains head and tail tasks, and this run ranks none/,
    );
    // A file that allows heads only: the tail tasks' relations are named by label before anything is ranked.
    writeFileSync(path.join(dir, "heads.tsv"), R.map((r) => `head\t${r}\t${E[0]}`).join("\n") + "\n");
    expectUserError(
      await kgrank(["evaluate", "--constrain-candidates", "heads.tsv"], dir),
      new RegExp(
        `^kgrank: --constrain-candidates: relation "${R[ds.splits.test[1]!]}" allows no tail in heads\\.tsv, and the split has its tail tasks: give it tail or range lines`,
      ),
    );
  });
});
