// Fuzz target: the TSV triple splitter (native/core/parse.cpp split_tsv_triples, the code src/io/tsv.ts runs on the
// native backend). The input is a whole TSV file. Oracles:
//   total        never crashes, never reads past the input (ASan), no UB (UBSan);
//   offsets      6 per triple, non-decreasing, within the input; every field non-empty and free of tab and newline;
//                fields of one triple are separated by exactly one tab and sit on one line;
//   reference    a plain line-by-line splitter written here with std::string (find / substr, whole-line UTF-8
//                decoding) gives the same triples, or fails on the same line with the same message;
//   UTF-8        input that does not survive a WHATWG decode + re-encode unchanged (i.e. is not UTF-8) is refused
//                with "line L is not valid UTF-8 (byte 0xHH at byte C of the line)": L is the first line that does
//                not survive it, the bytes before the reported one are UTF-8, no UTF-8 character starts at it, and
//                HH is that byte;
//   messages     "line N has ..." with N >= 1.
#include <cstdio>
#include <string>

#include "fuzz_common.h"
#include "parse.h"

namespace {

std::string encode(const std::u32string& cps) {
  std::string out;
  for (char32_t c : cps) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

// UTF-8 iff the WHATWG decoder (which replaces every ill-formed subsequence by U+FFFD) gives it back unchanged.
bool round_trips(const std::string& s) {
  std::u32string cps;
  kgrank::utf8_decode(reinterpret_cast<const uint8_t*>(s.data()), s.size(), cps);
  return encode(cps) == s;
}

// The UTF-8 oracle on a rejected input that is not UTF-8.
void check_utf8_error(const std::string& in, const std::string& error) {
  size_t line_start = 0, line_no = 1;
  for (;;) {
    size_t nl = in.find('\n', line_start);
    if (nl == std::string::npos) nl = in.size();
    if (!round_trips(in.substr(line_start, nl - line_start))) break;
    FUZZ_CHECK(nl < in.size());  // some line must fail
    line_start = nl + 1;
    ++line_no;
  }
  unsigned long line = 0, column = 0;
  unsigned byte = 0;
  FUZZ_CHECK(std::sscanf(error.c_str(), "line %lu is not valid UTF-8 (byte 0x%2x at byte %lu of the line)", &line,
                         &byte, &column) == 3);
  FUZZ_CHECK(line == line_no && column >= 1);
  const size_t off = line_start + column - 1;
  FUZZ_CHECK(off < in.size() && static_cast<uint8_t>(in[off]) == byte);
  FUZZ_CHECK(round_trips(in.substr(0, off)));
  for (size_t k = 1; k <= 4 && off + k <= in.size(); ++k) {
    const std::string ch = in.substr(off, k);
    std::u32string cps;
    kgrank::utf8_decode(reinterpret_cast<const uint8_t*>(ch.data()), ch.size(), cps);
    FUZZ_CHECK(!(cps.size() == 1 && encode(cps) == ch));
  }
}

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
  const std::string in(reinterpret_cast<const char*>(data), size);
  if (!round_trips(in)) {
    FUZZ_CHECK(!ok);
    check_utf8_error(in, error);
    return 0;
  }
  const bool want_ok = reference(in, want, want_error);
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
