/**
 * NumPy .npz archives (numpy.savez / savez_compressed): a zip of .npy members, stored or deflated. Unzipped with
 * fflate; each member is parsed with the .npy reader.
 */

import { unzipSync } from "fflate";

import { KgrankInputError } from "../errors";
import { readRegularFile } from "./files";
import { type NpyData, parseNpy } from "./npy";

/** Reads every array of an .npz file, keyed by name (the member name without ".npy"). */
export function readNpz(path: string, argument = "file"): Record<string, NpyData> {
  if (typeof path !== "string" || path === "") throw new KgrankInputError(argument, "must be a path to an .npz file");
  return parseNpz(readRegularFile(path, argument), argument);
}

/** Parses an in-memory .npz archive. */
export function parseNpz(bytes: Uint8Array, argument = "file"): Record<string, NpyData> {
  if (bytes.length < 4 || bytes[0] !== 0x50 || bytes[1] !== 0x4b) {
    throw new KgrankInputError(argument, "not a valid .npz file: it is not a zip archive (save it with numpy.savez)");
  }
  let members: Record<string, Uint8Array>;
  try {
    members = unzipSync(bytes);
  } catch (e) {
    throw new KgrankInputError(argument, `not a valid .npz file: the zip archive is damaged (${(e as Error).message})`);
  }
  // A null-prototype record, so a member named "__proto__" cannot replace the record's prototype.
  const out: Record<string, NpyData> = Object.create(null);
  for (const [name, data] of Object.entries(members)) {
    if (!name.endsWith(".npy")) continue;
    const key = name.slice(0, -4);
    // Copy to an aligned buffer only when the member view is not aligned for its element type.
    const aligned = data.byteOffset % 8 === 0 ? data : data.slice();
    out[key] = parseNpy(aligned, `${argument}[${key}]`);
  }
  if (Object.keys(out).length === 0) throw new KgrankInputError(argument, "not a valid .npz file: the archive holds no .npy members");
  return out;
}
