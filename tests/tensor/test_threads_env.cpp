// Run by CTest with MINIGRAD_NUM_THREADS=1 and MINIGRAD_DYNAMIC_THREADS=0 in the environment: the
// settings reach minigrad's kernels, and BLAS calls start no threads of their own, whatever the setting
// (minigrad splits products itself). Without dynamic threads, a region runs on its two threads however
// busy the machine (other tests run beside this one).
#define BOOST_TEST_MODULE minigrad threads environment
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "minigrad/tensor/matmul.h"
#include "minigrad/tensor/tensor.h"
#include "minigrad/tensor/threads.h"

namespace {

// The threads of this process, as Linux lists them.
int process_threads() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// The same once the count has come down to `expected`, or after a second. A joined thread has finished
// running, but Linux wakes its joiner (clearing the thread id) a moment before it takes the thread out of
// /proc/self/task: on a busy machine that moment is long enough for a count to see it.
int process_threads_settled(int expected) {
  int n = process_threads();
  for (int wait = 0; n != expected && wait < 1000; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    n = process_threads();
  }
  return n;
}

// A product large enough for OpenBLAS to thread it, were it allowed to.
void large_product() {
  const minigrad::Tensor a = minigrad::Tensor::ones({512, 512});
  const minigrad::Tensor c = minigrad::matmul(a, a);
  BOOST_TEST(c.at({0, 0}) == 512.0);
}

}  // namespace

BOOST_AUTO_TEST_CASE(environment_variable_sets_the_thread_count) {
  BOOST_TEST(minigrad::num_threads() == 1);
  BOOST_TEST(!minigrad::dynamic_threads());
  // Every piece of a parallel_for runs on the calling thread.
  std::set<std::thread::id> seen;
  minigrad::parallel_for(1 << 22, 1, [&](int64_t, int64_t) { seen.insert(std::this_thread::get_id()); });
  BOOST_TEST(seen.size() == 1u);
  BOOST_TEST((*seen.begin() == std::this_thread::get_id()));
  // And a large product starts no thread: the process stays at one.
  large_product();
  BOOST_TEST(process_threads() == 1);
}

BOOST_AUTO_TEST_CASE(two_threads_are_the_caller_and_one_pool_worker_and_nothing_else) {
  minigrad::set_num_threads(2);
  large_product();
  large_product();
  BOOST_TEST(process_threads() == 2);  // no OpenMP team, no OpenBLAS pool beside minigrad's worker
  minigrad::set_num_threads(1);
  BOOST_TEST(process_threads_settled(1) == 1);  // the worker was let go
}
