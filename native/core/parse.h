// Parsers of untrusted input files, ported from their TypeScript twins (src/io/npy.ts parseNpyHeader, src/io/tsv.ts
// splitTsvTriples) with exactly their semantics: the same inputs are accepted, the same are rejected, with the same
// message. The addon uses these when it is loaded, so the code libFuzzer exercises (native/fuzz/fuzz_npy_header.cpp,
// fuzz_tsv.cpp) is the code users run. Pure: no I/O, no allocation beyond the outputs, total on any bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "status.h"

namespace kgrank {

struct NpyHeader {
  int version = 0;             // 1, 2 or 3
  uint64_t data_offset = 0;    // magic + version + header length field + header
  std::string dtype;           // "f2" "f4" "f8" "i1" "i2" "i4" "i8" "u1" "u2" "u4" "u8" "b1"
  bool little_endian = true;   // false only for '>'
  bool fortran_order = false;
  std::vector<uint64_t> shape; // each <= 2^53 - 1
  uint64_t size = 1;           // product of shape, <= 2^40
  uint32_t item_size = 0;
};

// Parses the start of a .npy file (at least magic, version, header length and the header). On failure the status is
// InvalidInput with the TypeScript message without its "<argument>: " prefix (e.g. "not a valid .npy file: wrong
// magic ..."), as UTF-8. `has_file_size`: check that the declared data fits in `file_size` bytes.
Status parse_npy_header(const uint8_t* bytes, size_t len, bool has_file_size, uint64_t file_size, NpyHeader& out);

// Same, with 0 meaning "file size unknown".
inline Status parse_npy_header(const uint8_t* bytes, size_t len, uint64_t file_size_or_0, NpyHeader& out) {
  return parse_npy_header(bytes, len, file_size_or_0 != 0, file_size_or_0, out);
}

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

// Up to 60 code points of t[start, end) for an error message, as UTF-8: controls as '?', surrogates as U+FFFD, "..."
// when cut. Twin of echoCodePoints in src/io/npy.ts.
std::string echo_code_points(const std::u32string& t, size_t start, size_t end);

// WHATWG UTF-8 decoding with replacement (TextDecoder, fatal: false; no BOM handling): code points of bytes.
void utf8_decode(const uint8_t* bytes, size_t len, std::u32string& out);

}  // namespace kgrank
