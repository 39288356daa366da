// The int8 screen's table on disk (native/core/screen.h screen_table_read, interaction.h screen_load): a table made
// from a fuzzed DistMult, ComplEx, TransE-L2 or RotatE-L2 model (screen_cases.h, hostile values included) is written,
// then read back
// whole (it must load, and rank_embeddings with it must give the counts of the screen off, bit for bit), and read
// again after fuzzed damage (bytes flipped or overwritten, the file cut or extended, any header field): that must be
// refused with a message, never crash, hang or load. Raw fuzzed bytes as a file must be refused the same way.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "interaction.h"
#include "screen_cases.h"  // native/tests: the case generator shared with test_screen

using namespace kgrank;

namespace {

std::string temp_path() { return "/tmp/kgrank-fuzz-screen-file-" + std::to_string(getpid()) + ".kgq"; }

std::vector<unsigned char> read_all(const std::string& path) {
  std::vector<unsigned char> out;
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    unsigned char buf[4096];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + got);
    std::fclose(f);
  }
  return out;
}

void write_all(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  FUZZ_CHECK(f != nullptr);
  FUZZ_CHECK(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  std::fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  const std::string path = temp_path();
  if (p.ConsumeBool()) {  // raw bytes: refused (or, vanishingly unlikely, a valid table), never a crash
    const std::vector<unsigned char> raw = p.ConsumeRemainingBytes<unsigned char>();
    write_all(path, raw);
    ScreenFileKey key;
    ScreenTable t;
    const Status s = screen_table_read(path.c_str(), &key, &t);
    FUZZ_CHECK(s.ok() || !s.message.empty());
    std::remove(path.c_str());
    return 0;
  }
  const size_t n = p.ConsumeIntegralInRange<size_t>(1, 300);
  const size_t w = p.ConsumeIntegralInRange<size_t>(1, 24);
  const size_t rows = p.ConsumeIntegralInRange<size_t>(1, 12);
  const bool complex = p.ConsumeBool();
  const bool distance = p.ConsumeBool();
  const int special = p.ConsumeIntegralInRange<int>(-1, 8);
  const kgrank_screen::Next next = [&] { return p.ConsumeIntegral<uint32_t>(); };
  const kgrank_screen::Case c = kgrank_screen::make_case(next, n, w, rows, complex, special, distance);
  const EmbeddingModel<float> m{c.interaction, c.layout, c.ent.data(), c.rel.data(), c.n,
                                c.nr,          c.width,  c.width,      0.0,          nullptr};
  ScreenTable made;
  FUZZ_CHECK(screen_prepare(m, SimdLevel::Scalar, 1, &made).ok());
  FUZZ_CHECK(screen_save(m, made, path.c_str()).ok());
  const std::vector<unsigned char> bytes = read_all(path);
  // Whole: it loads, and ranks as the screen off does.
  ScreenTable back;
  FUZZ_CHECK(screen_load(m, path.c_str(), &back).ok());
  const auto off = kgrank_screen::rank(c, ScreenMode::Off, SimdLevel::Scalar, 1);
  for (SimdLevel level : kgrank_fuzz::levels()) {
    FUZZ_CHECK(kgrank_screen::same(kgrank_screen::rank(c, ScreenMode::Int8, level, 1, &back), off));
  }
  // Damaged: refused with a message.
  std::vector<unsigned char> bad = bytes;
  const int how = p.ConsumeIntegralInRange<int>(0, 3);
  if (how == 0) {  // bytes flipped
    const size_t k = p.ConsumeIntegralInRange<size_t>(1, 4);
    for (size_t i = 0; i < k; ++i) bad[p.ConsumeIntegralInRange<size_t>(0, bad.size() - 1)] ^= 1u << (i % 8);
  } else if (how == 1) {  // cut
    bad.resize(p.ConsumeIntegralInRange<size_t>(0, bad.size() - 1));
  } else if (how == 2) {  // extended
    bad.push_back(p.ConsumeIntegral<unsigned char>());
  } else {  // a header word (of the first 96 bytes) overwritten with fuzzed bits
    const size_t at = p.ConsumeIntegralInRange<size_t>(0, 11) * 8;
    const uint64_t v = p.ConsumeIntegral<uint64_t>();
    std::vector<unsigned char> was(bad.begin() + at, bad.begin() + at + 8);
    std::memcpy(bad.data() + at, &v, 8);
    if (std::equal(was.begin(), was.end(), bad.begin() + at)) bad[at] ^= 1;
  }
  write_all(path, bad);
  ScreenTable damaged;
  const Status s = screen_load(m, path.c_str(), &damaged);
  FUZZ_CHECK(!s.ok());
  FUZZ_CHECK(!s.message.empty());
  std::remove(path.c_str());
  return 0;
}
