// A process-wide, bounded pool of worker threads for data-parallel loops.
// parallel_for() may be called from any thread, concurrently; the caller always takes part in its own loop, so a
// loop makes progress even when every worker is busy with other callers' loops. The pool never grows.
#pragma once
#include <cstddef>
#include <functional>

namespace kgrank {

// Number of hardware threads (at least 1); the default for `threads` options.
unsigned hardware_threads();

// Runs fn(i) for every i in [0, n) on at most max_threads threads (the caller included). max_threads = 0 means
// hardware_threads(). Returns when every fn(i) has returned. If fn throws (std::bad_alloc of an input-sized buffer),
// on whichever thread, the indices not yet started are skipped and the first exception is rethrown here, in the
// caller, once no thread runs fn any more; an exception never leaves a pool thread.
void parallel_for(size_t n, unsigned max_threads, const std::function<void(size_t)>& fn);

}  // namespace kgrank
