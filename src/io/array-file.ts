/** The one array of a .npy, .npz or .safetensors file: what a flag or a model file that names one array reads. */
import * as path from "node:path";

import { KgrankInputError } from "../checks/errors";
import { quotedList } from "../text/suggest";
import { type NpyData, readNpy } from "./npy";
import { readNpz } from "./npz";
import { readSafetensors } from "./safetensors";

/** The array of a .npy file, or the only array of a .npz or .safetensors file (more than one is refused). */
export function readArray(file: string, argument: string): NpyData {
  const ext = path.extname(file).toLowerCase();
  if (ext === ".npz" || ext === ".safetensors") {
    const all = ext === ".npz" ? readNpz(file, argument) : readSafetensors(file, argument);
    const names = Object.keys(all);
    if (names.length !== 1)
      throw new KgrankInputError(
        argument,
        `${file} holds ${names.length} arrays (${quotedList(names)}); save exactly one`,
      );
    return all[names[0]!]!;
  }
  return readNpy(file, argument);
}
