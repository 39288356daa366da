// The parser of untrusted TSV triple files, ported from its TypeScript twin (src/io/tsv.ts splitTsvTriples) with
// exactly its semantics: the same inputs are accepted, the same are rejected, with the same message. The addon uses it
// when it is loaded (it is the hot path of a large dataset: one pass over every byte), so the code libFuzzer exercises
// (native/fuzz/fuzz_tsv.cpp) is the code users run. Pure: no I/O, no allocation beyond the outputs, total on any bytes.
// The .npy header parser has no twin here: a header is read once per file and is short (at most 64 KiB in version
// 1.0, 1 MiB in any version by src/io/npy.ts MAX_HEADER), and the fallback must parse it without the addon, so the
// TypeScript parser (src/io/npy.ts parseNpyHeader) is the only one.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "status.h"

namespace kgrank {

// Splits UTF-8 TSV bytes into head<TAB>relation<TAB>tail triples: bytes that are not UTF-8 are refused with the
// 1-based line and the byte ("line 2 is not valid UTF-8 (byte 0xe9 at byte 4 of the line): ..."), before any other
// check; a leading UTF-8 BOM is skipped, "\r\n" accepted,
// lines that are empty or only (JavaScript) whitespace skipped. Appends 6 byte offsets per triple to `offsets`:
// [head start, head end, relation start, relation end, tail start, tail end). On a line with another field count or
// an empty field the status is InvalidInput with the TypeScript message without its argument prefix
// ("line 3 has 2 tab-separated fields, expected 3 (head<TAB>relation<TAB>tail)").
Status split_tsv_triples(const uint8_t* bytes, size_t len, std::vector<size_t>& offsets);

// JavaScript's String.prototype.trim / \s whitespace (WhiteSpace + LineTerminator).
bool js_whitespace(uint32_t cp);

// Offset of the first byte of the first ill-formed UTF-8 sequence in bytes[0, len) (surrogates, overlong forms and
// code points past U+10FFFF are ill-formed), or kUtf8Valid. Twin of utf8ErrorOffset in src/io/npy.ts.
constexpr size_t kUtf8Valid = static_cast<size_t>(-1);
size_t utf8_error_offset(const uint8_t* bytes, size_t len);

// WHATWG UTF-8 decoding with replacement (TextDecoder, fatal: false; no BOM handling): code points of bytes.
void utf8_decode(const uint8_t* bytes, size_t len, std::u32string& out);

}  // namespace kgrank
