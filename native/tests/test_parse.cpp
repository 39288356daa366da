// Unit tests of the input parsers (native/core/parse.h): .npy headers of every version and dtype, every rejection
// with its exact message, and the TSV splitter's offsets, blank-line rules and errors. test/parse.test.ts checks the
// same functions against their TypeScript twins through the addon.
#include "parse.h"

#include <chrono>
#include <cstdio>
#include <string>

#include "check.h"

using kgrank::NpyHeader;

namespace {

std::string npy(const std::string& dict, int version, int minor = 0) {
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(version) + static_cast<char>(minor);
  const size_t n = dict.size();
  out += static_cast<char>(n & 0xFF);
  out += static_cast<char>((n >> 8) & 0xFF);
  if (version != 1) {
    out += static_cast<char>((n >> 16) & 0xFF);
    out += static_cast<char>((n >> 24) & 0xFF);
  }
  return out + dict;
}

bool parse(const std::string& s, NpyHeader& h, std::string& e, bool has_size = false, uint64_t size = 0) {
  const kgrank::Status status = kgrank::parse_npy_header(reinterpret_cast<const uint8_t*>(s.data()), s.size(), has_size, size, h);
  e = status.message;
  return status.ok();
}

std::string fails(const std::string& s, bool has_size = false, uint64_t size = 0) {
  NpyHeader h;
  std::string e;
  if (parse(s, h, e, has_size, size)) return "(accepted)";
  const std::string prefix = "not a valid .npy file: ";
  CHECK(e.rfind(prefix, 0) == 0);
  return e.substr(prefix.size());
}

#define CHECK_MSG(got, want)                                                                            \
  do {                                                                                                  \
    const std::string _g = (got);                                                                       \
    if (_g != (want)) {                                                                                 \
      std::fprintf(stderr, "%s:%d: got \"%s\"\n  want \"%s\"\n", __FILE__, __LINE__, _g.c_str(), want); \
      ++kgrank_test::failures();                                                                        \
    }                                                                                                   \
  } while (0)

void test_npy_valid() {
  const char* dtypes[] = {"f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1"};
  const uint32_t sizes[] = {2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1};
  for (int v = 1; v <= 3; ++v) {
    for (int k = 0; k < 12; ++k) {
      for (const char* order : {"<", ">", "|", "=", ""}) {
        const std::string dict = std::string("{'descr': '") + order + dtypes[k] +
                                 "', 'fortran_order': True, 'shape': (3, 4), }        \n";
        const std::string file = npy(dict, v);
        NpyHeader h;
        std::string e;
        CHECK(parse(file, h, e));
        CHECK_EQ(h.version, v);
        CHECK_EQ(h.data_offset, file.size());
        CHECK(h.dtype == dtypes[k]);
        CHECK_EQ(h.item_size, sizes[k]);
        CHECK_EQ(h.little_endian, std::string(order) != ">");
        CHECK(h.fortran_order);
        CHECK(h.shape.size() == 2 && h.shape[0] == 3 && h.shape[1] == 4);
        CHECK_EQ(h.size, 12u);
        // The data must fit when the file size is known.
        CHECK(parse(file, h, e, true, file.size() + 12 * sizes[k]));
        CHECK(!parse(file, h, e, true, file.size() + 12 * sizes[k] - 1));
      }
    }
  }
  NpyHeader h;
  std::string e;
  CHECK(parse(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 1), h, e));
  CHECK(h.shape.empty() && h.size == 1);
  CHECK(parse(npy("{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(5,)}", 2), h, e));
  CHECK(h.shape.size() == 1 && h.shape[0] == 5 && !h.fortran_order);
  // Python 2's long suffix in versions 1.0 / 2.0 (NumPy filters it out there), underscores, "00".
  CHECK(parse(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 1_0, 00, ), }", 1), h, e));
  CHECK(h.shape.size() == 3 && h.shape[0] == 3 && h.shape[1] == 10 && h.shape[2] == 0);
  CHECK(!parse(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3L,), }", 3), h, e));
  // A zero dimension makes any other (safe) dimension fine.
  const std::string zero = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 9007199254740991), }", 1);
  CHECK(parse(zero, h, e, true, zero.size()));
  CHECK_EQ(h.size, 0u);
  // Python whitespace only: NBSP, U+3000 and a BOM are not (the regexes this replaced took JavaScript's \s).
  CHECK(!parse(npy("\xA0{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 1), h, e));
  CHECK(!parse(npy("\xEF\xBB\xBF{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 3), h, e));
  CHECK(parse(npy("\t\f\r\n {'descr'\n:\t'<f4', # comment ')\n 'fortran_order': \\\n True, 'shape': (\r\n2,), }\n", 1), h, e));
  CHECK(h.shape.size() == 1 && h.shape[0] == 2 && h.fortran_order);
  // A Python dict literal: the last duplicate key wins; strings hold text, not keys; escapes, prefixes, joins.
  CHECK(parse(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (9,), 'descr': '>i2', 'shape': (2, 3), 'fortran_order': False}", 1), h, e));
  CHECK(h.dtype == "i2" && !h.little_endian && h.shape.size() == 2 && h.shape[1] == 3 && !h.fortran_order);
  CHECK(parse(npy("{'descr': \"'descr': '<f8', 'shape': (9,)\", 'descr': u'\\x3c' r'u4', 'fortran_order': False, 'shape': (7,)}", 1), h, e));
  CHECK(h.dtype == "u4" && h.shape.size() == 1 && h.shape[0] == 7);
  CHECK(parse(npy("{'descr': '''<\\u0069\\070''', 'fortran_order': False, 'shape': (1,)}", 1), h, e));
  CHECK(h.dtype == "i8");
  // 2^40 elements exactly is accepted.
  CHECK(parse(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }", 1), h, e));
  CHECK_EQ(h.size, uint64_t(1) << 40);
}

void test_npy_rejections() {
  CHECK_MSG(fails("\x93NUMPY\x01"), "only 7 bytes, shorter than the 10-byte preamble (truncated header)");
  CHECK_MSG(fails(std::string("\x93NUMPZ\x01\x00\x00\x00", 10)),
            "wrong magic (a .npy file starts with \\x93NUMPY); save it with numpy.save()");
  CHECK_MSG(fails(npy("{}", 4, 7)), "format version 4.7 is not 1.0, 2.0 or 3.0");
  CHECK_MSG(fails(std::string("\x93NUMPY\x02\x00\x01\x00\x00", 11)),
            "truncated header (version 2/3 preamble needs 12 bytes)");
  CHECK_MSG(fails(std::string("\x93NUMPY\x02\x00\x01\x00\x10\x00", 12)),
            "header length 1048577 is absurd (more than 1048576 bytes)");
  CHECK_MSG(fails(std::string("\x93NUMPY\x01\x00\x20\x00{'d", 13)),
            "truncated header: it declares 32 bytes but only 3 follow");
  CHECK_MSG(fails(npy("['descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 1)),
            "the header is not a dict with 'descr', 'fortran_order' and 'shape' (it starts: ['descr': '<f4', "
            "'fortran_order': False, 'shape': (3,), })");
  CHECK_MSG(fails(npy("{'descr': '<f4', 'fortran_order': false, 'shape': (3,), }", 1)),
            "the header is not a valid Python dict literal: 'false' is not a literal NumPy writes at character 35 "
            "(near: false, 'shape': (3,), }); save the file with numpy.save()");
  CHECK_MSG(fails(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}", 1)),
            "the header has a key 'x' besides 'descr', 'fortran_order' and 'shape' (NumPy refuses such files too)");
  CHECK_MSG(fails(npy("{'descr': '<f4', 'shape': (3,)}", 1)),
            "the header has no 'fortran_order' (NumPy writes a dict with 'descr', 'fortran_order' and 'shape')");
  CHECK_MSG(fails(npy("{'descr': '<f4', 'fortran_order': 'False', 'shape': (3,)}", 1)),
            "'fortran_order' is 'False', not True or False");
  CHECK_MSG(fails(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3)}", 1)),
            "'shape' is not a tuple but (3): it must be a tuple of non-negative integers such as (1000, 14541)");
  CHECK_MSG(fails(npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,)}", 1)),
            "'descr' is not a string but [('a', '<f4')]: structured and object dtypes are not supported (accepted: f2 "
            "f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, any byte order)");
  CHECK_MSG(fails(npy("{'descr': '<f4\n', 'fortran_order': False, 'shape': (3,)}", 1)),
            "the header is not a valid Python dict literal: unterminated string at character 11 (near: '<f4?', "
            "'fortran_order': False, 'shape': (3,)}); save the file with numpy.save()");
  CHECK_MSG(fails(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (03,)}", 1)),
            "the header is not a valid Python dict literal: leading zeros in a decimal integer at character 52 "
            "(near: 03,)}); save the file with numpy.save()");
  CHECK_MSG(fails(npy("{1: 2}", 1)), "the header has a key 1 that is not a string");
  {
    std::string deep = "{'shape': ";
    for (int k = 0; k < 40; ++k) deep += "(";
    CHECK_MSG(fails(npy(deep, 1)), "the header is not a valid Python dict literal: nested more than 32 deep at "
                                   "character 42 (near: (((((((((); save the file with numpy.save()");
  }
  CHECK_MSG(fails(npy("{'descr': '<c16', 'fortran_order': False, 'shape': (3,), }", 1)),
            "dtype '<c16' is not supported (accepted: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, any byte order)");
  CHECK_MSG(fails(npy("{'descr': '<f04', 'fortran_order': False, 'shape': (3,), }", 1)),
            "dtype '<f04' is not supported (accepted: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, any byte order)");
  // latin1 bytes come back as UTF-8 in the message.
  CHECK_MSG(fails(npy("{'descr': '<f4\xE9', 'fortran_order': False, 'shape': (3,), }", 1)),
            "dtype '<f4\xC3\xA9' is not supported (accepted: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, any byte order)");
  // v3: NumPy decodes the header as strict UTF-8.
  CHECK_MSG(fails(npy("{'descr': '<f4\xE2\x82\xFF', 'fortran_order': False, 'shape': (3,), }", 3)),
            "the version 3.0 header is not valid UTF-8; save the file with numpy.save()");
  CHECK_MSG(fails(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,,4), }", 1)),
            "the header is not a valid Python dict literal: unexpected ',' at character 54 (near: ,4), }); save the "
            "file with numpy.save()");
  CHECK_MSG(fails(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 1)),
            "shape has a dimension -1 that is not a non-negative integer");
  CHECK_MSG(fails(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (9007199254740992L,), }", 1)),
            "shape dimension 9007199254740992L is too large");
  CHECK_MSG(fails(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", 1)),
            "shape dimension 99999999999999999999999 is too large");
  CHECK_MSG(fails(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1048577, 1048576), }", 1)),
            "declared shape (1048577, 1048576) has more than 2^40 elements");
  // Long headers are cut short in messages.
  CHECK_MSG(fails(npy("{'descr': '" + std::string(100000, 'x') + "', 'fortran_order': False, 'shape': (3,)}", 2)),
            ("dtype '" + std::string(60, 'x') + "...' is not supported (accepted: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, "
             "any byte order)").c_str());
  CHECK_MSG(fails(npy("{'descr': '>i2', 'fortran_order': False, 'shape': (3, 2), }", 1), true, 60),
            "declared shape (3, 2) of >i2 needs 12 data bytes but the file has 0 (truncated file or lying header)");
}

// Headers that made the regexes of the old parser quadratic ("'shape':(" or "'descr':'" repeated up to the 1 MiB
// limit), and deep nesting, comments and continuations, parse in linear time: well under a second.
void test_npy_linear_time() {
  for (const char* unit : {"'shape':(", "'descr':'", "'descr':' ", "(", "'", "#", "\\\n"}) {
    std::string dict = "{";
    while (dict.size() < (1u << 20) - 16) dict += unit;
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(fails(npy(dict, 2)).rfind("the header is not a valid Python dict literal: ", 0) == 0);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (seconds > 1.0) std::fprintf(stderr, "%s repeated: %.2f s\n", unit, seconds);
    CHECK(seconds < 1.0);
  }
}

std::string tsv_error(const std::string& s) {
  std::vector<size_t> off;
  const kgrank::Status status = kgrank::split_tsv_triples(reinterpret_cast<const uint8_t*>(s.data()), s.size(), off);
  if (status.ok()) return "(accepted)";
  return status.message;
}

std::vector<std::string> tsv_fields(const std::string& s) {
  std::vector<size_t> off;
  std::vector<std::string> out;
  const kgrank::Status status = kgrank::split_tsv_triples(reinterpret_cast<const uint8_t*>(s.data()), s.size(), off);
  if (!status.ok()) return {"ERROR " + status.message};
  CHECK_EQ(off.size() % 6, 0u);
  for (size_t k = 0; k < off.size(); k += 2) out.push_back(s.substr(off[k], off[k + 1] - off[k]));
  return out;
}

void test_tsv() {
  using V = std::vector<std::string>;
  CHECK(tsv_fields("") == V{});
  CHECK(tsv_fields("\n\n") == V{});
  CHECK(tsv_fields("\xEF\xBB\xBF" "a\tr\tb\r\n\r\n  \n\t\t\nc\tr\td\n") == (V{"a", "r", "b", "c", "r", "d"}));
  CHECK(tsv_fields("a\tr\tb") == (V{"a", "r", "b"}));
  // Fields keep their spaces and any second CR; only one CR before LF is a line end.
  CHECK(tsv_fields(" a \t r \t b \r\r\n") == (V{" a ", " r ", " b \r"}));
  // Unicode whitespace-only lines are blank (NBSP, U+2028, U+3000, BOM inside the text).
  CHECK(tsv_fields("\xC2\xA0\n\xE2\x80\xA8\n\xE3\x80\x80\xEF\xBB\xBF\nx\ty\tz") == (V{"x", "y", "z"}));
  // U+0085 (NEL) and U+180E are not JavaScript whitespace.
  CHECK_MSG(tsv_error("\xC2\x85\n"), "line 1 has 1 tab-separated field, expected 3 (head<TAB>relation<TAB>tail)");
  CHECK_MSG(tsv_error("a\tr\tb\n\xE1\xA0\x8E"), "line 2 has 1 tab-separated field, expected 3 (head<TAB>relation<TAB>tail)");
  // Bytes that are not UTF-8 are refused with the line and the byte, before any other check of the file.
  CHECK_MSG(tsv_error("a\tr\tb\ncaf\xE9\tr\tb\n"),
            "line 2 is not valid UTF-8 (byte 0xe9 at byte 4 of the line): the file must be UTF-8, as PyKEEN reads it; "
            "re-encode it, e.g. iconv -f latin1 -t utf-8 FILE > FILE.utf8");
  CHECK(tsv_error("a\tb\n\n\xFF").rfind("line 3 is not valid UTF-8 (byte 0xff at byte 1 of", 0) == 0);
  CHECK(tsv_error("x\ta\xED\xA0\x80\tb").rfind("line 1 is not valid UTF-8 (byte 0xed at byte 4 of", 0) == 0);  // a surrogate
  CHECK(tsv_error("x\ta\xC0\xAF\tb").rfind("line 1 is not valid UTF-8 (byte 0xc0 at byte 4 of", 0) == 0);  // overlong
  CHECK(tsv_error("x\ta\tb\xF4\x90\x80\x80").rfind("line 1 is not valid UTF-8 (byte 0xf4 at byte 6 of", 0) == 0);  // > U+10FFFF
  CHECK(tsv_error("x\ta\tb\xE2\x82").rfind("line 1 is not valid UTF-8 (byte 0xe2 at byte 6 of", 0) == 0);  // truncated
  CHECK(tsv_fields("\xF0\x9F\x98\x80\t\xEF\xBF\xBD\t\xF4\x8F\xBF\xBF") == (V{"\xF0\x9F\x98\x80", "\xEF\xBF\xBD", "\xF4\x8F\xBF\xBF"}));
  CHECK_MSG(tsv_error("a\tr\tb\nc\td\n"), "line 2 has 2 tab-separated fields, expected 3 (head<TAB>relation<TAB>tail)");
  CHECK_MSG(tsv_error("a\tr\tb\n\na\tr\tb\tx\n"), "line 3 has 4 tab-separated fields, expected 3 (head<TAB>relation<TAB>tail)");
  CHECK_MSG(tsv_error("a\t\tb\n"), "line 1 has an empty field (head<TAB>relation<TAB>tail)");
  CHECK_MSG(tsv_error("\ta\tb"), "line 1 has an empty field (head<TAB>relation<TAB>tail)");
  CHECK_MSG(tsv_error("a\tb\t\r\n"), "line 1 has an empty field (head<TAB>relation<TAB>tail)");
  // The BOM is skipped once; a second one is a label character.
  CHECK(tsv_fields("\xEF\xBB\xBF\xEF\xBB\xBF" "a\tr\tb") == (V{"\xEF\xBB\xBF" "a", "r", "b"}));
}

}  // namespace

int main() {
  test_npy_valid();
  test_npy_rejections();
  test_npy_linear_time();
  test_tsv();
  TEST_MAIN_END();
}
