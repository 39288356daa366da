/**
 * The native parser of TSV triples (native/core/parse.cpp) when the native backend is in use; null on the fallback,
 * where src/io runs its TypeScript twin (io/tsv.ts splitTsvBytesTs). The same backend selection as `kernels()`:
 * src/io asks here instead of loading the addon itself. (`.npy` headers have one parser, in TypeScript: io/npy.ts.)
 */
import { nativeAddon, nativeParse, type NativeTripleInterner } from "./backend";

export interface NativeParsers {
  /** Field offsets of UTF-8 TSV triples, six per row (start and end of head, relation, tail); errors as above. */
  splitTsvTriples(bytes: Uint8Array, argument: string): Uint32Array;
  /**
   * A new interner of labelled triples (native/core/intern.h; its add() errors are raw status errors), or null from
   * an addon built before it (the TypeScript twin then runs).
   */
  tripleInterner(): NativeTripleInterner | null;
}

let parsers: NativeParsers | null | undefined;

/** The native parser, or null when the fallback backend is in use. */
export function nativeParsers(): NativeParsers | null {
  if (parsers !== undefined) return parsers;
  const addon = nativeAddon();
  parsers = addon && {
    splitTsvTriples: (bytes, argument) => nativeParse(argument, () => addon.splitTsvTriples(bytes)),
    tripleInterner: () => (typeof addon.TripleInterner === "function" ? new addon.TripleInterner() : null),
  };
  return parsers;
}
