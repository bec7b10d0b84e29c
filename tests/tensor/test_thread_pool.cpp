// minigrad's thread pool (tensor/threads.h): every task runs once, regions inside regions and regions
// from two threads of the program at once run correctly, exceptions reach the caller, and idle workers
// sleep instead of holding a core. scripts/test.sh also runs it under ThreadSanitizer.
#define BOOST_TEST_MODULE minigrad thread pool
#include <time.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tensor/threads.h"

using namespace minigrad;

namespace {

// Restores the thread count a test changed.
struct ThreadCount {
  explicit ThreadCount(int n) : before(num_threads()) { set_num_threads(n); }
  ~ThreadCount() { set_num_threads(before); }
  int before;
};

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(thread_pool)

BOOST_AUTO_TEST_CASE(each_task_runs_once_task_0_on_the_caller_the_others_on_workers) {
  const ThreadCount count(4);
  for (int round = 0; round < 200; ++round) {  // many regions: each one's writes are seen after it
    std::vector<int> runs(4, 0);
    std::vector<std::thread::id> ids(4);
    std::vector<int> inside(4, 0);  // (not vector<bool>: its bits share bytes)
    parallel_run(4, [&](int t) {
      ++runs[t];
      ids[t] = std::this_thread::get_id();
      inside[t] = in_parallel();
    });
    BOOST_TEST(runs == std::vector<int>(4, 1), boost::test_tools::per_element());
    BOOST_TEST((ids[0] == std::this_thread::get_id()));
    BOOST_TEST(std::set<std::thread::id>(ids.begin(), ids.end()).size() == 4u);
    BOOST_TEST(inside == std::vector<int>(4, 1), boost::test_tools::per_element());
  }
  BOOST_TEST(!in_parallel());
}

BOOST_AUTO_TEST_CASE(parallel_for_covers_the_range_in_disjoint_pieces) {
  const ThreadCount count(3);
  for (const int64_t n : {int64_t{1}, int64_t{7}, int64_t{100000}, int64_t{1} << 20}) {
    std::vector<int> hits(static_cast<size_t>(n), 0);
    parallel_for(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) ++hits[static_cast<size_t>(i)];
    });
    BOOST_TEST(std::accumulate(hits.begin(), hits.end(), int64_t{0}) == n);
    BOOST_TEST(*std::min_element(hits.begin(), hits.end()) == 1);
  }
}

BOOST_AUTO_TEST_CASE(a_region_inside_a_region_runs_on_its_thread) {
  const ThreadCount count(2);
  std::mutex m;
  std::vector<std::pair<int, std::thread::id>> inner;  // (outer t, thread of each inner task)
  std::vector<std::thread::id> outer(2);
  parallel_run(2, [&](int t) {
    outer[t] = std::this_thread::get_id();
    parallel_run(3, [&](int) {
      const std::lock_guard lock(m);
      inner.emplace_back(t, std::this_thread::get_id());
    });
  });
  BOOST_TEST(inner.size() == 6u);
  for (const auto& [t, id] : inner) BOOST_TEST((id == outer[t]));
}

BOOST_AUTO_TEST_CASE(an_exception_in_any_task_reaches_the_caller_after_all_have_finished) {
  const ThreadCount count(3);
  for (const int thrower : {0, 2}) {
    std::atomic<int> finished{0};
    BOOST_CHECK_THROW(parallel_run(3,
                                   [&](int t) {
                                     if (t == thrower) throw std::runtime_error("task failed");
                                     std::this_thread::sleep_for(std::chrono::milliseconds(20));
                                     ++finished;
                                   }),
                      std::runtime_error);
    BOOST_TEST(finished.load() == 2);
  }
  // The pool still works.
  std::atomic<int> runs{0};
  parallel_run(3, [&](int) { ++runs; });
  BOOST_TEST(runs.load() == 3);
}

BOOST_AUTO_TEST_CASE(two_threads_of_the_program_share_the_pool) {
  const ThreadCount count(2);
  // Each program thread sums 1..n with parallel_for many times; while one has the pool, the other's
  // regions run on its own thread. Both always get the whole sum.
  auto worker = [](int64_t n, int64_t* wrong) {
    for (int round = 0; round < 300; ++round) {
      std::vector<int64_t> partial(8, 0);
      std::atomic<int> pieces{0};
      parallel_for(n, 1, [&](int64_t begin, int64_t end) {
        int64_t s = 0;
        for (int64_t i = begin; i < end; ++i) s += i + 1;
        partial[static_cast<size_t>(pieces++)] = s;
      });
      if (std::accumulate(partial.begin(), partial.end(), int64_t{0}) != n * (n + 1) / 2) ++*wrong;
    }
  };
  int64_t wrong_a = 0, wrong_b = 0;
  std::thread a(worker, int64_t{1} << 17, &wrong_a);
  std::thread b(worker, (int64_t{1} << 17) + 3, &wrong_b);
  a.join();
  b.join();
  BOOST_TEST(wrong_a == 0);
  BOOST_TEST(wrong_b == 0);
}

BOOST_AUTO_TEST_CASE(fewer_threads_then_more_again) {
  ThreadCount count(4);
  std::atomic<int> runs{0};
  parallel_run(4, [&](int) { ++runs; });
  set_num_threads(1);
  parallel_run(2, [&](int) { ++runs; });  // the pool starts a worker again when asked for one
  set_num_threads(3);
  parallel_run(3, [&](int) { ++runs; });
  BOOST_TEST(runs.load() == 9);
}

BOOST_AUTO_TEST_CASE(idle_workers_sleep_instead_of_holding_a_core) {
  const ThreadCount count(2);
  std::atomic<int64_t> sink{0};
  parallel_run(2, [&](int t) { sink += t; });
  // After a short spin the worker sleeps until the next region: 200 ms of idleness cost the process
  // next to no CPU time. A worker that kept spinning would cost about the whole 200 ms.
  const double cpu_before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double idle_cpu = process_cpu_seconds() - cpu_before;
  BOOST_TEST(idle_cpu < 0.05);
  parallel_run(2, [&](int t) { sink += t; });  // and it wakes for the next one
  BOOST_TEST(sink.load() == 2);
}

BOOST_AUTO_TEST_SUITE_END()
