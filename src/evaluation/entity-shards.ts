/**
 * Entity shards: an evaluator with `entityShard: { index, count }` ranks each task against the entities
 * [floor(index x E / count), floor((index + 1) x E / count)) only (or the [begin, end) it is given: a PyTorch-BigGraph
 * checkpoint's shards follow its partitions), from a model's embeddings or chunked slices, and keeps the task's
 * partial counts; merging the `count` shards' states of the same tasks adds the counts into the exact ranks of one
 * run over every entity (the counts are integers, and each (query, entity) score is the same wherever its entity row
 * is). A partial state stores its counts in the task columns, read as:
 *   optimistic = candidates scoring above the true score, realistic = equal to it (the true answer among them when
 *   it lies in the range), pessimistic = NaN scores (no candidates: 0 from embeddings, which refuse NaN; the
 *   columns a chunked slice leaves NaN, e.g. other entity types), numCandidates = known answers
 *   taken out of the range by the filter, weight = the true score (equal in every shard: checked at the merge).
 */
import { createHash } from "node:crypto";

import { KgrankInputError } from "../checks/errors";
import { describe, entityRange, entityShardOf, headerShardRange } from "../checks/validate";
import { ranksFromCounts } from "../ranking/ranks";
import type { DecodedState } from "./state";
import type { TaskColumns } from "./task-buffer";

/** An entity shard, checked: its index, count and entity range [begin, end); `given` when the range was given. */
export interface EntityShard {
  index: number;
  count: number;
  begin: number;
  end: number;
  given: boolean;
}

/** An entity shard as a state header records it: index and count, and its range when it is not the even split. */
export function entityShardHeader(s: EntityShard): { index: number; count: number; begin?: number; end?: number } {
  return s.given ? { index: s.index, count: s.count, begin: s.begin, end: s.end } : { index: s.index, count: s.count };
}

/** An entityShard value in an error: its index and count where it has them, not just "Object". */
function shownShard(value: unknown): string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return describe(value);
  const { index, count } = value as { index?: unknown; count?: unknown };
  return `{ index: ${describe(index)}, count: ${describe(count)} }`;
}

/** RankEvaluatorOptions.entityShard checked (null when absent). */
export function entityShardOption(value: unknown, numEntities: number): EntityShard | null {
  if (value === undefined) return null;
  const ranged =
    typeof value === "object" && value !== null && !Array.isArray(value) && ("begin" in value || "end" in value);
  const { begin: _b, end: _e, ...plain } = ranged ? (value as { begin?: unknown; end?: unknown }) : {};
  const shard = entityShardOf(ranged ? plain : value, numEntities);
  if (!shard) {
    throw new KgrankInputError(
      "entityShard",
      `must be { index, count } (or { index, count, begin, end }) with integers 0 <= index < count <= numEntities ` +
        `(${numEntities}), got ${shownShard(value)}`,
    );
  }
  const { index, count } = shard;
  if (!ranged) {
    const [begin, end] = entityRange(index, count, numEntities);
    return { index, count, begin, end, given: false };
  }
  const range = headerShardRange(value, numEntities);
  if (!range) {
    const { begin, end } = value as { begin?: unknown; end?: unknown };
    throw new KgrankInputError(
      "entityShard",
      `range [begin, end) must be integers with 0 <= begin < end <= numEntities (${numEntities}), got ` +
        `begin ${describe(begin)}, end ${describe(end)}: the shards' ranges must tile the entities in index order`,
    );
  }
  return { index, count, begin: range[0], end: range[1], given: true };
}

/** The partial task columns of an entity shard from the embedding kernel's output (greater | equal | nan | removed | true score). */
export function partialColumns(
  out: Float64Array,
  rows: number,
  relation: Int32Array,
  anchor: Int32Array,
  truth: Int32Array,
): TaskColumns {
  const col = (k: number) => out.slice(k * rows, (k + 1) * rows);
  return {
    optimistic: col(0),
    realistic: col(1),
    pessimistic: col(2),
    numCandidates: col(3),
    weight: col(4),
    relation,
    anchor,
    truth,
  };
}

function keysDigest(d: DecodedState): string {
  const h = createHash("sha256");
  for (const side of ["head", "tail"] as const) {
    const c = d.sides[side];
    h.update(`${side}:${c.relation.length};`);
    for (const a of [c.relation, c.anchor, c.truth]) h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  }
  return h.digest("hex");
}

/**
 * Merges the entity shards among `decoded` (shards' states, in order): the states of the same tasks (equal task keys)
 * must be every entity shard of one count once, with equal true scores; each such group becomes one state of exact
 * ranks, at the place of its first member. States without an entity shard pass through. Errors name `states[i]`.
 */
export function combineEntityShards(decoded: DecodedState[]): DecodedState[] {
  if (!decoded.some((d) => d.header.entityShard)) return decoded;
  const groups = new Map<string, { members: { d: DecodedState; i: number }[] }>();
  const order: (DecodedState | { members: { d: DecodedState; i: number }[] })[] = [];
  decoded.forEach((d, i) => {
    if (!d.header.entityShard) {
      order.push(d);
      return;
    }
    const key = keysDigest(d);
    let g = groups.get(key);
    if (!g) {
      g = { members: [] };
      groups.set(key, g);
      order.push(g);
    }
    g.members.push({ d, i });
  });
  return order.flatMap((g) => ("members" in g ? (emptyGroups(g.members) ?? [sumGroup(g.members)]) : [g]));
}

/**
 * Task shards without tasks (every row skipped, or more shards than rows) have equal (empty) keys: their entity
 * shards land in one group. Such a group is c states of each entity shard index, c task shards: each becomes one
 * empty state keeping its rows skipped. Null for a group with tasks.
 */
function emptyGroups(members: { d: DecodedState; i: number }[]): DecodedState[] | null {
  const first = members[0]!.d;
  if (first.sides.head.relation.length + first.sides.tail.relation.length > 0) return null;
  const count = first.header.entityShard!.count;
  const perIndex = new Map<number, { d: DecodedState; i: number }[]>();
  for (const m of members) {
    const k = m.d.header.entityShard!.index;
    perIndex.set(k, [...(perIndex.get(k) ?? []), m]);
  }
  const copies = perIndex.get(0)?.length ?? 0;
  const even = perIndex.size === count && [...perIndex.values()].every((l) => l.length === copies);
  if (!even || members.some((m) => m.d.header.entityShard!.count !== count)) return null; // sumGroup says what is wrong
  return perIndex.get(0)!.map(({ d }) => {
    const { entityShard: _shard, ...header } = d.header;
    return { header, sides: d.sides };
  });
}

function sumGroup(members: { d: DecodedState; i: number }[]): DecodedState {
  const first = members[0]!;
  const count = first.d.header.entityShard!.count;
  const byIndex = new Map<number, number>();
  for (const { d, i } of members) {
    const s = d.header.entityShard!;
    if (s.count !== count) {
      throw new KgrankInputError(
        `states[${i}]`,
        `is entity shard ${s.index}/${s.count} of the tasks of states[${first.i}], an entity shard of ${count}: ` +
          `give the shards of one split of the entities`,
      );
    }
    const twin = byIndex.get(s.index);
    if (twin !== undefined) {
      throw new KgrankInputError(
        `states[${i}]`,
        `is entity shard ${s.index}/${count} of the same tasks as states[${twin}]: give each entity shard once`,
      );
    }
    byIndex.set(s.index, i);
  }
  const missing = Array.from({ length: count }, (_, k) => k).filter((k) => !byIndex.has(k));
  if (missing.length > 0) {
    throw new KgrankInputError(
      `states[${first.i}]`,
      `its tasks lack entity shard${missing.length > 1 ? "s" : ""} ${missing
        .slice(0, 10)
        .map((k) => `${k}/${count}`)
        .join(
          ", ",
        )}${missing.length > 10 ? ", ..." : ""}: every entity shard of the tasks is needed; nothing was merged`,
    );
  }
  const n = first.d.header.numEntities;
  // The shards' ranges, in index order, must tile [0, numEntities): every entity counted once.
  const ranges = [...members]
    .sort((a, b) => a.d.header.entityShard!.index - b.d.header.entityShard!.index)
    .map((m) => ({ i: m.i, range: headerShardRange(m.d.header.entityShard, n)! }));
  let at = 0;
  for (const { i, range } of ranges) {
    if (range[0] !== at) {
      throw new KgrankInputError(
        `states[${i}]`,
        `ranks entities [${range[0]}, ${range[1]}), but the entity shards before it end at ${at}: the states do not ` +
          `split one run's entities; nothing was merged`,
      );
    }
    at = range[1];
  }
  if (at !== n) {
    throw new KgrankInputError(
      `states[${ranges[ranges.length - 1]!.i}]`,
      `the entity shards end at entity ${at}, not at numEntities ${n}: the states do not split one run's entities; nothing was merged`,
    );
  }
  const sides = {} as { head: TaskColumns; tail: TaskColumns };
  for (const side of ["head", "tail"] as const) {
    const base = first.d.sides[side];
    const rows = base.relation.length;
    const greater = new Float64Array(rows);
    const equal = new Float64Array(rows);
    const nan = new Float64Array(rows);
    const removed = new Float64Array(rows);
    for (const { d, i } of members) {
      const c = d.sides[side];
      for (let t = 0; t < rows; t++) {
        if (!Object.is(c.weight[t], base.weight[t])) {
          throw new KgrankInputError(
            `states[${i}]`,
            `scores ${side} task ${t} ${c.weight[t]} where states[${first.i}] scores it ${base.weight[t]}: the entity ` +
              `shards come from different models or runs; nothing was merged`,
          );
        }
        greater[t] = greater[t]! + c.optimistic[t]!;
        equal[t] = equal[t]! + c.realistic[t]!;
        nan[t] = nan[t]! + c.pessimistic[t]!;
        removed[t] = removed[t]! + c.numCandidates[t]!;
      }
    }
    const equalCounts = equal.slice(); // ranksFromCounts turns `equal` into the pessimistic ranks
    const ranks = ranksFromCounts({ greater, equal, nan }, n, true);
    for (let t = 0; t < rows; t++) {
      ranks.numCandidates[t] = ranks.numCandidates[t]! - removed[t]!;
      // The true answer lies in exactly one shard, where it scores equal to itself.
      if (!(equalCounts[t]! >= 1 && ranks.pessimistic[t]! <= ranks.numCandidates[t]!)) {
        throw new KgrankInputError(
          `states[${first.i}]`,
          `${side} task ${t}: its entity shards' counts do not add up to a rank (the true answer was not counted ` +
            `once): the states do not split one run's entities; nothing was merged`,
        );
      }
    }
    sides[side] = {
      ...ranks,
      relation: base.relation,
      anchor: base.anchor,
      truth: base.truth,
      weight: new Float64Array(rows).fill(NaN),
    };
  }
  const { entityShard: _shard, ...header } = first.d.header;
  return { header, sides };
}
