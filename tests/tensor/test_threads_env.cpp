// Run by CTest with MINIGRAD_NUM_THREADS=1 and MINIGRAD_DYNAMIC_THREADS=0 in the environment: the
// settings reach minigrad's kernels, and BLAS calls start no threads of their own, whatever the setting
// (minigrad splits products itself). Without dynamic threads, a region runs on its two threads however
// busy the machine (other tests run beside this one).
#define BOOST_TEST_MODULE minigrad threads environment
#include <boost/test/unit_test.hpp>
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
  BOOST_TEST(process_threads() == 1);  // the worker was let go
}
