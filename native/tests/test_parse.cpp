// Unit tests of the TSV parser (native/core/parse.h): the splitter's offsets, blank-line rules and errors; and of the
// interner of labelled triples (native/core/intern.h): PyKEEN's ids, drops, growth of the table.
// test/parse.test.ts and test/io.test.ts check the same functions against their TypeScript twins through the addon.
#include "intern.h"
#include "parse.h"

#include <cstdio>
#include <string>

#include "check.h"

namespace {

#define CHECK_MSG(got, want)                                                                            \
  do {                                                                                                  \
    const std::string _g = (got);                                                                       \
    if (_g != (want)) {                                                                                 \
      std::fprintf(stderr, "%s:%d: got \"%s\"\n  want \"%s\"\n", __FILE__, __LINE__, _g.c_str(), want); \
      ++kgrank_test::failures();                                                                        \
    }                                                                                                   \
  } while (0)

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
  CHECK(tsv_fields("\xEF\xBB\xBF"
                   "a\tr\tb\r\n\r\n  \n\t\t\nc\tr\td\n") == (V{"a", "r", "b", "c", "r", "d"}));
  CHECK(tsv_fields("a\tr\tb") == (V{"a", "r", "b"}));
  // Fields keep their spaces and any second CR; only one CR before LF is a line end.
  CHECK(tsv_fields(" a \t r \t b \r\r\n") == (V{" a ", " r ", " b \r"}));
  // Unicode whitespace-only lines are blank (NBSP, U+2028, U+3000, BOM inside the text).
  CHECK(tsv_fields("\xC2\xA0\n\xE2\x80\xA8\n\xE3\x80\x80\xEF\xBB\xBF\nx\ty\tz") == (V{"x", "y", "z"}));
  // U+0085 (NEL) and U+180E are not JavaScript whitespace.
  CHECK_MSG(tsv_error("\xC2\x85\n"), "line 1 has 1 tab-separated field, expected 3 (head<TAB>relation<TAB>tail)");
  CHECK_MSG(tsv_error("a\tr\tb\n\xE1\xA0\x8E"),
            "line 2 has 1 tab-separated field, expected 3 (head<TAB>relation<TAB>tail)");
  // Bytes that are not UTF-8 are refused with the line and the byte, before any other check of the file.
  CHECK_MSG(tsv_error("a\tr\tb\ncaf\xE9\tr\tb\n"),
            "line 2 is not valid UTF-8 (byte 0xe9 at byte 4 of the line): the file must be UTF-8, as PyKEEN reads it; "
            "re-encode it, e.g. iconv -f latin1 -t utf-8 FILE > FILE.utf8");
  CHECK(tsv_error("a\tb\n\n\xFF").rfind("line 3 is not valid UTF-8 (byte 0xff at byte 1 of", 0) == 0);
  CHECK(tsv_error("x\ta\xED\xA0\x80\tb").rfind("line 1 is not valid UTF-8 (byte 0xed at byte 4 of", 0) ==
        0);  // a surrogate
  CHECK(tsv_error("x\ta\xC0\xAF\tb").rfind("line 1 is not valid UTF-8 (byte 0xc0 at byte 4 of", 0) == 0);  // overlong
  CHECK(tsv_error("x\ta\tb\xF4\x90\x80\x80").rfind("line 1 is not valid UTF-8 (byte 0xf4 at byte 6 of", 0) ==
        0);                                                                                                // > U+10FFFF
  CHECK(tsv_error("x\ta\tb\xE2\x82").rfind("line 1 is not valid UTF-8 (byte 0xe2 at byte 6 of", 0) == 0);  // truncated
  CHECK(tsv_fields("\xF0\x9F\x98\x80\t\xEF\xBF\xBD\t\xF4\x8F\xBF\xBF") ==
        (V{"\xF0\x9F\x98\x80", "\xEF\xBF\xBD", "\xF4\x8F\xBF\xBF"}));
  CHECK_MSG(tsv_error("a\tr\tb\nc\td\n"), "line 2 has 2 tab-separated fields, expected 3 (head<TAB>relation<TAB>tail)");
  CHECK_MSG(tsv_error("a\tr\tb\n\na\tr\tb\tx\n"),
            "line 3 has 4 tab-separated fields, expected 3 (head<TAB>relation<TAB>tail)");
  CHECK_MSG(tsv_error("a\t\tb\n"), "line 1 has an empty field (head<TAB>relation<TAB>tail)");
  CHECK_MSG(tsv_error("\ta\tb"), "line 1 has an empty field (head<TAB>relation<TAB>tail)");
  CHECK_MSG(tsv_error("a\tb\t\r\n"), "line 1 has an empty field (head<TAB>relation<TAB>tail)");
  // The BOM is skipped once; a second one is a label character.
  CHECK(tsv_fields("\xEF\xBB\xBF\xEF\xBB\xBF"
                   "a\tr\tb") == (V{"\xEF\xBB\xBF"
                                    "a",
                                    "r", "b"}));
}

kgrank::Status add(kgrank::TripleInterner& t, int split, const std::string& s) {
  return t.add(split, reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

void test_intern() {
  using V = std::vector<int32_t>;
  kgrank::TripleInterner t;
  const std::string a16 = "aaaaaaaaaaaaaaaa";  // 16 bytes: labels that share it differ past the slot's prefix
  // Sorted entities: a16 < a16 + "x" < a16 + "y" < "ab" < std::string("ab\0", 3) < "b"; relations: "r" < "s".
  CHECK(add(t, 0, "b\tr\t" + a16 + "y\n" + a16 + "x\ts\t" + a16 + "\n").ok());
  CHECK(add(t, 0, std::string("ab\0\tr\tab\n", 9)).ok());
  // valid: "c" is unseen; test: "r" is a relation in train, not an entity; "s" as a relation is kept
  CHECK(add(t, 1, "c\tr\tb\nb\ts\tab\n").ok());
  CHECK(add(t, 2, "r\tr\tb\n" + a16 + "\ts\t" + a16 + "x\n").ok());
  CHECK(!add(t, 2, "x\ty\n").ok());
  CHECK_EQ(t.rows(0), 3u);
  t.finish();
  CHECK(t.triples(0) == (V{5, 0, 2, 1, 1, 0, 4, 0, 3}));
  CHECK(t.triples(1) == (V{5, 1, 3}));
  CHECK(t.triples(2) == (V{0, 1, 1}));
  CHECK_EQ(t.dropped(0), 0u);
  CHECK_EQ(t.dropped(1), 1u);
  CHECK_EQ(t.dropped(2), 1u);
  CHECK_EQ(t.label_offsets(0).size(), 7u);
  CHECK(t.label_bytes(1) == "rs");
  // Growth past the first table (1024 slots): 5000 distinct labels keep their ids.
  kgrank::TripleInterner big;
  std::string rows;
  for (int i = 0; i < 5000; ++i) rows += "e" + std::to_string(i) + "\tr\te" + std::to_string((i * 7) % 5000) + "\n";
  CHECK(add(big, 0, rows).ok());
  big.finish();
  CHECK_EQ(big.label_offsets(0).size(), 5001u);
  // "e0" < "e1" < "e10" < ...: row 0 is e0 -> e0, ids 0 and 0; row 1 is e1 -> e7
  const std::string& b = big.label_bytes(0);
  const auto& o = big.label_offsets(0);
  auto label = [&](int32_t id) { return b.substr(o[id], o[id + 1] - o[id]); };
  CHECK(label(big.triples(0)[0]) == "e0" && label(big.triples(0)[2]) == "e0");
  CHECK(label(big.triples(0)[3]) == "e1" && label(big.triples(0)[5]) == "e7");
  CHECK(label(big.triples(0)[3 * 4999 + 2]) == "e" + std::to_string((4999 * 7) % 5000));
}

}  // namespace

int main() {
  test_tsv();
  test_intern();
  TEST_MAIN_END();
}
