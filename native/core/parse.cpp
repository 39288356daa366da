// See parse.h. Every rule here mirrors a line of src/io/npy.ts or src/io/tsv.ts; the parity test
// (test/parse.test.ts) checks both against each other on random and mutated inputs.
#include "parse.h"

#include <cstring>

namespace kgrank {

bool js_whitespace(uint32_t c) {
  switch (c) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000: case 0xFEFF:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
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

void append_utf8(std::string& s, uint32_t c) {
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xC0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (c >> 18));
    s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string utf8_of(const std::u32string& t, size_t begin, size_t end) {
  std::string s;
  for (size_t i = begin; i < end; ++i) append_utf8(s, t[i]);
  return s;
}

bool is_quote(char32_t c) { return c == U'\'' || c == U'"'; }

bool has_at(const std::u32string& t, size_t i, const char* lit) {
  const size_t n = std::strlen(lit);
  if (i + n > t.size()) return false;
  for (size_t k = 0; k < n; ++k) {
    if (t[i + k] != static_cast<char32_t>(static_cast<unsigned char>(lit[k]))) return false;
  }
  return true;
}

// The part common to the three header regexes: ['"]key['"]\s*:\s* starting at i; returns the index after it or npos.
size_t key_prefix(const std::u32string& t, size_t i, const char* key) {
  const size_t n = t.size();
  if (!is_quote(t[i]) || !has_at(t, i + 1, key)) return std::u32string::npos;
  size_t j = i + 1 + std::strlen(key);
  if (j >= n || !is_quote(t[j])) return std::u32string::npos;
  ++j;
  while (j < n && js_whitespace(t[j])) ++j;
  if (j >= n || t[j] != U':') return std::u32string::npos;
  ++j;
  while (j < n && js_whitespace(t[j])) ++j;
  return j;
}

struct Capture {
  bool found = false;
  size_t begin = 0, end = 0;
};

// /['"]descr['"]\s*:\s*['"]([^'"]*)['"]/
Capture match_descr(const std::u32string& t) {
  Capture c;
  for (size_t i = 0; i < t.size(); ++i) {
    size_t j = key_prefix(t, i, "descr");
    if (j == std::u32string::npos || j >= t.size() || !is_quote(t[j])) continue;
    size_t k = j + 1;
    while (k < t.size() && !is_quote(t[k])) ++k;
    // No quote after j: no later start can match either (it needs quotes past i + 6). Stopping keeps this linear on
    // headers like "'descr':'" repeated (the regex it mirrors is quadratic there).
    if (k >= t.size()) return c;
    c.found = true;
    c.begin = j + 1;
    c.end = k;
    return c;
  }
  return c;
}

// /['"]fortran_order['"]\s*:\s*(True|False)/ -> 1 True, 0 False, -1 no match
int match_fortran(const std::u32string& t) {
  for (size_t i = 0; i < t.size(); ++i) {
    size_t j = key_prefix(t, i, "fortran_order");
    if (j == std::u32string::npos) continue;
    if (has_at(t, j, "True")) return 1;
    if (has_at(t, j, "False")) return 0;
  }
  return -1;
}

// /['"]shape['"]\s*:\s*\(([^)]*)\)/
Capture match_shape(const std::u32string& t) {
  Capture c;
  for (size_t i = 0; i < t.size(); ++i) {
    size_t j = key_prefix(t, i, "shape");
    if (j == std::u32string::npos || j >= t.size() || t[j] != U'(') continue;
    size_t k = j + 1;
    while (k < t.size() && t[k] != U')') ++k;
    if (k >= t.size()) return c;  // no ')' after j: no later start can match; linear on "'shape':(" repeated
    c.found = true;
    c.begin = j + 1;
    c.end = k;
    return c;
  }
  return c;
}

bool is_digit(char32_t c) { return c >= U'0' && c <= U'9'; }

constexpr uint64_t kMaxElements = uint64_t(1) << 40;
constexpr uint32_t kMaxHeader = 1u << 20;
constexpr uint64_t kMaxSafe = (uint64_t(1) << 53) - 1;

uint32_t item_size_of(const std::string& code) {
  static const char* const names[] = {"f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1"};
  static const uint32_t sizes[] = {2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1};
  for (size_t k = 0; k < 12; ++k) {
    if (code == names[k]) return sizes[k];
  }
  return 0;
}

}  // namespace

void utf8_decode(const uint8_t* bytes, size_t len, std::u32string& out) {
  Utf8Decoder d;
  auto emit = [&out](uint32_t c) { out.push_back(static_cast<char32_t>(c)); };
  for (size_t i = 0; i < len; ++i) d.feed(bytes[i], emit);
  d.finish(emit);
}

Status parse_npy_header(const uint8_t* bytes, size_t len, bool has_file_size, uint64_t file_size, NpyHeader& out) {
  static const char* const kBad = "not a valid .npy file: ";
  auto fail = [](const std::string& msg) { return Status::invalid(std::string(kBad) + msg); };
  if (len < 10) {
    return fail("only " + std::to_string(len) + " bytes, shorter than the 10-byte preamble (truncated header)");
  }
  static const uint8_t kMagic[6] = {0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59};
  if (std::memcmp(bytes, kMagic, 6) != 0) {
    return fail("wrong magic (a .npy file starts with \\x93NUMPY); save it with numpy.save()");
  }
  const int major = bytes[6];
  if (major != 1 && major != 2 && major != 3) {
    return fail("format version " + std::to_string(major) + "." + std::to_string(bytes[7]) +
                " is not 1.0, 2.0 or 3.0");
  }
  uint64_t header_len;
  size_t start;
  if (major == 1) {
    header_len = uint64_t(bytes[8]) | (uint64_t(bytes[9]) << 8);
    start = 10;
  } else {
    if (len < 12) return fail("truncated header (version 2/3 preamble needs 12 bytes)");
    header_len = uint64_t(bytes[8]) | (uint64_t(bytes[9]) << 8) | (uint64_t(bytes[10]) << 16) |
                 (uint64_t(bytes[11]) << 24);
    start = 12;
  }
  if (header_len > kMaxHeader) {
    return fail("header length " + std::to_string(header_len) + " is absurd (more than " +
                std::to_string(kMaxHeader) + " bytes)");
  }
  if (len - start < header_len) {
    return fail("truncated header: it declares " + std::to_string(header_len) + " bytes but only " +
                std::to_string(len - start) + " follow");
  }
  const uint8_t* raw = bytes + start;
  std::u32string text;
  if (major == 3) {
    // TextDecoder("utf-8") drops a leading BOM (ignoreBOM: false).
    size_t skip = (header_len >= 3 && raw[0] == 0xEF && raw[1] == 0xBB && raw[2] == 0xBF) ? 3 : 0;
    utf8_decode(raw + skip, static_cast<size_t>(header_len) - skip, text);
  } else {
    text.resize(static_cast<size_t>(header_len));
    for (size_t i = 0; i < header_len; ++i) text[i] = raw[i];  // latin1
  }

  const Capture descr = match_descr(text);
  const int fortran = match_fortran(text);
  const Capture shape_m = match_shape(text);
  size_t first = 0;
  while (first < text.size() && js_whitespace(text[first])) ++first;
  if (first >= text.size() || text[first] != U'{' || !descr.found || fortran < 0 || !shape_m.found) {
    return fail("the header is not a dict with 'descr', 'fortran_order' and 'shape'");
  }
  // /^([<>|=]?)([fiub])(\d+)$/ on descr
  const std::string d = utf8_of(text, descr.begin, descr.end);
  size_t p = descr.begin;
  char32_t order = 0;
  if (p < descr.end && (text[p] == U'<' || text[p] == U'>' || text[p] == U'|' || text[p] == U'=')) order = text[p++];
  bool dtype_ok = false;
  std::string code;
  if (p < descr.end && (text[p] == U'f' || text[p] == U'i' || text[p] == U'u' || text[p] == U'b')) {
    code += static_cast<char>(text[p++]);
    const size_t digits = p;
    while (p < descr.end && is_digit(text[p])) code += static_cast<char>(text[p++]);
    dtype_ok = p > digits && p == descr.end;
  }
  const uint32_t item_size = dtype_ok ? item_size_of(code) : 0;
  if (item_size == 0) {
    return fail("dtype '" + d +
                "' is not supported (accepted: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, any byte order)");
  }

  // shapeM[1].split(",").map(trim), a trailing empty part dropped.
  const std::string shape_text = utf8_of(text, shape_m.begin, shape_m.end);
  std::vector<std::pair<size_t, size_t>> parts;
  {
    size_t b = shape_m.begin;
    for (size_t i = shape_m.begin; i <= shape_m.end; ++i) {
      if (i == shape_m.end || text[i] == U',') {
        size_t s = b, e = i;
        while (s < e && js_whitespace(text[s])) ++s;
        while (e > s && js_whitespace(text[e - 1])) --e;
        parts.emplace_back(s, e);
        b = i + 1;
      }
    }
    if (!parts.empty() && parts.back().first == parts.back().second) parts.pop_back();
  }
  std::vector<uint64_t> shape;
  uint64_t size = 1;
  for (const auto& part : parts) {
    const size_t s = part.first, e = part.second;
    size_t q = s;
    while (q < e && is_digit(text[q])) ++q;
    const size_t digits_end = q;
    if (q < e && text[q] == U'L') ++q;
    if (digits_end == s || q != e) {
      return fail("shape (" + shape_text + ") has a dimension '" + utf8_of(text, s, e) +
                  "' that is not a non-negative integer");
    }
    size_t z = s;
    while (z + 1 < digits_end && text[z] == U'0') ++z;
    uint64_t n = 0;
    bool too_large = digits_end - z > 16;
    if (!too_large) {
      for (size_t k = z; k < digits_end; ++k) n = n * 10 + static_cast<uint64_t>(text[k] - U'0');
      too_large = n > kMaxSafe;
    }
    if (too_large) return fail("shape dimension " + utf8_of(text, s, e) + " is too large");
    shape.push_back(n);
    // size * n > 2^40, without overflow (size <= 2^40 here, n <= 2^53 - 1)
    if (size != 0 && n > kMaxElements / size) {
      return fail("declared shape (" + shape_text + ") has more than 2^40 elements");
    }
    size *= n;
  }
  const uint64_t data_offset = start + header_len;
  const uint64_t data_bytes = size * item_size;
  if (has_file_size && file_size < data_offset + data_bytes) {
    std::string dims;
    for (size_t k = 0; k < shape.size(); ++k) {
      if (k) dims += ", ";
      dims += std::to_string(shape[k]);
    }
    return fail("declared shape (" + dims + ") of " + d + " needs " + std::to_string(data_bytes) +
                " data bytes but the file has " + std::to_string(file_size > data_offset ? file_size - data_offset : 0) +
                " (truncated file or lying header)");
  }
  out.version = major;
  out.data_offset = data_offset;
  out.dtype = code;
  out.little_endian = order != U'>';
  out.fortran_order = fortran == 1;
  out.shape = std::move(shape);
  out.size = size;
  out.item_size = item_size;
  return Status::success();
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
