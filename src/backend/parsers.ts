/**
 * The native parsers of `.npy` headers and TSV triples (native/core/parse.cpp) when the native backend is in use;
 * null on the fallback, where src/io runs their TypeScript twins (io/npy.ts parseNpyHeaderTs, io/tsv.ts
 * splitTsvBytesTs). The same backend selection as `kernels()`: src/io asks here instead of loading the addon itself.
 */
import { type NativeNpyHeader, nativeAddon, nativeParse } from "./backend";

export interface NativeParsers {
  /** The header of a .npy file; a KgrankInputError naming `argument` for anything NumPy would not have written. */
  parseNpyHeader(bytes: Uint8Array, argument: string, fileSize?: number): NativeNpyHeader;
  /** Field offsets of UTF-8 TSV triples, six per row (start and end of head, relation, tail); errors as above. */
  splitTsvTriples(bytes: Uint8Array, argument: string): Uint32Array;
}

let parsers: NativeParsers | null | undefined;

/** The native parsers, or null when the fallback backend is in use. */
export function nativeParsers(): NativeParsers | null {
  if (parsers !== undefined) return parsers;
  const addon = nativeAddon();
  parsers = addon && {
    parseNpyHeader: (bytes, argument, fileSize) => nativeParse(argument, () => addon.parseNpyHeader(bytes, fileSize)),
    splitTsvTriples: (bytes, argument) => nativeParse(argument, () => addon.splitTsvTriples(bytes)),
  };
  return parsers;
}
