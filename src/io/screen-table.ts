/**
 * A model's entity table quantised for the int8 screen, on disk (docs/screen.md, "A quantised table on disk"):
 * saveScreenTable writes it once (`kgrank quantize`), loadScreenTable reads it back in a later process, checked
 * against the model's own table (rows, width, interaction, ComplEx layout and a digest of its values), so that run
 * does not quantise the table again. Ranks and top-k lists are the same with or without it, bit for bit.
 */
import { type Stats, statSync } from "node:fs";

import { kernels } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";
import { describe, threadCount } from "../checks/validate";
import type { EmbeddingRankInput, Kernels } from "../contract/kernels";
import { EmbeddingModel, SCREEN_MAX_DIM } from "../scoring/embedding-model";
import { interactionOf } from "../scoring/interactions";
import { writeAtomicWith } from "./atomic";

/** The backend and a kernel input of the model's whole table, or why the screen cannot use a table of it. */
function screenInput(model: unknown, path: unknown): { k: Kernels; input: EmbeddingRankInput } | string {
  if (!(model instanceof EmbeddingModel)) {
    throw new KgrankInputError("model", `must be an EmbeddingModel, got ${describe(model)}`);
  }
  if (typeof path !== "string" || path === "") {
    throw new KgrankInputError("path", `must be the quantised table's file name, got ${describe(path)}`);
  }
  if (model.precision !== "float32" || !interactionOf(model.interaction).screens) {
    throw new KgrankInputError(
      "model",
      `is ${model.interaction} at ${model.precision}: the int8 screen, and so its table, applies to DistMult, ComplEx, TransE-L2 and RotatE-L2 at float32`,
    );
  }
  if (model.entityWidth > SCREEN_MAX_DIM) {
    throw new KgrankInputError(
      "model",
      `has rows of ${model.entityWidth} elements: the int8 screen, and so its table, applies to rows of at most ${SCREEN_MAX_DIM} (wider ones keep the float32 path)`,
    );
  }
  if (model.entitySource) {
    throw new KgrankInputError(
      "model",
      `reads its entity table from ${model.entitySource.name} in chunks: the screen's table is made from and used with a table in memory (leave out --memory, or read the table with loadEmbeddingModel)`,
    );
  }
  const k = kernels();
  if (!k.screenTable || !k.saveScreenTable) return `the ${k.backend} backend has no int8 screen`;
  return { k, input: model.job("tail", Int32Array.of(0), Int32Array.of(0), Int32Array.of(0)) };
}

/** A file error of the native reader or writer (code KGRANK_FILE), as a KgrankInputError naming `path`. */
function asPathError(e: unknown, tmp?: string, path?: string): never {
  if (e instanceof Error && (e as Error & { code?: unknown }).code === "KGRANK_FILE") {
    throw new KgrankInputError("path", tmp && path ? e.message.split(tmp).join(path) : e.message);
  }
  throw e;
}

/**
 * Writes the model's entity table quantised for the int8 screen (both levels, about half the float32 table) to
 * `path`, atomically. Native backend only (a KgrankInputError naming the backend elsewhere); the model's table must
 * be in memory, float32, DistMult or ComplEx.
 *
 * @example
 * saveScreenTable(model, "entity.kgq"); // once
 * loadScreenTable(model, "entity.kgq"); // in each later process, before addModel / predictTopK with screen "auto"
 */
export function saveScreenTable(model: EmbeddingModel, path: string, options: { threads?: number } = {}): void {
  const got = screenInput(model, path);
  if (typeof got === "string") throw new KgrankInputError("model", `cannot be quantised here: ${got}`);
  const { k, input } = got;
  const threads = threadCount(options.threads);
  // Quantised now, from the values the file's digest is taken of (a table made earlier may predate a change of them).
  const table = k.screenTable!(input, threads);
  model.useScreenTable(k, table);
  writeAtomicWith(path, "path", (tmp) => {
    try {
      k.saveScreenTable!(input, table, tmp, threads);
    } catch (e) {
      asPathError(e, tmp, path);
    }
  });
}

/**
 * Reads a table saveScreenTable wrote for this model's entity table, for every later screened call of the model
 * (instead of quantising the table again). A file made from another table (other rows, width, interaction, ComplEx
 * layout or values) or a damaged one is a KgrankInputError naming `path` and what differs. Returns false, reading
 * nothing, on a backend without the screen (its calls take the float32 path: the same results).
 */
export function loadScreenTable(model: EmbeddingModel, path: string, options: { threads?: number } = {}): boolean {
  const got = screenInput(model, path);
  if (typeof got === "string") return false;
  const { k, input } = got;
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    throw new KgrankInputError("path", `cannot open ${path}: no such file`);
  }
  if (!st.isFile()) throw new KgrankInputError("path", `${path} is not a file: give the table kgrank quantize wrote`);
  let table: unknown;
  try {
    table = k.screenTable!(input, threadCount(options.threads), path);
  } catch (e) {
    asPathError(e);
  }
  model.useScreenTable(k, table);
  return true;
}
