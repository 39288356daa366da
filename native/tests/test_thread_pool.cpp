// The pool runs every index exactly once, from many concurrent callers, and does not deadlock when a loop body
// starts a loop of its own; a cancelled job stops at the next task boundary.
#include <atomic>
#include <chrono>
#include <new>
#include <stdexcept>
#include <string>
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
  kgrank::parallel_for(
      64, 0, [&](size_t) { kgrank::parallel_for(100, 0, [&](size_t j) { nested.fetch_add(static_cast<long>(j)); }); });
  CHECK_EQ(nested.load(), 64L * 4950L);
  kgrank::parallel_for(0, 2, [&](size_t) { CHECK(false); });

  // An exception thrown by fn on a pool thread (std::bad_alloc of an input-sized buffer) reaches the caller of
  // parallel_for once no thread runs fn any more, and the pool goes on working (an exception leaving a pool thread
  // would be std::terminate: the whole process aborted).
  {
    const std::thread::id caller = std::this_thread::get_id();
    int helped = 0;
    for (int round = 0; round < 20; ++round) {
      std::atomic<int> helper_calls{0};
      bool caught = false;
      try {
        kgrank::parallel_for(64, 0, [&](size_t) {
          if (std::this_thread::get_id() != caller) {
            helper_calls.fetch_add(1);
            throw std::bad_alloc();
          }
          std::this_thread::sleep_for(std::chrono::microseconds(200));  // leaves indices to the helpers
        });
      } catch (const std::bad_alloc&) {
        caught = true;
      }
      CHECK(caught == (helper_calls.load() > 0));
      helped += helper_calls.load() > 0;
    }
    if (kgrank::hardware_threads() > 1) CHECK(helped > 0);
    bool caught = false;
    try {
      kgrank::parallel_for(8, 2, [&](size_t i) {
        if (i == 3) throw std::runtime_error("index 3");
      });
    } catch (const std::runtime_error& e) {
      caught = std::string(e.what()) == "index 3";
    }
    CHECK(caught);
    std::atomic<int> after{0};
    kgrank::parallel_for(1000, 0, [&](size_t) { after.fetch_add(1); });
    CHECK_EQ(after.load(), 1000);
  }
  // Cancellation at task boundaries, on one thread and on several: a task that cancels the job finishes, the tasks
  // not started then are skipped, and Cancelled reaches the caller; the pool goes on working. Uncancelled, a control
  // changes nothing; a job cancelled before its loop runs no task at all.
  for (unsigned threads : {1u, 2u, 0u}) {
    kgrank::JobControl control;
    std::atomic<size_t> ran{0};
    bool cancelled = false;
    try {
      kgrank::parallel_for(
          10000, threads,
          [&](size_t i) {
            ran.fetch_add(1);
            if (i == 10) control.cancel();
          },
          &control);
    } catch (const kgrank::Cancelled&) {
      cancelled = true;
    }
    CHECK(cancelled);
    CHECK(ran.load() >= 1);
    CHECK(ran.load() < 10000);
    kgrank::JobControl idle;
    std::atomic<size_t> all{0};
    kgrank::parallel_for(
        5000, threads, [&](size_t) { all.fetch_add(1); }, &idle);
    CHECK_EQ(all.load(), size_t{5000});
    kgrank::JobControl early;
    early.cancel();
    std::atomic<size_t> none{0};
    bool threw = false;
    try {
      kgrank::parallel_for(
          100, threads, [&](size_t) { none.fetch_add(1); }, &early);
    } catch (const kgrank::Cancelled&) {
      threw = true;
    }
    CHECK(threw);
    CHECK_EQ(none.load(), size_t{0});
    // A task's own exception wins over the cancellation.
    kgrank::JobControl both;
    bool runtime = false;
    try {
      kgrank::parallel_for(
          100, threads,
          [&](size_t i) {
            if (i == 0) {
              both.cancel();
              throw std::runtime_error("task");
            }
          },
          &both);
    } catch (const std::runtime_error&) {
      runtime = true;
    } catch (const kgrank::Cancelled&) {
      runtime = false;
    }
    CHECK(runtime);
  }
  TEST_MAIN_END();
}
