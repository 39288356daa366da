// Fuzz target: the TSV triple splitter (native/core/parse.cpp split_tsv_triples, the code src/io/tsv.ts runs on the
// native backend). The input is a whole TSV file. Oracles:
//   total        never crashes, never reads past the input (ASan), no UB (UBSan);
//   offsets      6 per triple, non-decreasing, within the input; every field non-empty and free of tab and newline;
//                fields of one triple are separated by exactly one tab and sit on one line;
//   reference    a plain line-by-line splitter written here with std::string (find / substr, whole-line UTF-8
//                decoding) gives the same triples, or fails on the same line with the same message;
//   messages     "line N has ..." with N >= 1.
#include <string>

#include "fuzz_common.h"
#include "parse.h"

namespace {

bool reference(const std::string& in, std::vector<size_t>& offsets, std::string& error) {
  size_t pos = in.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  for (size_t line_no = 1;; ++line_no) {
    size_t nl = in.find('\n', pos);
    const bool last = nl == std::string::npos;
    if (last) nl = in.size();
    std::string line = in.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::u32string cps;
    kgrank::utf8_decode(reinterpret_cast<const uint8_t*>(line.data()), line.size(), cps);
    bool blank = true;
    for (char32_t c : cps) blank = blank && kgrank::js_whitespace(c);
    if (!blank) {
      std::vector<size_t> starts{0};
      for (size_t t = line.find('\t'); t != std::string::npos; t = line.find('\t', t + 1)) starts.push_back(t + 1);
      if (starts.size() != 3) {
        error = "line " + std::to_string(line_no) + " has " + std::to_string(starts.size()) + " tab-separated field" +
                (starts.size() == 1 ? "" : "s") + ", expected 3 (head<TAB>relation<TAB>tail)";
        return false;
      }
      const size_t ends[3] = {starts[1] - 1, starts[2] - 1, line.size()};
      for (size_t f = 0; f < 3; ++f) {
        if (ends[f] == starts[f]) {
          error = "line " + std::to_string(line_no) + " has an empty field (head<TAB>relation<TAB>tail)";
          return false;
        }
      }
      for (size_t f = 0; f < 3; ++f) {
        offsets.push_back(pos + starts[f]);
        offsets.push_back(pos + ends[f]);
      }
    }
    if (last) return true;
    pos = nl + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<size_t> offsets;
  const kgrank::Status status = kgrank::split_tsv_triples(data, size, offsets);
  const bool ok = status.ok();
  const std::string& error = status.message;
  std::vector<size_t> want;
  std::string want_error;
  const bool want_ok = reference(std::string(reinterpret_cast<const char*>(data), size), want, want_error);
  FUZZ_CHECK(ok == want_ok);
  if (!ok) {
    FUZZ_CHECK(error == want_error);
    FUZZ_CHECK(error.rfind("line ", 0) == 0 && error[5] >= '1' && error[5] <= '9');
    return 0;
  }
  FUZZ_CHECK(error.empty());
  FUZZ_CHECK(offsets == want);
  FUZZ_CHECK(offsets.size() % 6 == 0);
  for (size_t k = 0; k < offsets.size(); ++k) {
    FUZZ_CHECK(offsets[k] <= size);
    if (k > 0) FUZZ_CHECK(offsets[k] >= offsets[k - 1]);
    if (k % 2 == 1) {
      FUZZ_CHECK(offsets[k] > offsets[k - 1]);
      for (size_t i = offsets[k - 1]; i < offsets[k]; ++i) FUZZ_CHECK(data[i] != '\t' && data[i] != '\n');
    }
  }
  for (size_t k = 0; k < offsets.size(); k += 6) {
    FUZZ_CHECK(offsets[k + 2] == offsets[k + 1] + 1 && data[offsets[k + 1]] == '\t');
    FUZZ_CHECK(offsets[k + 4] == offsets[k + 3] + 1 && data[offsets[k + 3]] == '\t');
    FUZZ_CHECK(k == 0 || std::memchr(data + offsets[k - 1], '\n', offsets[k] - offsets[k - 1]) != nullptr);
  }
  return 0;
}
