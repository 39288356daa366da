// A minimal assertion helper for the core's unit tests (each test binary is one ctest case).
#pragma once
#include <cstdio>
#include <cstdlib>

namespace kgrank_test {
inline int& failures() {
  static int n = 0;
  return n;
}
}  // namespace kgrank_test

#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++kgrank_test::failures();                                                    \
    }                                                                               \
  } while (0)

#define CHECK_EQ(a, b)                                                                                        \
  do {                                                                                                        \
    const auto _va = (a);                                                                                     \
    const auto _vb = (b);                                                                                     \
    if (!(_va == _vb)) {                                                                                      \
      std::fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%.17g vs %.17g)\n", __FILE__, __LINE__, #a, #b, \
                   static_cast<double>(_va), static_cast<double>(_vb));                                       \
      ++kgrank_test::failures();                                                                              \
    }                                                                                                         \
  } while (0)

#define TEST_MAIN_END()                                                    \
  do {                                                                     \
    if (kgrank_test::failures() == 0) {                                    \
      std::printf("ok\n");                                                 \
      return 0;                                                            \
    }                                                                      \
    std::fprintf(stderr, "%d check(s) failed\n", kgrank_test::failures()); \
    return 1;                                                              \
  } while (0)
