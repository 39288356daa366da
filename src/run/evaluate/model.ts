/**
 * `kgrank evaluate` from a model's embeddings (--model-dir, or --interaction with the embedding files): in memory or
 * read in chunks within --memory, against every entity, an entity shard, or the given negatives (--negatives-ids).
 */
import { backendInfo } from "../../backend/backend";
import { KgrankInputError } from "../../checks/errors";
import { turn } from "../../contract/event-loop";
import { readArray } from "../../io/array-file";
import { expectShape } from "../arrays";
import type { TaskSide } from "../datasets";
import {
  cliModelError,
  copyOfFlags,
  loadModelWithin,
  memoryNotice,
  screenLine,
  screenWithin,
  useQuantized,
} from "../model-flags";
import { Progress } from "../progress";
import { type RunContext, runEvaluator, runFilter } from "./context";
import { sampledEstimatePlan } from "./estimate-full";
import { directoryFingerprints, finish, inputFingerprints } from "./finish";
import { entitySides, relationSide } from "./options";
import { typedCandidatesEvaluator } from "./typed-candidates";

/** Rows per addModel call: a progress step that keeps the query vectors small (rows x dim). */
const MODEL_ROWS = 512;

/** `kgrank evaluate` from a model's embeddings: the kernel scores and counts; batches of rows for the progress bar. */
export async function evaluateModel(run: RunContext): Promise<void> {
  const { opts, ds, evaluated, rows, lo, hi, shard } = run;
  const n = ds.numEntities;
  const model = loadModelWithin(
    opts,
    ds,
    opts.memory,
    opts.mayRead ? { mayRead: opts.mayRead } : {},
    copyOfFlags(opts),
  );
  // --memory with a table too large to read whole: the table is read in chunks, every row in one call.
  const chunked = model.entitySource !== null;
  const asked = useQuantized(model, opts.quantized, opts.screen);
  // The entity rows this process ranks (its shard's rows on each side, or the sample; none against OGB negatives).
  const ranked = opts.negativesIds ? 0 : run.sample ? run.sample.sampled : (hi - lo) * entitySides(opts).length;
  const screen = screenWithin(model, opts.memory, asked, opts.quantized, ranked);
  let negatives: Int32Array | null = null;
  let k = 0;
  if (opts.negativesIds) {
    const neg = readArray(opts.negativesIds, "--negatives-ids");
    if (!/^[iu]/.test(neg.dtype))
      throw new KgrankInputError(
        "--negatives-ids",
        `dtype ${neg.dtype} is not an integer type: save entity ids as int32 or int64`,
      );
    expectShape(neg, [rows, -1], "--negatives-ids", `one row of K entity ids per ${opts.split} triple`);
    k = neg.shape[1]!;
    if (k === 0)
      throw new KgrankInputError(
        "--negatives-ids",
        `has shape (${rows}, 0): give at least one entity id per ${opts.split} triple`,
      );
    // The range check reads the stored value (int64 and uint64 arrive as exact numbers up to 2^53), before Int32Array
    // would wrap it modulo 2^32.
    const ids = neg.data as ArrayLike<number>;
    negatives = new Int32Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const v = ids[i]!;
      if (!(v >= 0 && v < n))
        throw new KgrankInputError(
          "--negatives-ids",
          `row ${Math.floor(i / k)}, column ${i % k}: entity id ${v} is outside [0, ${n}) of ${ds.name}'s entity ids`,
        );
      negatives[i] = v;
    }
  }
  const filter = runFilter(run, negatives !== null);
  const sides: TaskSide[] = entitySides(opts);
  const relation = relationSide(opts);
  const estimating = negatives && opts.estimateFull ? sampledEstimatePlan(run, negatives, k, sides) : null;
  if (opts.entityShard && opts.entityShard.count > n) {
    const { index, count } = opts.entityShard;
    throw new KgrankInputError(
      "--entity-shard",
      `${index}/${count} splits ${ds.name}'s ${n} entities into ${count} shards: N must be at most ${n}, each entity shard ranking against at least one entity`,
    );
  }
  const evaluator = runEvaluator(run, filter.triples, sides, relation, opts.entityShard);
  const constrained = typedCandidatesEvaluator(opts, ds, filter.triples, sides, evaluated.subarray(3 * lo, 3 * hi));
  const label =
    `scoring ${ds.name} ${opts.split}${shard ? ` shard ${shard.index}/${shard.count}` : ""}` +
    `${opts.entityShard ? ` entity shard ${opts.entityShard.index}/${opts.entityShard.count}` : ""} from embeddings`;
  const total = run.sample ? run.sample.sampled : (hi - lo) * (sides.length + (relation ? 1 : 0));
  const progress = new Progress(label, total, { quiet: opts.quiet, report: run.out.progress });
  const plan = chunked ? memoryNotice(run.out, opts.quiet) : undefined;
  try {
    if (run.sample && chunked) {
      // A sample's sides hold other triples: one call per side, each reading the table once per query block.
      for (const side of sides) {
        if (run.sample[side].length === 0) continue; // a small sample may draw no task of a side
        let ticked = 0;
        await evaluator
          .addModel({
            model,
            triples: run.sample[side],
            side,
            screen,
            memoryBudget: opts.memory,
            ...(plan ? { onPlan: plan } : {}),
            onProgress: ({ done }) => {
              progress.tick(done - ticked);
              ticked = done;
            },
          })
          .catch((e: unknown) => {
            throw cliModelError(e, opts);
          });
      }
    } else if ((chunked || opts.entityShard) && hi > lo) {
      // One call for every row and every side ranked: the table is read once per query block that --memory allows.
      let ticked = 0;
      await evaluator
        .addModel({
          model,
          triples: evaluated.subarray(3 * lo, 3 * hi),
          screen,
          ...(chunked ? { memoryBudget: opts.memory } : {}),
          ...(plan ? { onPlan: plan } : {}),
          ...(negatives
            ? { negatives: { head: negatives.subarray(lo * k, hi * k), tail: negatives.subarray(lo * k, hi * k) } }
            : {}),
          onProgress: ({ done }) => {
            progress.tick(done - ticked);
            ticked = done;
          },
        })
        .catch((e: unknown) => {
          throw cliModelError(e, opts);
        });
    }
    const ranked: TaskSide[] = chunked || opts.entityShard ? [] : sides;
    for (const side of relation ? [...ranked, "relation" as const] : ranked) {
      const own =
        side === "relation"
          ? evaluated.subarray(3 * lo, 3 * hi)
          : run.sample
            ? run.sample[side]
            : evaluated.subarray(3 * lo, 3 * hi);
      for (let start = 0; start < own.length / 3; start += MODEL_ROWS) {
        const end = Math.min(own.length / 3, start + MODEL_ROWS);
        const triples = own.subarray(3 * start, 3 * end);
        await evaluator
          .addModel({
            model,
            triples,
            side,
            screen,
            ...(negatives ? { negatives: negatives.subarray((lo + start) * k, (lo + end) * k) } : {}),
          })
          .catch((e: unknown) => {
            throw cliModelError(e, opts);
          });
        if (constrained && side !== "relation")
          await constrained.addModel({ model, triples, side }).catch((e: unknown) => {
            throw cliModelError(e, opts);
          });
        progress.tick(end - start);
        await turn();
      }
    }
  } finally {
    progress.stop();
  }
  const stats = model.screenStats;
  // In the JSON with --verbose only: without it, the output stays byte for byte what a merge of shards prints.
  // The kernel that screened (backendInfo().screenKernel: "amx", "avx512-vnni", ...), null where none did.
  const kernel = stats.calls > 0 ? (backendInfo().screenKernel ?? null) : null;
  if (opts.verbose) run.screen = { mode: asked, kernel, ...stats };
  if (opts.verbose && !opts.quiet) {
    run.out.stderr(screenLine(asked, model));
  }
  const setting = negatives ? `OGB protocol: ${k} given negatives per triple (unfiltered)` : filter.setting;
  const scorerName = `${model.interaction} from embeddings (${model.entityWidth} columns, ${model.precision})`;
  const modelFiles = await inputFingerprints(
    opts,
    [opts.triples, opts.entityEmbeddings, opts.relationEmbeddings, opts.entityIds, opts.relationIds, opts.negativesIds],
    ["--triples", "--entity-embeddings", "--relation-embeddings", "--entity-ids", "--relation-ids", "--negatives-ids"],
  );
  const dirFiles = opts.modelDir && opts.saveState ? await directoryFingerprints(opts.modelDir) : null;
  await finish(
    { ...run, estimating },
    evaluator,
    scorerName,
    setting,
    filter.splits,
    [...modelFiles, dirFiles],
    constrained,
  );
}
