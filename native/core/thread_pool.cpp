#include "thread_pool.h"

#if defined(KGRANK_SINGLE_THREAD)
// One thread (the WebAssembly build, native/wasm/): every loop runs in the caller, in index order, and a cancelled
// job stops before its next index as the pool's loops do.
#include "except.h"

namespace kgrank {

unsigned hardware_threads() { return 1; }

void parallel_for(size_t n, unsigned /*max_threads*/, const std::function<void(size_t)>& fn,
                  const JobControl* control) {
  for (size_t i = 0; i < n; ++i) {
    if (control != nullptr && control->cancelled()) KGRANK_THROW(Cancelled());
    fn(i);
  }
}

}  // namespace kgrank

#else

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
#include <immintrin.h>  // _mm_pause (SSE2, in the x86-64 baseline)
#define KGRANK_X86 1
#endif

namespace kgrank {

unsigned hardware_threads() {
  static const unsigned n = [] {
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1u : std::min(hw, 256u);
  }();
  return n;
}

namespace {

inline void cpu_relax() {
#if defined(KGRANK_X86)
  _mm_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#else
  std::this_thread::yield();
#endif
}

// How long a thread spins on an atomic before it blocks on a condition variable. A blocked thread is woken through
// the kernel, and on a virtual machine an idle vCPU must be rescheduled by the host first, which can make a small
// job slower on 2 threads than on 1 (measured: BENCHMARKS.md, "Notes moved from the kernel sources", thread_pool.cpp
// kSpin). Spinning a little after each job keeps back-to-back jobs (batches of an evaluation, repeated calls) on awake
// threads; the cost is at most this much busy time per thread after its last job.
constexpr std::chrono::microseconds kSpin{100};

// Spins until ready() or the budget is spent; true when ready.
template <typename Ready>
bool spin_until(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

struct Loop {
  std::function<void(size_t)> fn;
  const JobControl* control = nullptr;
  size_t n = 0;
  std::atomic<size_t> next{0};
  std::atomic<size_t> finished{0};
  std::mutex mu;
  std::condition_variable all_done;
  // The first exception fn threw (std::bad_alloc of an input-sized buffer, on any thread), rethrown to the caller
  // once every index is accounted for. An exception must not leave a pool thread: that calls std::terminate.
  std::atomic<bool> failed{false};
  std::exception_ptr error;  // written once, under mu
  // Set when an index was skipped because the job was cancelled (parallel_for then throws Cancelled).
  std::atomic<bool> skipped{false};

  // Claims and runs indices until none are left; after a failure or a cancellation the remaining indices are
  // claimed, not run.
  void work() {
    size_t done_here = 0;
    for (size_t i = next.fetch_add(1, std::memory_order_relaxed); i < n;
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      if (control != nullptr && control->cancelled()) {
        skipped.store(true, std::memory_order_relaxed);
      } else if (!failed.load(std::memory_order_relaxed)) {
        try {
          fn(i);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mu);
          if (!error) error = std::current_exception();
          failed.store(true, std::memory_order_relaxed);
        }
      }
      ++done_here;
    }
    if (done_here > 0 && finished.fetch_add(done_here, std::memory_order_acq_rel) + done_here == n) {
      std::lock_guard<std::mutex> lock(mu);
      all_done.notify_all();
    }
  }
};

class Pool {
 public:
  explicit Pool(unsigned workers) {
    for (unsigned i = 0; i < workers; ++i) {
      std::thread(&Pool::run, this).detach();
    }
  }

  void submit(const std::shared_ptr<Loop>& loop, unsigned helpers) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (unsigned i = 0; i < helpers; ++i) queue_.push_back(loop);
      queued_.fetch_add(helpers, std::memory_order_release);
    }
    if (helpers == 1) {
      wake_.notify_one();
    } else {
      wake_.notify_all();
    }
  }

 private:
  void run() {
    for (;;) {
      spin_until([this] { return queued_.load(std::memory_order_acquire) > 0; });
      std::shared_ptr<Loop> loop;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [this] { return !queue_.empty(); });
        loop = std::move(queue_.front());
        queue_.pop_front();
        queued_.fetch_sub(1, std::memory_order_relaxed);
      }
      loop->work();
    }
  }

  std::atomic<size_t> queued_{0};  // queue_.size(), readable without the lock (for spinning)
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Loop>> queue_;
};

Pool& pool() {
  // Workers are detached and the pool is never destroyed: no join can hang process exit, and a pending loop
  // can never see a destroyed pool. One worker fewer than the hardware threads: the caller is the last one.
  static Pool* p = new Pool(hardware_threads() > 1 ? hardware_threads() - 1 : 0);
  return *p;
}

}  // namespace

void parallel_for(size_t n, unsigned max_threads, const std::function<void(size_t)>& fn, const JobControl* control) {
  if (n == 0) return;
  unsigned threads = max_threads == 0 ? hardware_threads() : std::min(max_threads, hardware_threads());
  if (threads <= 1 || n == 1) {
    for (size_t i = 0; i < n; ++i) {
      if (control != nullptr && control->cancelled()) throw Cancelled();
      fn(i);
    }
    return;
  }
  auto loop = std::make_shared<Loop>();
  loop->fn = fn;
  loop->control = control;
  loop->n = n;
  const unsigned helpers = static_cast<unsigned>(std::min<size_t>(threads - 1, n - 1));
  try {
    pool().submit(loop, helpers);
  } catch (...) {
    // Queueing failed (out of memory), perhaps after some helpers were queued: the caller claims every index left,
    // and a helper that starts later finds none (it only touches the Loop, which it co-owns).
  }
  loop->work();
  if (!spin_until([&] { return loop->finished.load(std::memory_order_acquire) == loop->n; })) {
    std::unique_lock<std::mutex> lock(loop->mu);
    loop->all_done.wait(lock, [&] { return loop->finished.load(std::memory_order_acquire) == loop->n; });
  }
  if (loop->failed.load(std::memory_order_acquire)) {
    std::exception_ptr error;
    {
      std::lock_guard<std::mutex> lock(loop->mu);
      error = loop->error;
    }
    std::rethrow_exception(error);
  }
  if (loop->skipped.load(std::memory_order_acquire)) throw Cancelled();
}

}  // namespace kgrank

#endif  // KGRANK_SINGLE_THREAD
