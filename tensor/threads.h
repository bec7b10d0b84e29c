// How many threads minigrad's kernels use, and the helpers that split work across them.
//
// minigrad runs its parallel kernels (elementwise, reductions, softmax, layer norm, attention, and the
// pieces of a split matrix product) on a thread pool of its own, and calls OpenBLAS single-threaded.
// The pool's idle workers spin for a few tens of microseconds, then sleep in the kernel until the next
// parallel region: on a machine shared with another busy process they give the core back, where
// OpenMP's default spin-wait would hold it for milliseconds after every region (docs/history/performance.md,
// "Threads under load: earlier runs").
//
// The count: the environment variable MINIGRAD_NUM_THREADS at start-up, or set_num_threads() at any
// time. Unset, it is the number of hardware threads.
//
// Dynamic threads (on by default; MINIGRAD_DYNAMIC_THREADS=0 at start-up or set_dynamic_threads(false)
// turns them off), as OpenMP's omp_set_dynamic: while other processes keep some of the machine's cores
// busy, a region runs on the cores they leave, its tasks shared among fewer threads, down to the caller
// alone. Two threads on one free core would each wait for the other at every region. The tasks are the
// same either way, so results do not change.
#pragma once

#include <algorithm>
#include <cstdint>

namespace minigrad {

int num_threads();
void set_num_threads(int n);

void set_dynamic_threads(bool on);
bool dynamic_threads();

// True on a thread that is running a task of parallel_run (the caller's own share included): work
// started there runs on that thread alone.
bool in_parallel();

namespace detail {
void run_tasks(int threads, void (*call)(const void* task, int t), const void* task);
}  // namespace detail

// Calls task(t) for every t in [0, threads) at once, t = 0 on the calling thread and the others on the
// pool's workers, and returns when all have returned. With dynamic threads on a busy machine, the tasks
// are shared among fewer threads (t, t + m, ... on thread t of m). Inside a task, or while another
// thread of the program has the pool, the calls run one after another on the calling thread. If tasks
// throw, the first exception is rethrown once every task has finished.
template <typename Task>
void parallel_run(int threads, const Task& task) {
  detail::run_tasks(
      threads, [](const void* f, int t) { (*static_cast<const Task*>(f))(t); }, &task);
}

// Work below this many elements runs on the calling thread: waking a second thread costs about a
// microsecond, which is more than a small kernel takes.
inline constexpr int64_t kParallelGrain = 32768;

// Calls body(begin, end) on disjoint, contiguous pieces of [0, n), one per thread, in parallel when the
// work is large enough. `cost_per_item` scales the grain for items that are whole rows rather than
// single elements.
template <typename Body>
void parallel_for(int64_t n, int64_t cost_per_item, Body&& body) {
  if (n <= 0) return;
  const int64_t work = n * std::max<int64_t>(cost_per_item, 1);
  const int threads = static_cast<int>(std::min<int64_t>({num_threads(), work / kParallelGrain, n}));
  if (threads <= 1 || in_parallel()) {
    body(int64_t{0}, n);
    return;
  }
  parallel_run(threads, [&](int t) { body(n * t / threads, n * (t + 1) / threads); });
}

}  // namespace minigrad
