/**
 * Input-sized allocations of the file readers. A file declares how much memory it needs (a .npy shape, a zip
 * member's size, a safetensors offset); when the machine cannot give it (an 8 GiB file under a memory limit), V8
 * throws a bare RangeError ("Array buffer allocation failed"). Every such allocation goes through `allocate`, which
 * turns that into a KgrankInputError naming the argument, the file and the size.
 */
import { KgrankInputError } from "../errors";

/** Bytes for a message: "8589934592 bytes (8.0 GiB)". */
export function formatBytes(n: number): string {
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = -1;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u < 0 ? `${n} bytes` : `${n} bytes (${v.toFixed(1)} ${units[u]})`;
}

/**
 * Runs `make` (which allocates about `bytes` bytes for data read from `file`); an allocation failure becomes a
 * KgrankInputError(argument) saying how much was asked for and what to do.
 */
export function allocate<T>(argument: string, file: string | undefined, bytes: number, make: () => T): T {
  try {
    return make();
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    throw new KgrankInputError(
      argument,
      `cannot allocate ${formatBytes(bytes)} for the data of ${file ?? "the file"}: ${e.message}; ` +
        `free memory (or raise the process's memory limit), or split the array into smaller files`,
    );
  }
}
