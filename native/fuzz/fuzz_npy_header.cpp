// Fuzz target: the .npy header parser (native/core/parse.cpp parse_npy_header, the code src/io/npy.ts runs on the
// native backend). The input is a whole .npy file image. Oracles:
//   total        never crashes, never reads past the input (ASan), no UB (UBSan);
//   consistency  on success: version 1-3, data_offset = preamble + declared header length <= input length, a known
//                dtype with its item size, size = product of shape <= 2^40, dims <= 2^53 - 1; with the file size
//                given, data_offset + size * item_size <= file size;
//   file size    knowing the size only adds a check: accepted with it => accepted without it, same header; rejected
//                without it => rejected with it, same message;
//   messages     start "not a valid .npy file: " and are well-formed UTF-8 (they become JavaScript strings);
//   round trip   a canonical header written from the parsed fields parses back to the same fields, and so do
//                Python spellings of it NumPy reads the same way: double quotes, comments, line continuations,
//                escapes, adjacent strings, and duplicate keys whose last value wins;
//   bounded      messages stay short (the header is echoed cut to 60 code points) whatever the input's length.
// The TypeScript twin (src/io/npy.ts parseNpyHeaderTs) cannot run here; test/parse.test.ts compares the two on
// grammar-built and mutated headers with fast-check, message for message.
#include <string>

#include "fuzz_common.h"
#include "parse.h"

namespace {

bool well_formed_utf8(const std::string& s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const uint8_t c = static_cast<uint8_t>(s[i]);
    size_t k;
    uint32_t cp;
    if (c < 0x80) { ++i; continue; }
    if (c >= 0xC2 && c <= 0xDF) { k = 1; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { k = 2; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { k = 3; cp = c & 0x07; }
    else return false;
    for (size_t j = 1; j <= k; ++j) {
      if (i + j >= n) return false;
      const uint8_t d = static_cast<uint8_t>(s[i + j]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += k + 1;
  }
  return true;
}

bool same(const kgrank::NpyHeader& a, const kgrank::NpyHeader& b) {
  return a.version == b.version && a.data_offset == b.data_offset && a.dtype == b.dtype &&
         a.little_endian == b.little_endian && a.fortran_order == b.fortran_order && a.shape == b.shape &&
         a.size == b.size && a.item_size == b.item_size;
}

void check_header(const kgrank::NpyHeader& h, size_t len) {
  FUZZ_CHECK(h.version >= 1 && h.version <= 3);
  FUZZ_CHECK(h.data_offset >= (h.version == 1 ? 10u : 12u));
  FUZZ_CHECK(h.data_offset <= len);
  static const char* const names[] = {"f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1"};
  static const uint32_t sizes[] = {2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1};
  bool known = false;
  for (size_t k = 0; k < 12; ++k) known = known || (h.dtype == names[k] && h.item_size == sizes[k]);
  FUZZ_CHECK(known);
  unsigned __int128 product = 1;
  bool zero = false;
  for (uint64_t d : h.shape) {
    FUZZ_CHECK(d <= (uint64_t(1) << 53) - 1);
    if (d == 0) zero = true;
    if (!zero) product *= d;
    FUZZ_CHECK(zero || product <= (uint64_t(1) << 40));
  }
  FUZZ_CHECK(h.size == (zero ? 0 : static_cast<uint64_t>(product)));
}

void check_round_trip(const std::string& file, const kgrank::NpyHeader& want) {
  kgrank::NpyHeader again;
  FUZZ_CHECK(kgrank::parse_npy_header(reinterpret_cast<const uint8_t*>(file.data()), file.size(), false, 0, again).ok());
  FUZZ_CHECK(again.dtype == want.dtype && again.shape == want.shape && again.size == want.size &&
             again.fortran_order == want.fortran_order && again.version == want.version &&
             (again.little_endian == want.little_endian || want.item_size == 1));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kgrank::NpyHeader loose, strict;
  const kgrank::Status loose_status = kgrank::parse_npy_header(data, size, false, 0, loose);
  const kgrank::Status strict_status = kgrank::parse_npy_header(data, size, true, size, strict);
  const bool loose_ok = loose_status.ok(), strict_ok = strict_status.ok();
  const std::string& loose_error = loose_status.message;
  const std::string& strict_error = strict_status.message;
  if (strict_ok) {
    FUZZ_CHECK(loose_ok && same(loose, strict));
    check_header(strict, size);
    FUZZ_CHECK(strict.data_offset + strict.size * strict.item_size <= size);
  }
  if (!loose_ok) FUZZ_CHECK(!strict_ok && strict_error == loose_error);
  for (const std::string* e : {&loose_error, &strict_error}) {
    if (e->empty()) continue;
    FUZZ_CHECK(e->rfind("not a valid .npy file: ", 0) == 0);
    FUZZ_CHECK(well_formed_utf8(*e));
    FUZZ_CHECK(e->size() < 600);
  }
  if (loose_ok) {
    check_header(loose, size);
    // Round trip through a canonical header (what encodeNpy / numpy.save write).
    std::string dict = "{'descr': '";
    dict += loose.little_endian ? (loose.item_size == 1 ? "|" : "<") : ">";
    dict += loose.dtype + "', 'fortran_order': " + (loose.fortran_order ? "True" : "False") + ", 'shape': (";
    for (size_t k = 0; k < loose.shape.size(); ++k) dict += std::to_string(loose.shape[k]) + (loose.shape.size() == 1 ? "," : k + 1 < loose.shape.size() ? ", " : "");
    dict += "), }\n";
    std::string file = std::string("\x93NUMPY", 6) + static_cast<char>(loose.version) + '\0';
    const uint32_t n = static_cast<uint32_t>(dict.size());
    file += static_cast<char>(n & 0xFF);
    file += static_cast<char>((n >> 8) & 0xFF);
    if (loose.version != 1) {
      file += static_cast<char>((n >> 16) & 0xFF);
      file += static_cast<char>(n >> 24);
    }
    file += dict;
    check_round_trip(file, loose);
    // The same dict spelt differently: a decoy first value for every key (the last one wins), double quotes, a
    // comment, a line continuation, an escaped '<' or '>', a descr split into adjacent strings, no trailing comma.
    std::string order = loose.little_endian ? (loose.item_size == 1 ? "|" : "\\x3c") : "\\x3e";
    std::string alt = "{\"descr\": '|b1', 'shape': (7, 7), 'fortran_order': " + std::string(loose.fortran_order ? "False" : "True") +
                      ", # decoy values first ')\n  'descr': \"" + order + "\" '" + loose.dtype + "',\\\n 'fortran_order': " +
                      (loose.fortran_order ? "True" : "False") + ", \"shape\": (";
    for (size_t k = 0; k < loose.shape.size(); ++k) alt += std::to_string(loose.shape[k]) + ",";
    alt += ")}\n";
    std::string file2 = std::string("\x93NUMPY", 6) + static_cast<char>(loose.version) + '\0';
    const uint32_t n2 = static_cast<uint32_t>(alt.size());
    file2 += static_cast<char>(n2 & 0xFF);
    file2 += static_cast<char>((n2 >> 8) & 0xFF);
    if (loose.version != 1) {
      file2 += static_cast<char>((n2 >> 16) & 0xFF);
      file2 += static_cast<char>(n2 >> 24);
    }
    file2 += alt;
    check_round_trip(file2, loose);
  }
  return 0;
}
