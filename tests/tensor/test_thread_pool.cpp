// minigrad's thread pool (tensor/threads.h): every task runs once, regions inside regions and regions
// from two threads of the program at once run correctly, exceptions reach the caller, idle workers sleep
// instead of holding a core, and with dynamic threads a region on a busy machine runs on the caller.
// scripts/test.sh also runs it under ThreadSanitizer.
//
// Column sums split by blocks of rows give the same bits on any thread count.
//
// Dynamic threads are off here except where a test turns them on: other tests run beside this one, and
// the pool's behaviour must not depend on them.
#define BOOST_TEST_MODULE minigrad thread pool
#include <time.h>

#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "minigrad/tensor/layer_norm.h"
#include "minigrad/tensor/random.h"
#include "minigrad/tensor/reduce.h"
#include "minigrad/tensor/tensor.h"
#include "minigrad/tensor/threads.h"
#include "test_helpers.h"

using namespace minigrad;
using minigrad::testing::ThreadCount;

namespace {

// Turns dynamic threads on or off for one test.
struct DynamicThreads {
  explicit DynamicThreads(bool on) : before(dynamic_threads()) { set_dynamic_threads(on); }
  ~DynamicThreads() { set_dynamic_threads(before); }
  bool before;
};

struct NoDynamicThreads {
  NoDynamicThreads() { set_dynamic_threads(false); }
};

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

}  // namespace

BOOST_GLOBAL_FIXTURE(NoDynamicThreads);

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

BOOST_AUTO_TEST_CASE(dynamic_threads_run_a_region_on_the_caller_while_every_core_is_busy) {
  const ThreadCount count(2);
  const DynamicThreads dynamic(true);
  // Busy threads on every core, as another process's would be; they are not the pool's, so they count as
  // other load. After the pool has seen them for a while (it averages readings 5 ms apart), a region runs
  // both its tasks on the caller, and each task still runs once.
  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); ++i) {
    busy.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  const auto start = std::chrono::steady_clock::now();
  int regions_after_warmup = 0, on_the_caller = 0, wrong_runs = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(300)) {
    std::vector<int> runs(4, 0);
    std::vector<std::thread::id> ids(4);
    parallel_run(4, [&](int t) {
      ++runs[t];
      ids[t] = std::this_thread::get_id();
    });
    if (runs != std::vector<int>(4, 1)) ++wrong_runs;
    if (std::chrono::steady_clock::now() - start > std::chrono::milliseconds(150)) {
      ++regions_after_warmup;
      on_the_caller +=
          std::all_of(ids.begin(), ids.end(), [](auto id) { return id == std::this_thread::get_id(); });
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  stop = true;
  for (std::thread& b : busy) b.join();
  BOOST_TEST(wrong_runs == 0);
  BOOST_TEST(regions_after_warmup > 10);
  BOOST_TEST(on_the_caller == regions_after_warmup);
}

BOOST_AUTO_TEST_CASE(zeros_shares_a_large_buffer_and_clears_every_byte) {
  // Tensor::zeros splits a buffer of 1 MB or more between the threads. 300,001 float64 (2.4 MB, not a
  // whole number of its 4 KB pieces) get the ones' recycled buffer back (tensor/storage.cpp keeps buffers
  // of 1 MB and more), so a byte left out keeps a 1.0's; 7 and 0 elements take the one-thread path.
  const ThreadCount two(2);
  for (int64_t n : {300001, 7, 0}) {
    const void* old_bytes = nullptr;
    {
      const Tensor ones = Tensor::ones({n}, DType::Float64);
      old_bytes = ones.storage()->data();
    }
    const Tensor zeros = Tensor::zeros({n}, DType::Float64);
    if (n == 300001) BOOST_REQUIRE(zeros.storage()->data() == old_bytes);
    const std::vector<double> values = zeros.to_vector();
    BOOST_TEST(std::count(values.begin(), values.end(), 0.0) == n);
  }
}

// Column sums over many rows (tensor/reduce.cpp's sum, layer norm's weight and bias gradients) are split
// between threads by blocks of rows whose size depends on the row's length alone (tensor/column_sums.h), so
// they come out bit-identical on 1, 2 and 3 threads (in float64, where another order of the additions would
// move the last bits), and equal to the plain sum up to rounding.
//   (20000, 64): 10 blocks, split 3/3/4 on three threads, the last one partial, with rows left over after
//     the groups of four; (3, 5000, 48) over its middle dimension: 2 blocks for each of 3 outer indices;
//     (2, 1999, 48): one block each, summed straight into the output; (64, 5000): rows wider than the
//     blocked path takes, split by columns; (3001, 64) in float32, through the four-row loop's conversions.
//   A NaN makes its own column NaN and no other; so do an inf and a -inf in one column.
//   Sums over nothing are zeros, and an empty output is no error.
BOOST_AUTO_TEST_CASE(column_sums_are_the_same_on_any_thread_count) {
  auto same_bits = [](const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
  };
  struct Case {
    Shape shape;
    int dim;
    DType dtype;
  };
  const Case cases[] = {{{20000, 64}, 0, DType::Float64},
                        {{3, 5000, 48}, 1, DType::Float64},
                        {{2, 1999, 48}, 1, DType::Float64},
                        {{64, 5000}, 0, DType::Float64},
                        {{3001, 64}, 0, DType::Float32}};
  for (const Case& c : cases) {
    Generator g(3);
    Tensor x = Tensor::normal(c.shape, 1, 1, DType::Float64, &g);
    const int64_t outer = c.dim == 0 ? 1 : c.shape[0], size = c.shape[c.dim];
    const int64_t inner = c.shape[c.shape.rank() - 1];
    double* v = x.data_ptr<double>();
    v[5 * inner + 2] = std::numeric_limits<double>::quiet_NaN();  // row 5, column 2
    v[7 * inner + 3] = std::numeric_limits<double>::infinity();   // rows 7 and 9 of column 3: inf - inf
    v[9 * inner + 3] = -std::numeric_limits<double>::infinity();
    x = x.to(c.dtype);
    const std::string name = c.shape.str() + " " + std::string(dtype_name(c.dtype));
    std::vector<std::vector<double>> sums;
    for (const int threads : {1, 2, 3}) {
      const ThreadCount count(threads);
      sums.push_back(sum(x, {c.dim}).to_vector());
    }
    BOOST_TEST(same_bits(sums[0], sums[1]), name << ": 1 and 2 threads differ");
    BOOST_TEST(same_bits(sums[0], sums[2]), name << ": 1 and 3 threads differ");
    // The plain sum in float64 of the same values, column by column.
    const std::vector<double> values = x.to_vector();
    const double tolerance = c.dtype == DType::Float32 ? 1e-6 : 1e-12;
    int64_t wrong = 0, nans = 0;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        double expected = 0;
        for (int64_t k = 0; k < size; ++k) expected += values[size_t((o * size + k) * inner + i)];
        const double got = sums[1][size_t(o * inner + i)];
        if (std::isnan(expected)) {
          nans += std::isnan(got) ? 1 : 0;
        } else if (!(std::abs(got - expected) <= tolerance * (std::abs(expected) + double(size)))) {
          ++wrong;
        }
      }
    }
    BOOST_TEST(wrong == 0, name << ": " << wrong << " sums differ from the plain sum");
    BOOST_TEST(nans == 2, name << ": " << nans << " NaN sums where a NaN and an inf - inf should make two");
  }
  for (const Shape& shape : {Shape{0, 64}, Shape{2, 0, 48}, Shape{5, 0}}) {
    const Tensor s = sum(Tensor::ones(shape, DType::Float64), {shape.rank() == 3 ? 1 : 0});
    const std::vector<double> values = s.to_vector();
    BOOST_TEST(s.numel() == (shape.rank() == 3 ? 96 : shape[1]));
    BOOST_TEST(std::count(values.begin(), values.end(), 0.0) == s.numel());
  }

  // Layer norm's backward: dweight = Σ g·x̂ and dbias = Σ g over the rows (3001 rows: 2 blocks of 2730).
  Generator g(4);
  const Tensor x = Tensor::normal({3001, 48}, 0, 1, DType::Float64, &g);
  const Tensor grad = Tensor::normal({3001, 48}, 0, 1, DType::Float64, &g);
  const Tensor weight = Tensor::normal({48}, 1, 0.1, DType::Float64, &g);
  const Tensor bias = Tensor::normal({48}, 0, 0.1, DType::Float64, &g);
  const LayerNormForward forward = layer_norm_forward(x, weight, bias, 1e-5);
  std::vector<std::vector<double>> dweights, dbiases;
  for (const int threads : {1, 2, 3}) {
    const ThreadCount count(threads);
    const NormGradients grads =
        layer_norm_backward(grad, x, weight, forward.mean, forward.rstd, {true, true, true});
    dweights.push_back(grads.weight.to_vector());
    dbiases.push_back(grads.bias.to_vector());
  }
  BOOST_TEST(same_bits(dweights[0], dweights[1]));
  BOOST_TEST(same_bits(dweights[0], dweights[2]));
  BOOST_TEST(same_bits(dbiases[0], dbiases[1]));
  BOOST_TEST(same_bits(dbiases[0], dbiases[2]));
  const double* xs = x.data_ptr<const double>();
  const double* gs = grad.data_ptr<const double>();
  const double* mean = forward.mean.data_ptr<const double>();
  const double* rstd = forward.rstd.data_ptr<const double>();
  double worst = 0;
  for (int64_t i = 0; i < 48; ++i) {
    double dw = 0, db = 0;
    for (int64_t r = 0; r < 3001; ++r) {
      dw += gs[r * 48 + i] * (xs[r * 48 + i] - mean[r]) * rstd[r];
      db += gs[r * 48 + i];
    }
    worst = std::max({worst, std::abs(dweights[1][size_t(i)] - dw), std::abs(dbiases[1][size_t(i)] - db)});
  }
  BOOST_TEST(worst < 1e-10);
  // No rows: zeros.
  const Tensor none = Tensor::zeros({0, 48}, DType::Float64);
  const LayerNormForward empty_forward = layer_norm_forward(none, weight, bias, 1e-5);
  const NormGradients empty_grads =
      layer_norm_backward(none, none, weight, empty_forward.mean, empty_forward.rstd, {true, true, true});
  const std::vector<double> empty_dweight = empty_grads.weight.to_vector();
  const std::vector<double> empty_dbias = empty_grads.bias.to_vector();
  BOOST_TEST(std::count(empty_dweight.begin(), empty_dweight.end(), 0.0) == 48);
  BOOST_TEST(std::count(empty_dbias.begin(), empty_dbias.end(), 0.0) == 48);
}

BOOST_AUTO_TEST_SUITE_END()
