#include "minigrad/tensor/threads.h"

#include <cblas.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace minigrad {

namespace {

int default_threads() {
  const int hardware = std::max(1u, std::thread::hardware_concurrency());
  const char* env = std::getenv("MINIGRAD_NUM_THREADS");
  if (env == nullptr || *env == '\0') return hardware;
  char* end = nullptr;
  const long n = std::strtol(env, &end, 10);
  if (*end != '\0' || n < 1 || n > 1024) {
    // Start-up is no place to throw; say what was ignored and carry on.
    std::cerr << "minigrad: MINIGRAD_NUM_THREADS='" << env << "' is not a whole number from 1 to 1024; using "
              << hardware << " threads\n";
    return hardware;
  }
  return static_cast<int>(n);
}

bool default_dynamic() {
  const char* env = std::getenv("MINIGRAD_DYNAMIC_THREADS");
  if (env == nullptr || *env == '\0') return true;
  const std::string value = env;
  if (value == "0" || value == "false") return false;
  if (value != "1" && value != "true") {
    std::cerr << "minigrad: MINIGRAD_DYNAMIC_THREADS='" << env
              << "' is not 0, 1, false or true; using true\n";
  }
  return true;
}

// How long an idle thread spins before it sleeps. Long enough to bridge most gaps between two kernels of
// a training step, so that a busy run seldom pays a wake-up (tens of microseconds on a virtual machine);
// short enough that an idle thread soon hands its core to another process. With no spin a small model's
// steps were slower, and with a longer one two small trainings side by side slowed each other more
// (measured: docs/history/performance.md, "Threads under load: earlier runs").
constexpr std::chrono::microseconds kSpinTime{50};

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Waits until value != old and returns the new value: spins for kSpinTime, then sleeps in the kernel
// (a futex) until a store to value is followed by a notify. `sleepers`, if given, counts the threads
// asleep there.
uint32_t await_change(const std::atomic<uint32_t>& value, uint32_t old,
                      std::atomic<int>* sleepers = nullptr) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  do {
    for (int i = 0; i < 64; ++i) {
      const uint32_t now = value.load(std::memory_order_acquire);
      if (now != old) return now;
      cpu_relax();
    }
  } while (std::chrono::steady_clock::now() < deadline);
  if (sleepers != nullptr) sleepers->fetch_add(1, std::memory_order_relaxed);
  uint32_t now = old;
  while (now == old) {
    value.wait(old, std::memory_order_acquire);
    now = value.load(std::memory_order_acquire);
  }
  if (sleepers != nullptr) sleepers->fetch_sub(1, std::memory_order_relaxed);
  return now;
}

// How many cores other threads of the machine keep busy. Linux's /proc/loadavg ends with "3/85 12345":
// 3 threads runnable at this moment, machine-wide, of 85. Taking off our own awake threads leaves the
// others. One reading is a snapshot (a shell or a daemon runs for a moment), so regions use a moving
// average of readings at least kSampleEvery apart, over about the last four: a busy neighbour is seen
// after 10 to 15 ms, and so is its end. Not on Linux: no readings, and every core counts as free.
class MachineLoad {
 public:
  MachineLoad()
      : fd_(::open("/proc/loadavg", O_RDONLY | O_CLOEXEC)),
        cores_(static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)))) {}
  ~MachineLoad() {
    if (fd_ >= 0) ::close(fd_);
  }
  MachineLoad(const MachineLoad&) = delete;
  MachineLoad& operator=(const MachineLoad&) = delete;

  // The threads a region of `wanted` tasks should run on, given how many of ours are runnable now (the
  // caller, and the workers that are not asleep): the cores the others leave, at least one.
  int threads_for(int wanted, int ours_awake) {
    if (fd_ < 0) return wanted;
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_sample_) {
      next_sample_ = now + kSampleEvery;
      const int runnable = read_runnable();
      if (runnable > 0) others_ += kWeight * (std::max(0, runnable - ours_awake) - others_);
    }
    return std::clamp(cores_ - static_cast<int>(std::lround(others_)), 1, wanted);
  }

 private:
  static constexpr std::chrono::milliseconds kSampleEvery{5};
  static constexpr double kWeight = 0.25;

  int read_runnable() const {  // the 3 of "3/85"; -1 if the file cannot be read
    char text[128];
    const ssize_t n = ::pread(fd_, text, sizeof text - 1, 0);  // a fresh snapshot at each read
    if (n <= 0) return -1;
    text[n] = '\0';
    const char* slash = std::strchr(text, '/');
    if (slash == nullptr) return -1;
    const char* start = slash;
    while (start > text && start[-1] != ' ') --start;
    return std::atoi(start);
  }

  int fd_;
  int cores_;
  std::chrono::steady_clock::time_point next_sample_{};
  double others_ = 0;  // the moving average
};

thread_local bool inside_task = false;

// The workers, and the one parallel region they run at a time. A region: the caller publishes the task,
// bumps `generation_` (release) and wakes the sleepers; every worker, whether its index takes part or
// not, sees the new generation, runs its share of the tasks if it has one, and counts `pending_` down;
// the caller runs its own share and waits for `pending_` to reach 0 (acquire). So a region's writes are
// seen by the code after it, as at the end of an OpenMP parallel region. With dynamic threads, a region
// runs on no more threads than the cores other processes leave free (MachineLoad); on one, the caller
// runs every task and wakes no worker.
class WorkerPool {
 public:
  ~WorkerPool() {
    const std::lock_guard lock(mutex_);
    stop_workers();
  }

  void run(int threads, void (*call)(const void*, int), const void* task) {
    auto one_after_another = [&] {
      for (int t = 0; t < threads; ++t) call(task, t);
    };
    if (inside_task) return one_after_another();  // a region inside a region
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return one_after_another();  // another thread of the program has the pool
    const int awake = 1 + static_cast<int>(workers_.size()) - sleepers_.load(std::memory_order_relaxed);
    const int running =
        dynamic_.load(std::memory_order_relaxed) ? load_.threads_for(threads, awake) : threads;
    while (static_cast<int>(workers_.size()) < running - 1) {
      const int index = static_cast<int>(workers_.size()) + 1;
      workers_.emplace_back([this, index, seen = generation_.load()] { work(index, seen); });
    }
    call_ = call;
    task_ = task;
    tasks_ = threads;
    running_ = running;
    error_ = nullptr;
    if (running > 1) {
      pending_.store(static_cast<uint32_t>(workers_.size()), std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      generation_.notify_all();
    }
    inside_task = true;
    run_share(0);
    inside_task = false;
    if (running > 1) {
      for (uint32_t left = pending_.load(std::memory_order_acquire); left != 0;) {
        left = await_change(pending_, left);
      }
    }
    if (error_) std::rethrow_exception(error_);
  }

  void set_dynamic(bool on) { dynamic_.store(on, std::memory_order_relaxed); }
  bool dynamic() const { return dynamic_.load(std::memory_order_relaxed); }

  // Lets go of the workers beyond `count` (they are started again when a region needs them).
  void shrink_to(int count) {
    if (inside_task) return;
    const std::lock_guard lock(mutex_);
    if (static_cast<int>(workers_.size()) > count) stop_workers();
  }

 private:
  void work(int index, uint32_t seen) {
    inside_task = true;
    for (;;) {
      seen = await_change(generation_, seen, &sleepers_);
      if (stopping_) return;
      if (index < running_) run_share(index);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
    }
  }

  // Pool thread `index` (0: the caller) runs tasks index, index + running_, ...: each task once, however
  // many threads the region runs on.
  void run_share(int index) {
    for (int t = index; t < tasks_; t += running_) run_one(t);
  }

  void run_one(int t) {
    try {
      call_(task_, t);
    } catch (...) {
      const std::lock_guard lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }

  void stop_workers() {  // with mutex_ held
    stopping_ = true;
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    for (std::thread& w : workers_) w.join();
    workers_.clear();
    stopping_ = false;
  }

  std::mutex mutex_;  // held by the thread whose region the workers run
  std::vector<std::thread> workers_;
  std::atomic<uint32_t> generation_{0};
  std::atomic<uint32_t> pending_{0};
  // Written by the region's caller before it bumps generation_, read by workers after they see it.
  void (*call_)(const void*, int) = nullptr;
  const void* task_ = nullptr;
  int tasks_ = 0;
  int running_ = 0;  // threads the region runs on, the caller included
  bool stopping_ = false;
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::atomic<int> sleepers_{0};  // workers asleep in the kernel
  std::atomic<bool> dynamic_{default_dynamic()};
  MachineLoad load_;  // used with mutex_ held
};

WorkerPool& pool() {
  static WorkerPool p;
  return p;
}

// The current setting, initialised on first use. minigrad splits large products between its own threads
// and makes each BLAS call on one (tensor/matmul.cpp): OpenBLAS's OpenMP build is held to one thread per
// call there; a pthread build is set to one thread here, once.
int& current_threads() {
  static int threads = [] {
    if (openblas_get_parallel() != 2) openblas_set_num_threads(1);  // 2: the OpenMP build
    return default_threads();
  }();
  return threads;
}

}  // namespace

int num_threads() {
  return current_threads();
}

void set_num_threads(int n) {
  n = std::max(1, n);
  current_threads() = n;
  pool().shrink_to(n - 1);
}

void set_dynamic_threads(bool on) {
  pool().set_dynamic(on);
}

bool dynamic_threads() {
  return pool().dynamic();
}

bool in_parallel() {
  return inside_task;
}

namespace detail {

void run_tasks(int threads, void (*call)(const void*, int), const void* task) {
  if (threads <= 1) {
    if (threads == 1) call(task, 0);
    return;
  }
  pool().run(threads, call, task);
}

}  // namespace detail

}  // namespace minigrad
