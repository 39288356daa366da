#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kgrank {

unsigned hardware_threads() {
  static const unsigned n = [] {
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1u : std::min(hw, 256u);
  }();
  return n;
}

namespace {

struct Loop {
  std::function<void(size_t)> fn;
  size_t n = 0;
  std::atomic<size_t> next{0};
  std::atomic<size_t> finished{0};
  std::mutex mu;
  std::condition_variable all_done;

  // Claims and runs indices until none are left.
  void work() {
    size_t done_here = 0;
    for (size_t i = next.fetch_add(1, std::memory_order_relaxed); i < n;
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      fn(i);
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
      std::shared_ptr<Loop> loop;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [this] { return !queue_.empty(); });
        loop = std::move(queue_.front());
        queue_.pop_front();
      }
      loop->work();
    }
  }

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

void parallel_for(size_t n, unsigned max_threads, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  unsigned threads = max_threads == 0 ? hardware_threads() : std::min(max_threads, hardware_threads());
  if (threads <= 1 || n == 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  auto loop = std::make_shared<Loop>();
  loop->fn = fn;
  loop->n = n;
  const unsigned helpers = static_cast<unsigned>(std::min<size_t>(threads - 1, n - 1));
  pool().submit(loop, helpers);
  loop->work();
  std::unique_lock<std::mutex> lock(loop->mu);
  loop->all_done.wait(lock, [&] { return loop->finished.load(std::memory_order_acquire) == loop->n; });
}

}  // namespace kgrank
