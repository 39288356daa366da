/** The one array of an array file (src/io/formats.ts): what a flag or a model file that names one array reads. */
import { KgrankInputError } from "../checks/errors";
import { quotedList } from "../text/suggest";
import { arrayFormat } from "./formats";
import { type NpyData, readNpy } from "./npy";

/**
 * The only array of a .npy, .npz or .safetensors file (more than one is refused); a file of another extension is read
 * as .npy.
 */
export function readArray(file: string, argument: string): NpyData {
  const format = arrayFormat(file);
  if (!format) return readNpy(file, argument);
  const all = format.readAll(file, argument);
  const names = Object.keys(all);
  if (names.length !== 1)
    throw new KgrankInputError(
      argument,
      `${file} holds ${names.length} arrays (${quotedList(names)}); save exactly one`,
    );
  return all[names[0]!]!;
}
