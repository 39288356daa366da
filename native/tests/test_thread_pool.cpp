// The pool runs every index exactly once, from many concurrent callers, and does not deadlock when a loop body
// starts a loop of its own.
#include <atomic>
#include <thread>
#include <vector>

#include "check.h"
#include "thread_pool.h"

int main() {
  CHECK(kgrank::hardware_threads() >= 1);
  for (unsigned threads : {0u, 1u, 2u, 8u}) {
    std::vector<std::atomic<int>> hits(10007);
    kgrank::parallel_for(hits.size(), threads, [&](size_t i) { hits[i].fetch_add(1); });
    for (auto& h : hits) CHECK_EQ(h.load(), 1);
  }
  // 16 callers at once, each with its own loop.
  std::vector<std::thread> callers;
  std::atomic<long> total{0};
  for (int c = 0; c < 16; ++c) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 50; ++rep) {
        kgrank::parallel_for(1000, 0, [&](size_t i) { total.fetch_add(static_cast<long>(i)); });
      }
    });
  }
  for (auto& t : callers) t.join();
  CHECK_EQ(total.load(), 16L * 50L * (999L * 1000L / 2L));
  // Nested loops: bodies running on pool workers start loops of their own.
  std::atomic<long> nested{0};
  kgrank::parallel_for(64, 0, [&](size_t) {
    kgrank::parallel_for(100, 0, [&](size_t j) { nested.fetch_add(static_cast<long>(j)); });
  });
  CHECK_EQ(nested.load(), 64L * 4950L);
  kgrank::parallel_for(0, 2, [&](size_t) { CHECK(false); });
  TEST_MAIN_END();
}
