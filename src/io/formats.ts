/**
 * The array file formats, one entry per extension: how to read every array of a file, and where one array's rows lie
 * in it (for a table read in chunks, src/io/entity-table.ts). src/io/array-file.ts, src/run/arrays.ts and
 * src/io/entity-table.ts dispatch on a file's extension through this table, and the errors that list the supported
 * extensions list them from it, so a new format is one entry here (plus its reader).
 */
import { readSync } from "node:fs";
import * as path from "node:path";

import { KgrankInputError } from "../checks/errors";
import { quotedList } from "../text/suggest";
import { fileError } from "./files";
import { type NpyData, type NpyDtype, readNpy, readNpyHeader } from "./npy";
import { readNpz } from "./npz";
import { parseSafetensorsHeader, readSafetensors, safetensorsHeaderLength } from "./safetensors";

/** Where one array of a file lies: what reading its rows in chunks needs, from the header alone. */
export interface StoredArray {
  shape: readonly number[];
  dtype: NpyDtype;
  /** Byte offset of the first element. */
  dataOffset: number;
  littleEndian: boolean;
  /** Column order (Fortran): its rows are not contiguous. */
  fortranOrder: boolean;
}

export interface ArrayFormat {
  /** The extension, lower case, with its dot. */
  ext: string;
  /** Every array of the file by name (a .npy's one array under its file name). */
  readAll(file: string, argument: string): Record<string, NpyData>;
  /**
   * One array's place in an open file of `size` bytes (`name`: which, where the file holds several), or null where
   * the format's arrays cannot be read in place (compressed or zipped); `why` says what to do instead.
   */
  locate: ((fd: number, file: string, size: number, argument: string, name?: string) => StoredArray) | null;
  /** Whether a file holds named arrays (an entity table's `tensor` option names one). */
  named: boolean;
  /** What to do with a file whose arrays cannot be located in place (locate null). */
  why?: (file: string) => string;
}

export const ARRAY_FORMATS: readonly ArrayFormat[] = [
  {
    ext: ".npy",
    readAll: (file, argument) => ({ [path.basename(file, path.extname(file))]: readNpy(file, argument) }),
    locate: (fd, file, size, argument) => readNpyHeader(fd, size, argument, file),
    named: false,
  },
  {
    ext: ".npz",
    readAll: (file, argument) => readNpz(file, argument),
    locate: null,
    named: true,
    why: (file) =>
      `an .npz is compressed or zipped: extract its array, e.g. numpy.save('entity.npy', numpy.load('${path.basename(file)}')['<name>'])`,
  },
  {
    ext: ".safetensors",
    readAll: (file, argument) => readSafetensors(file, argument),
    locate: locateSafetensors,
    named: true,
  },
];

/** The format of `file` by its extension (case-insensitive), or undefined. */
export function arrayFormat(file: string): ArrayFormat | undefined {
  const ext = path.extname(file).toLowerCase();
  return ARRAY_FORMATS.find((f) => f.ext === ext);
}

/** The extensions of the formats that pass `which`, for messages: ".npy, .npz or .safetensors". */
export function formatList(which: (f: ArrayFormat) => boolean = () => true): string {
  const exts = ARRAY_FORMATS.filter(which).map((f) => f.ext);
  return exts.length < 2 ? exts.join("") : `${exts.slice(0, -1).join(", ")} or ${exts[exts.length - 1]}`;
}

/** `length` bytes at `position` of an open file (fewer at its end). */
function readAt(fd: number, length: number, position: number, argument: string, file: string): Uint8Array {
  const buf = new Uint8Array(length);
  let done = 0;
  try {
    while (done < length) {
      const n = readSync(fd, buf, done, length - done, position + done);
      if (n === 0) break;
      done += n;
    }
  } catch (e) {
    throw fileError(argument, file, e);
  }
  return buf.subarray(0, done);
}

function locateSafetensors(fd: number, file: string, size: number, argument: string, name?: string): StoredArray {
  const len = safetensorsHeaderLength(readAt(fd, Math.min(size, 8), 0, argument, file), size, argument);
  const { base, tensors } = parseSafetensorsHeader(readAt(fd, len, 0, argument, file), size, argument);
  const names = tensors.map((t) => t.name);
  let t = tensors[0];
  if (name !== undefined) {
    t = tensors.find((x) => x.name === name);
    if (!t) throw new KgrankInputError("tensor", `${file} has no tensor "${name}"; it holds ${quotedList(names)}`);
  } else if (tensors.length !== 1) {
    throw new KgrankInputError(
      argument,
      `${file} holds ${tensors.length} tensors (${quotedList(names)}); name the entity table's (tensor)`,
    );
  }
  return { shape: t!.shape, dtype: t!.dtype, dataOffset: base + t!.begin, littleEndian: true, fortranOrder: false };
}
