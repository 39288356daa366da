// A process-wide, bounded pool of worker threads for data-parallel loops.
// parallel_for() may be called from any thread, concurrently; the caller always takes part in its own loop, so a
// loop makes progress even when every worker is busy with other callers' loops. The pool never grows.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>

namespace kgrank {

// Cancellation and progress of one job (an async binding's call), shared by whoever may cancel it - any thread, at
// any time - and the loops that run it. Drivers that take one (count.h CountOptions::control, rank_embeddings) pass it
// to parallel_for, which checks `cancelled()` before each task starts: a cancelled job stops at the next task
// boundary. Progress is counted in work units of the driver's choosing: it adds the job's total once, before its
// loops, and advances as tasks finish; a reader on another thread sees done() <= total() (both may be 0 at first).
class JobControl {
 public:
  void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }
  void add_total(uint64_t units) { total_.fetch_add(units, std::memory_order_relaxed); }
  void advance(uint64_t units) { done_.fetch_add(units, std::memory_order_relaxed); }
  uint64_t done() const { return done_.load(std::memory_order_relaxed); }
  uint64_t total() const { return total_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
  std::atomic<uint64_t> done_{0};
  std::atomic<uint64_t> total_{0};
};

// Thrown by parallel_for in its caller when a cancelled job skipped tasks: the driver's work is incomplete, its
// buffers are released as the exception unwinds, and the async runner (native/addon/async.h) rejects the job.
class Cancelled : public std::exception {
 public:
  const char* what() const noexcept override { return "the job was cancelled"; }
};

// Number of hardware threads (at least 1); the default for `threads` options.
unsigned hardware_threads();

// Runs fn(i) for every i in [0, n) on at most max_threads threads (the caller included). max_threads = 0 means
// hardware_threads(). Returns when every fn(i) has returned. If fn throws (std::bad_alloc of an input-sized buffer),
// on whichever thread, the indices not yet started are skipped and the first exception is rethrown here, in the
// caller, once no thread runs fn any more; an exception never leaves a pool thread.
// With a `control`, an index whose task has not started when control->cancelled() is seen is skipped the same way,
// and then Cancelled is thrown here (unless a task threw: that exception wins). When every task had started, the
// loop completes and nothing is thrown: the caller's result is whole.
void parallel_for(size_t n, unsigned max_threads, const std::function<void(size_t)>& fn,
                  const JobControl* control = nullptr);

}  // namespace kgrank
