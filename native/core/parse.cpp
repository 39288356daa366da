// See parse.h. Every rule here mirrors a line of src/io/npy.ts or src/io/tsv.ts; the parity test
// (test/parse.test.ts) checks both against each other on random and mutated inputs.
#include "parse.h"

#include <algorithm>
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


bool is_digit(char32_t c) { return c >= U'0' && c <= U'9'; }

bool has_at(const std::u32string& t, size_t i, const char* lit) {
  const size_t n = std::strlen(lit);
  if (i + n > t.size()) return false;
  for (size_t k = 0; k < n; ++k) {
    if (t[i + k] != static_cast<char32_t>(static_cast<unsigned char>(lit[k]))) return false;
  }
  return true;
}

// ---- The header as a Python literal (twin of PyLiteralParser in src/io/npy.ts, rule for rule) ---------------------

constexpr size_t kMaxDepth = 32;  // nesting of tuples and lists
constexpr size_t kEcho = 60;      // code points of the header echoed in a message

struct PyValue {
  enum Kind { Str, Bool, None, Int, Tuple, List } kind = None;
  std::u32string text;           // Str
  bool value = false;            // Bool
  bool negative = false;         // Int
  std::vector<uint8_t> digits;   // Int
  std::vector<PyValue> items;    // Tuple, List
  size_t start = 0, end = 0;     // code point span in the header
};

bool py_ws(char32_t c) { return c == 0x20 || c == 0x09 || c == 0x0C || c == 0x0A || c == 0x0D; }
bool py_ident(char32_t c) {
  return (c >= U'A' && c <= U'Z') || (c >= U'a' && c <= U'z') || is_digit(c) || c == U'_' || c >= 0x80;
}
int hex_value(char32_t c) {
  if (is_digit(c)) return static_cast<int>(c - U'0');
  if (c >= U'a' && c <= U'f') return static_cast<int>(c - U'a' + 10);
  if (c >= U'A' && c <= U'F') return static_cast<int>(c - U'A' + 10);
  return -1;
}

}  // namespace

std::string echo_code_points(const std::u32string& t, size_t start, size_t end) {
  std::string s;
  const size_t stop = std::min(end, start + kEcho);
  for (size_t i = start; i < stop; ++i) {
    const uint32_t c = t[i];
    if (c < 0x20 || (c >= 0x7F && c <= 0x9F)) s += '?';
    else if (c >= 0xD800 && c <= 0xDFFF) append_utf8(s, 0xFFFD);
    else append_utf8(s, c);
  }
  if (end > stop) s += "...";
  return s;
}

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

namespace {

class PyLiteralParser {
 public:
  PyLiteralParser(const std::u32string& t, bool long_suffix) : t_(t), long_suffix_(long_suffix) {}

  bool failed = false;
  bool not_dict = false;
  std::string what;
  size_t at = 0;

  // The whole header: a dict, then only whitespace and comments. Entries in order (duplicates kept).
  bool dict(std::vector<std::pair<PyValue, PyValue>>& entries) {
    ws();
    if (i_ >= t_.size() || t_[i_] != U'{') {
      failed = not_dict = true;
      at = i_;
      return false;
    }
    ++i_;
    bool comma = true;
    for (;;) {
      ws();
      if (i_ < t_.size() && t_[i_] == U'}') {
        ++i_;
        break;
      }
      if (!comma) return fail("expected ',' or '}'");
      PyValue key, value;
      if (!parse_value(1, key)) return false;
      ws();
      if (i_ >= t_.size() || t_[i_] != U':') return fail("expected ':' after a key");
      ++i_;
      if (!parse_value(1, value)) return false;
      entries.emplace_back(std::move(key), std::move(value));
      ws();
      comma = i_ < t_.size() && t_[i_] == U',';
      if (comma) ++i_;
    }
    ws();
    if (i_ < t_.size()) return fail("text after the dict");
    return true;
  }

 private:
  const std::u32string& t_;
  const bool long_suffix_;
  size_t i_ = 0;

  char32_t at_(size_t k) const { return k < t_.size() ? t_[k] : char32_t(0xFFFFFFFFu); }
  static constexpr char32_t kEnd = char32_t(0xFFFFFFFFu);

  bool fail(const std::string& w) { return fail_at(w, i_); }
  bool fail_at(const std::string& w, size_t where) {
    failed = true;
    what = w;
    at = where;
    return false;
  }

  void ws() {
    for (;;) {
      const char32_t c = at_(i_);
      if (c == kEnd) return;
      if (py_ws(c)) {
        ++i_;
      } else if (c == U'#') {
        while (i_ < t_.size() && t_[i_] != 0x0A && t_[i_] != 0x0D) ++i_;
      } else if (c == U'\\' && (at_(i_ + 1) == 0x0A || at_(i_ + 1) == 0x0D)) {
        i_ += (at_(i_ + 1) == 0x0D && at_(i_ + 2) == 0x0A) ? 3 : 2;
      } else {
        return;
      }
    }
  }

  // Length of the ASCII word [A-Za-z0-9_]* starting at k.
  size_t word(size_t k) const {
    size_t n = 0;
    while (k + n < t_.size() && t_[k + n] < 0x80 && py_ident(t_[k + n])) ++n;
    return n;
  }

  bool is_prefix(size_t k, size_t n) const {
    if (n != 1) return false;
    const char32_t c = t_[k];
    return c == U'u' || c == U'U' || c == U'r' || c == U'R';
  }

  static bool is_q(char32_t c) { return c == U'\'' || c == U'"'; }

  bool parse_value(size_t depth, PyValue& out) {
    ws();
    const size_t start = i_;
    const char32_t c = at_(i_);
    if (c == kEnd) return fail("the header ends where a value should be");
    if (is_q(c)) return strings(start, out);
    if (c == U'(' || c == U'[') return sequence(depth, start, out);
    if (c == U'-' || c == U'+' || is_digit(c)) return integer(start, out);
    if (py_ident(c) && c < 0x80) {
      const size_t n = word(i_);
      const char32_t q = at_(i_ + n);
      if (is_prefix(i_, n) && is_q(q)) return strings(start, out);
      if (q == kEnd || !py_ident(q)) {
        if (has_at(t_, i_, "True") && n == 4) {
          i_ += 4;
          out.kind = PyValue::Bool;
          out.value = true;
          out.start = start;
          out.end = i_;
          return true;
        }
        if (has_at(t_, i_, "False") && n == 5) {
          i_ += 5;
          out.kind = PyValue::Bool;
          out.value = false;
          out.start = start;
          out.end = i_;
          return true;
        }
        if (has_at(t_, i_, "None") && n == 4) {
          i_ += 4;
          out.kind = PyValue::None;
          out.start = start;
          out.end = i_;
          return true;
        }
      }
      return fail("'" + echo_code_points(t_, start, start + n) + "' is not a literal NumPy writes");
    }
    return fail("unexpected '" + echo_code_points(t_, start, start + 1) + "'");
  }

  // One or more adjacent string literals, joined.
  bool strings(size_t start, PyValue& out) {
    out.kind = PyValue::Str;
    out.start = start;
    for (;;) {
      if (!string(out.text)) return false;
      const size_t save = i_;
      ws();
      const char32_t c = at_(i_);
      if (is_q(c)) continue;
      if (c != kEnd && py_ident(c)) {
        const size_t n = word(i_);
        if (is_prefix(i_, n) && is_q(at_(i_ + n))) continue;
      }
      i_ = save;
      out.end = i_;
      return true;
    }
  }

  bool string(std::u32string& out) {
    const size_t begin = i_;
    bool raw = false;
    if (!is_q(t_[i_])) {
      raw = t_[i_] == U'r' || t_[i_] == U'R';
      ++i_;
    }
    const char32_t q = t_[i_];
    const bool triple = at_(i_ + 1) == q && at_(i_ + 2) == q;
    i_ += triple ? 3 : 1;
    for (;;) {
      const char32_t c = at_(i_);
      if (c == kEnd || (!triple && (c == 0x0A || c == 0x0D))) return fail_at("unterminated string", begin);
      if (c == q && (!triple || (at_(i_ + 1) == q && at_(i_ + 2) == q))) {
        i_ += triple ? 3 : 1;
        return true;
      }
      if (c != U'\\') {
        out.push_back(c);
        ++i_;
        continue;
      }
      const char32_t e = at_(i_ + 1);
      if (e == kEnd) return fail_at("unterminated string", begin);
      if (raw) {
        out.push_back(U'\\');
        out.push_back(e);
        i_ += 2;
        continue;
      }
      i_ += 2;
      switch (e) {
        case 0x0A: break;
        case 0x0D: if (at_(i_) == 0x0A) ++i_; break;
        case U'\\': case U'\'': case U'"': out.push_back(e); break;
        case U'a': out.push_back(7); break;
        case U'b': out.push_back(8); break;
        case U'f': out.push_back(12); break;
        case U'n': out.push_back(10); break;
        case U'r': out.push_back(13); break;
        case U't': out.push_back(9); break;
        case U'v': out.push_back(11); break;
        case U'x': case U'u': case U'U': {
          const size_t n = e == U'x' ? 2 : e == U'u' ? 4 : 8;
          uint32_t v = 0;
          for (size_t k = 0; k < n; ++k) {
            const int h = hex_value(at_(i_ + k));
            if (h < 0) return fail_at(std::string("truncated \\") + static_cast<char>(e) + " escape", i_ - 2);
            v = v * 16 + static_cast<uint32_t>(h);
          }
          if (v > 0x10FFFF) return fail_at("\\U escape past U+10FFFF", i_ - 2);
          i_ += n;
          out.push_back(static_cast<char32_t>(v));
          break;
        }
        case U'N': return fail_at("\\N{...} escapes are not supported", i_ - 2);
        default:
          if (e >= U'0' && e <= U'7') {
            uint32_t v = e - U'0';
            for (int k = 0; k < 2 && at_(i_) >= U'0' && at_(i_) <= U'7'; ++k) v = v * 8 + (t_[i_++] - U'0');
            out.push_back(static_cast<char32_t>(v));
          } else {
            out.push_back(U'\\');
            out.push_back(e);
          }
      }
    }
  }

  bool integer(size_t start, PyValue& out) {
    out.kind = PyValue::Int;
    out.start = start;
    out.negative = at_(i_) == U'-';
    if (at_(i_) == U'-' || at_(i_) == U'+') {
      ++i_;
      ws();
    }
    if (!is_digit(at_(i_))) return fail("a sign without a number");
    const size_t first = i_;
    for (;;) {
      const char32_t c = at_(i_);
      if (c != kEnd && is_digit(c)) {
        out.digits.push_back(static_cast<uint8_t>(c - U'0'));
      } else if (c == U'_' && is_digit(at_(i_ + 1)) && i_ > first) {
        // separator
      } else {
        break;
      }
      ++i_;
    }
    bool nonzero = false;
    for (uint8_t d : out.digits) nonzero = nonzero || d != 0;
    if (out.digits[0] == 0 && nonzero) return fail_at("leading zeros in a decimal integer", first);
    if (long_suffix_ && (at_(i_) == U'L' || at_(i_) == U'l')) ++i_;
    const char32_t c = at_(i_);
    if (c != kEnd && (py_ident(c) || c == U'.')) return fail_at("a number NumPy does not write (only decimal integers)", first);
    out.end = i_;
    return true;
  }

  bool sequence(size_t depth, size_t start, PyValue& out) {
    const char32_t open = t_[i_];
    const char32_t close = open == U'(' ? U')' : U']';
    if (depth >= kMaxDepth) return fail("nested more than " + std::to_string(kMaxDepth) + " deep");
    ++i_;
    std::vector<PyValue> items;
    bool comma = false;
    for (;;) {
      ws();
      if (at_(i_) == close) {
        ++i_;
        break;
      }
      if (!items.empty() && !comma) return fail(std::string("expected ',' or '") + static_cast<char>(close) + "'");
      items.emplace_back();
      if (!parse_value(depth + 1, items.back())) return false;
      ws();
      comma = at_(i_) == U',';
      if (comma) ++i_;
    }
    if (open == U'(' && items.size() == 1 && !comma) {
      out = std::move(items[0]);
    } else {
      out.kind = open == U'(' ? PyValue::Tuple : PyValue::List;
      out.items = std::move(items);
    }
    out.start = start;
    out.end = i_;
    return true;
  }
};


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
    // NumPy decodes a 3.0 header as strict UTF-8 (a BOM is not skipped: it is a character Python refuses there).
    if (utf8_error_offset(raw, static_cast<size_t>(header_len)) != kUtf8Valid) {
      return fail("the version 3.0 header is not valid UTF-8; save the file with numpy.save()");
    }
    utf8_decode(raw, static_cast<size_t>(header_len), text);
  } else {
    text.resize(static_cast<size_t>(header_len));
    for (size_t i = 0; i < header_len; ++i) text[i] = raw[i];  // latin1
  }

  std::vector<std::pair<PyValue, PyValue>> entries;
  PyLiteralParser parser(text, major != 3);
  if (!parser.dict(entries)) {
    if (parser.not_dict) {
      return fail("the header is not a dict with 'descr', 'fortran_order' and 'shape' (it starts: " +
                  echo_code_points(text, parser.at, text.size()) + ")");
    }
    return fail("the header is not a valid Python dict literal: " + parser.what + " at character " +
                std::to_string(parser.at + 1) + " (near: " + echo_code_points(text, parser.at, text.size()) +
                "); save the file with numpy.save()");
  }
  const PyValue* descr = nullptr;
  const PyValue* fortran = nullptr;
  const PyValue* shape_v = nullptr;
  for (const auto& kv : entries) {
    const PyValue& k = kv.first;
    if (k.kind != PyValue::Str) {
      return fail("the header has a key " + echo_code_points(text, k.start, k.end) + " that is not a string");
    }
    // A Python dict literal: the last duplicate wins.
    if (k.text == U"descr") descr = &kv.second;
    else if (k.text == U"fortran_order") fortran = &kv.second;
    else if (k.text == U"shape") shape_v = &kv.second;
    else {
      return fail("the header has a key '" + echo_code_points(k.text, 0, k.text.size()) +
                  "' besides 'descr', 'fortran_order' and 'shape' (NumPy refuses such files too)");
    }
  }
  const char* const keys[] = {"descr", "fortran_order", "shape"};
  const PyValue* const found[] = {descr, fortran, shape_v};
  for (int k = 0; k < 3; ++k) {
    if (found[k] == nullptr) {
      return fail(std::string("the header has no '") + keys[k] +
                  "' (NumPy writes a dict with 'descr', 'fortran_order' and 'shape')");
    }
  }
  static const char* const kAccepted = "(accepted: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, any byte order)";
  if (descr->kind != PyValue::Str) {
    return fail("'descr' is not a string but " + echo_code_points(text, descr->start, descr->end) +
                ": structured and object dtypes are not supported " + kAccepted);
  }
  // /^([<>|=]?)([fiub])(\d+)$/ on descr
  const std::u32string& dt = descr->text;
  const std::string d = echo_code_points(dt, 0, dt.size());
  size_t p = 0;
  char32_t order = 0;
  bool dtype_ok = false;
  std::string code;
  if (dt.size() <= 8) {
    if (p < dt.size() && (dt[p] == U'<' || dt[p] == U'>' || dt[p] == U'|' || dt[p] == U'=')) order = dt[p++];
    if (p < dt.size() && (dt[p] == U'f' || dt[p] == U'i' || dt[p] == U'u' || dt[p] == U'b')) {
      code += static_cast<char>(dt[p++]);
      const size_t digits = p;
      while (p < dt.size() && is_digit(dt[p])) code += static_cast<char>(dt[p++]);
      dtype_ok = p > digits && p == dt.size();
    }
  }
  const uint32_t item_size = dtype_ok ? item_size_of(code) : 0;
  if (item_size == 0) return fail("dtype '" + d + "' is not supported " + kAccepted);
  if (fortran->kind != PyValue::Bool) {
    return fail("'fortran_order' is " + echo_code_points(text, fortran->start, fortran->end) + ", not True or False");
  }
  if (shape_v->kind != PyValue::Tuple) {
    return fail("'shape' is not a tuple but " + echo_code_points(text, shape_v->start, shape_v->end) +
                ": it must be a tuple of non-negative integers such as (1000, 14541)");
  }
  std::vector<uint64_t> shape;
  uint64_t size = 1;
  for (const PyValue& item : shape_v->items) {
    size_t z = 0;
    const bool is_int = item.kind == PyValue::Int;
    if (is_int) {
      while (z + 1 < item.digits.size() && item.digits[z] == 0) ++z;
    }
    if (!is_int || (item.negative && item.digits[z] != 0)) {
      return fail("shape has a dimension " + echo_code_points(text, item.start, item.end) +
                  " that is not a non-negative integer");
    }
    const size_t ndigits = item.digits.size() - z;
    uint64_t n = 0;
    if (ndigits <= 16) {
      for (size_t k = z; k < item.digits.size(); ++k) n = n * 10 + item.digits[k];
    }
    if (ndigits > 16 || n > kMaxSafe) {
      return fail("shape dimension " + echo_code_points(text, item.start, item.end) + " is too large");
    }
    shape.push_back(n);
    // size * n > 2^40, without overflow (size <= 2^40 here, n <= 2^53 - 1)
    if (size != 0 && n > kMaxElements / size) {
      return fail("declared shape " + echo_code_points(text, shape_v->start, shape_v->end) +
                  " has more than 2^40 elements");
    }
    size *= n;
  }
  const uint64_t data_offset = start + header_len;
  const uint64_t data_bytes = size * item_size;
  if (has_file_size && file_size < data_offset + data_bytes) {
    std::string dims;
    const size_t shown = shape.size() <= 8 ? shape.size() : 6;
    for (size_t k = 0; k < shown; ++k) {
      if (k) dims += ", ";
      dims += std::to_string(shape[k]);
    }
    if (shape.size() > 8) dims += ", ... (" + std::to_string(shape.size()) + " dimensions)";
    return fail("declared shape (" + dims + ") of " + d + " needs " + std::to_string(data_bytes) +
                " data bytes but the file has " + std::to_string(file_size > data_offset ? file_size - data_offset : 0) +
                " (truncated file or lying header)");
  }
  out.version = major;
  out.data_offset = data_offset;
  out.dtype = code;
  out.little_endian = order != U'>';
  out.fortran_order = fortran->value;
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
  // The bytes must be UTF-8 (a Latin-1 "caf\xe9" and "caf\xe8" would both decode to "caf\uFFFD" and merge two entities).
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
    return Status::invalid("line " + std::to_string(line) + " is not valid UTF-8 (byte 0x" + kHex[b >> 4] + kHex[b & 15] +
                           " at byte " + std::to_string(bad - line_start + 1) +
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
