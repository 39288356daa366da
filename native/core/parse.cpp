// See parse.h. Every rule here mirrors a line of src/io/tsv.ts; the parity test (test/parse.test.ts) checks both
// against each other on random and mutated inputs.
#include "parse.h"

#include <cstring>

namespace kgrank {

bool js_whitespace(uint32_t c) {
  switch (c) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
    case 0xFEFF: return true;
    default: return c >= 0x2000 && c <= 0x200A;
  }
}

namespace {

// Incremental WHATWG UTF-8 decoder (https://encoding.spec.whatwg.org/#utf-8-decoder).
struct Utf8Decoder {
  uint32_t cp = 0;
  int needed = 0, seen = 0;
  uint8_t lower = 0x80, upper = 0xBF;
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  // Feeds one byte; writes up to two code points (an error plus a reprocessed ASCII byte).
  template <typename Emit>
  void feed(uint8_t b, Emit&& emit) {
    if (needed == 0) {
      if (b <= 0x7F) {
        emit(b);
      } else if (b >= 0xC2 && b <= 0xDF) {
        needed = 1;
        cp = b & 0x1F;
      } else if (b >= 0xE0 && b <= 0xEF) {
        if (b == 0xE0) lower = 0xA0;
        if (b == 0xED) upper = 0x9F;
        needed = 2;
        cp = b & 0x0F;
      } else if (b >= 0xF0 && b <= 0xF4) {
        if (b == 0xF0) lower = 0x90;
        if (b == 0xF4) upper = 0x8F;
        needed = 3;
        cp = b & 0x07;
      } else {
        emit(0xFFFD);
      }
      return;
    }
    if (b < lower || b > upper) {
      cp = 0;
      needed = seen = 0;
      lower = 0x80;
      upper = 0xBF;
      emit(0xFFFD);
      feed(b, emit);  // reprocess: needed == 0 now, so this does not recurse further
      return;
    }
    lower = 0x80;
    upper = 0xBF;
    cp = (cp << 6) | (b & 0x3F);
    if (++seen == needed) {
      const uint32_t out = cp;
      cp = 0;
      needed = seen = 0;
      emit(out);
    }
  }
  template <typename Emit>
  void finish(Emit&& emit) {
    if (needed != 0) {
      needed = seen = 0;
      cp = 0;
      lower = 0x80;
      upper = 0xBF;
      emit(0xFFFD);
    }
  }
};

}  // namespace

size_t utf8_error_offset(const uint8_t* bytes, size_t n) {
  size_t i = 0;
  // ASCII fast path, 8 bytes at a time
  while (i < n) {
    while (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, bytes + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= n) break;
    const uint8_t c = bytes[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t need;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    for (size_t k = 1; k <= need; ++k) {
      if (i + k >= n) return i;
      const uint8_t b = bytes[i + k];
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return i;
    }
    i += need + 1;
  }
  return kUtf8Valid;
}

void utf8_decode(const uint8_t* bytes, size_t len, std::u32string& out) {
  Utf8Decoder d;
  auto emit = [&out](uint32_t c) { out.push_back(static_cast<char32_t>(c)); };
  for (size_t i = 0; i < len; ++i) d.feed(bytes[i], emit);
  d.finish(emit);
}

namespace {

// line.trim() === "" on the UTF-8 decoding of [b, e)
bool blank_line(const uint8_t* b, const uint8_t* e) {
  const uint8_t* p = b;
  for (; p < e; ++p) {  // fast path: ASCII
    const uint8_t c = *p;
    if (c >= 0x80) break;
    if (!(c == 0x20 || (c >= 0x09 && c <= 0x0D))) return false;
  }
  if (p == e) return true;
  Utf8Decoder d;
  bool blank = true;
  auto emit = [&blank](uint32_t c) { blank = blank && js_whitespace(c); };
  for (; p < e && blank; ++p) d.feed(*p, emit);
  d.finish(emit);
  return blank;
}

}  // namespace

Status split_tsv_triples(const uint8_t* bytes, size_t len, std::vector<size_t>& offsets) {
  // The bytes must be UTF-8 (a Latin-1 "caf\xe9" and "caf\xe8" would both decode to "caf\uFFFD" and merge two
  // entities).
  const size_t bad = utf8_error_offset(bytes, len);
  if (bad != kUtf8Valid) {
    uint64_t line = 1;
    size_t line_start = 0;
    for (const uint8_t* q = static_cast<const uint8_t*>(std::memchr(bytes, '\n', bad)); q != nullptr;
         q = static_cast<const uint8_t*>(std::memchr(q + 1, '\n', bad - static_cast<size_t>(q + 1 - bytes)))) {
      ++line;
      line_start = static_cast<size_t>(q - bytes) + 1;
    }
    static const char kHex[] = "0123456789abcdef";
    const uint8_t b = bytes[bad];
    return Status::invalid("line " + std::to_string(line) + " is not valid UTF-8 (byte 0x" + kHex[b >> 4] +
                           kHex[b & 15] + " at byte " + std::to_string(bad - line_start + 1) +
                           " of the line): the file must be UTF-8, as PyKEEN reads it; re-encode it, e.g. iconv -f "
                           "latin1 -t utf-8 FILE > FILE.utf8");
  }
  size_t start = (len >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF) ? 3 : 0;
  uint64_t line_no = 0;
  while (start <= len) {
    const void* nl = len > start ? std::memchr(bytes + start, '\n', len - start) : nullptr;
    const size_t end = nl ? static_cast<size_t>(static_cast<const uint8_t*>(nl) - bytes) : len;
    ++line_no;
    size_t line_end = end;
    if (line_end > start && bytes[line_end - 1] == '\r') --line_end;
    const size_t line_start = start;
    start = end + 1;
    if (blank_line(bytes + line_start, bytes + line_end)) continue;
    size_t tabs[2];
    size_t fields = 1;
    for (size_t i = line_start; i < line_end; ++i) {
      if (bytes[i] == '\t') {
        if (fields <= 2) tabs[fields - 1] = i;
        ++fields;
      }
    }
    if (fields != 3) {
      return Status::invalid("line " + std::to_string(line_no) + " has " + std::to_string(fields) +
                             " tab-separated field" + (fields == 1 ? "" : "s") +
                             ", expected 3 (head<TAB>relation<TAB>tail)");
    }
    if (tabs[0] == line_start || tabs[1] == tabs[0] + 1 || line_end == tabs[1] + 1) {
      return Status::invalid("line " + std::to_string(line_no) + " has an empty field (head<TAB>relation<TAB>tail)");
    }
    offsets.push_back(line_start);
    offsets.push_back(tabs[0]);
    offsets.push_back(tabs[0] + 1);
    offsets.push_back(tabs[1]);
    offsets.push_back(tabs[1] + 1);
    offsets.push_back(line_end);
  }
  return Status::success();
}

}  // namespace kgrank
