// minigrad-bench: how fast minigrad's kernels are, measured against a reference in the same run.
//
//   matmul       GFLOP/s of minigrad::matmul vs a raw cblas_sgemm call, square float32, 64..1024, and the
//                tall, thin products of a Transformer training step; minigrad's own kernel vs one
//                single-threaded cblas_sgemm on attention's products for a block of queries
//   bandwidth    GB/s of softmax, layer norm and add on 1M+ float32 elements vs a plain memcpy
//   autograd     ns per tiny op to record it and back-propagate through it, vs the same ops without a graph
//   conv         GFLOP/s of conv1d's and conv2d's forward, and forward with backward, vs one cblas_sgemm of
//                the same multiply-adds (the sgemm peak for that shape); conv2d also vs the n = 1024 peak
//   embedding    one training step of a 65,536 x 64 table looked up 4,096 times: the row-sparse gradient
//                (sparse = true) vs the dense one, with SGD and with SparseAdam vs Adam
//
// Absolute numbers on a shared machine are noisy; the ratios against the reference, measured
// interleaved in the same run, are what to compare. Each figure is the median of several timed batches.
#include <cblas.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench/timing.h"
#include "minigrad/minigrad.h"
#include "minigrad/tensor/thin_gemm.h"

using namespace minigrad;

namespace {

using bench::median;
using bench::seconds_per_call;

// Times `a` and `b` alternately, so that both see the same machine load, and returns both medians.
std::pair<double, double> interleaved(const std::function<void()>& a, const std::function<void()>& b,
                                      double batch_seconds, int rounds) {
  std::vector<double> ta, tb;
  for (int r = 0; r < rounds; ++r) {
    ta.push_back(seconds_per_call(a, batch_seconds, 1));
    tb.push_back(seconds_per_call(b, batch_seconds, 1));
  }
  return {median(ta), median(tb)};
}

// A product's operands as stored, drawn from N(0, 1): A (m, k), or (k, m) read transposed; B (k, n), or
// (n, k) read transposed.
std::pair<Tensor, Tensor> stored_operands(int64_t m, int64_t n, int64_t k, bool transpose_a,
                                          bool transpose_b) {
  Generator g(1);
  return {Tensor::normal(transpose_a ? Shape{k, m} : Shape{m, k}, 0, 1, DType::Float32, &g),
          Tensor::normal(transpose_b ? Shape{n, k} : Shape{k, n}, 0, 1, DType::Float32, &g)};
}

void bench_matmul(double batch_seconds, int rounds) {
  std::printf("\nmatmul, float32, C = A·B with A, B square n x n (GFLOP/s = 2n³ / time)\n");
  std::printf("%6s %16s %16s %10s\n", "n", "minigrad GFLOP/s", "cblas GFLOP/s", "ratio");
  for (int64_t n : {64, 128, 256, 512, 1024}) {
    Generator g(1);
    const Tensor a = Tensor::normal({n, n}, 0, 1, DType::Float32, &g);
    const Tensor b = Tensor::normal({n, n}, 0, 1, DType::Float32, &g);
    std::vector<float> c(static_cast<size_t>(n * n));
    const auto [t_minigrad, t_blas] = interleaved(
        [&] { Tensor out = matmul(a, b); },
        [&] {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data_ptr<const float>(), n,
                      b.data_ptr<const float>(), n, 0.0f, c.data(), n);
        },
        batch_seconds, rounds);
    const double flops = 2.0 * n * n * n;
    std::printf("%6lld %16.1f %16.1f %10.3f\n", static_cast<long long>(n), flops / t_minigrad / 1e9,
                flops / t_blas / 1e9, t_blas / t_minigrad);
  }
}

// The products of a training step on 32,768 tokens (bench/train_step.cpp's config S: d 64, FFN 128; A's
// 4,096 tokens, d 128, FFN 512; and C's 8,192, d 256, FFN 1024), where minigrad splits the work between its
// threads itself (tensor/matmul.cpp), against one cblas_sgemm call with the same operands, threaded by
// OpenBLAS.
void bench_step_products(double batch_seconds, int rounds) {
  std::printf(
      "\nmatmul, float32, the products of a training step (tokens x features; GFLOP/s = 2mnk / time)\n");
  std::printf("%-34s %16s %16s %10s\n", "product", "minigrad GFLOP/s", "cblas GFLOP/s", "ratio");
  struct Product {
    const char* name;
    int64_t m, n, k;
    bool transpose_a, transpose_b;  // op(A) is m x k, op(B) k x n
  };
  const Product products[] = {
      {"X W^T   32768x64 by (64x64)^T", 32768, 64, 64, false, true},
      {"X W^T   32768x128 by (64x128)^T", 32768, 64, 128, false, true},
      {"dY W    32768x128 by 128x64", 32768, 64, 128, false, false},
      {"dY^T X  (32768x64)^T by 32768x64", 64, 64, 32768, true, false},
      {"dY^T X  (32768x128)^T by 32768x64", 128, 64, 32768, true, false},
      {"dY^T X  (32768x192)^T by 32768x64", 192, 64, 32768, true, false},
      {"dY^T X  (32768x64)^T by 32768x128", 64, 128, 32768, true, false},
      {"X W^T   4096x128 by (512x128)^T", 4096, 512, 128, false, true},
      {"dY W    4096x128 by 128x512", 4096, 512, 128, false, false},
      {"dY^T X  (4096x512)^T by 4096x128", 512, 128, 4096, true, false},
      {"X W^T   8192x256 by (256x256)^T", 8192, 256, 256, false, true},
      {"X W^T   8192x256 by (1024x256)^T", 8192, 1024, 256, false, true},
      {"X W^T   8192x1024 by (256x1024)^T", 8192, 256, 1024, false, true},
      {"dY W    8192x1024 by 1024x256", 8192, 256, 1024, false, false},
  };
  for (const Product& p : products) {
    const auto [a, b] = stored_operands(p.m, p.n, p.k, p.transpose_a, p.transpose_b);
    const Tensor op_a = p.transpose_a ? a.t() : a, op_b = p.transpose_b ? b.t() : b;
    std::vector<float> c(static_cast<size_t>(p.m * p.n));
    const auto [t_minigrad, t_blas] =
        interleaved([&] { Tensor out = matmul(op_a, op_b); },
                    [&] {
                      cblas_sgemm(CblasRowMajor, p.transpose_a ? CblasTrans : CblasNoTrans,
                                  p.transpose_b ? CblasTrans : CblasNoTrans, p.m, p.n, p.k, 1.0f,
                                  a.data_ptr<const float>(), a.shape()[1], b.data_ptr<const float>(),
                                  b.shape()[1], 0.0f, c.data(), p.n);
                    },
                    batch_seconds, rounds);
    const double flops = 2.0 * p.m * p.n * p.k;
    std::printf("%-34s %16.1f %16.1f %10.3f\n", p.name, flops / t_minigrad / 1e9, flops / t_blas / 1e9,
                t_blas / t_minigrad);
  }
}

// The products of attention's blocks of queries (tensor/attention.cpp; one head of 64 dimensions, as the
// main job's model, over T keys), on the calling thread: minigrad's own kernel (tensor/thin_gemm.h) called
// directly, whether gemm() gives it the product or not, against one single-threaded cblas_sgemm call.
// The backward's dO·Vᵀ has Q·Kᵀ's shape, dS·K P·V's and dSᵀ·Q Pᵀ·dO's.
void bench_attention_products(double batch_seconds, int rounds) {
  std::printf(
      "\nmatmul, float32, attention's products for one block of queries, one thread (GFLOP/s = 2mnk / "
      "time)\n");
  std::printf("%-34s %16s %16s %10s\n", "product", "own kernel GFLOP/s", "cblas GFLOP/s", "ratio");
  const int blas_threads = openblas_get_num_threads();
  openblas_set_num_threads(1);
  for (const int64_t t : {256, 512, 1024}) {
    const int64_t rows = attention_rows_per_block(t, t, sizeof(float)), d = 64;
    struct Product {
      std::string name;
      int64_t m, n, k;
      bool transpose_a, transpose_b;  // op(A) is m x k, op(B) k x n
      float beta;
    };
    const Product products[] = {
        {"Q K^T   " + std::to_string(rows) + "x64 by (" + std::to_string(t) + "x64)^T", rows, t, d, false,
         true, 0},
        {"P V     " + std::to_string(rows) + "x" + std::to_string(t) + " by " + std::to_string(t) + "x64",
         rows, d, t, false, false, 0},
        {"P^T dO  (" + std::to_string(rows) + "x" + std::to_string(t) + ")^T by " + std::to_string(rows) +
             "x64",
         t, d, rows, true, false, 1},
    };
    for (const Product& p : products) {
      const auto [a, b] = stored_operands(p.m, p.n, p.k, p.transpose_a, p.transpose_b);
      std::vector<float> c(static_cast<size_t>(p.m * p.n));
      const float* pa = a.data_ptr<const float>();
      const float* pb = b.data_ptr<const float>();
      const int64_t lda = a.shape()[1], ldb = b.shape()[1];
      const auto [t_own, t_blas] = interleaved(
          [&] {
            thin_gemm(p.transpose_a, p.transpose_b, p.m, p.n, p.k, 1.0f, pa, lda, pb, ldb, p.beta, c.data(),
                      p.n);
          },
          [&] {
            cblas_sgemm(CblasRowMajor, p.transpose_a ? CblasTrans : CblasNoTrans,
                        p.transpose_b ? CblasTrans : CblasNoTrans, p.m, p.n, p.k, 1.0f, pa, lda, pb, ldb,
                        p.beta, c.data(), p.n);
          },
          batch_seconds, rounds);
      const double flops = 2.0 * p.m * p.n * p.k;
      std::printf("%-34s %16.1f %16.1f %10.3f\n", p.name.c_str(), flops / t_own / 1e9, flops / t_blas / 1e9,
                  t_blas / t_own);
    }
  }
  openblas_set_num_threads(blas_threads);
}

void bench_bandwidth(double batch_seconds, int rounds) {
  std::printf("\nmemory-bound kernels, float32 (GB/s = bytes read + bytes written, per second)\n");
  std::printf("%-38s %10s %12s %12s %10s\n", "kernel", "elements", "GB/s", "memcpy GB/s", "ratio");
  struct Case {
    const char* name;
    Shape shape;
    int tensors_moved;  // inputs read + outputs written, in tensors of this size
    std::function<void(const Tensor&, const Tensor&)> run;
  };
  Generator g(2);
  const Tensor gamma = Tensor::ones({256}), beta = Tensor::zeros({256});
  const Variable w(gamma), b(beta);
  const std::vector<Case> cases = {
      {"add (a + b)", {1024, 1024}, 3, [](const Tensor& x, const Tensor& y) { Tensor out = add(x, y); }},
      {"add (a + b), 4M elements",
       {2048, 2048},
       3,
       [](const Tensor& x, const Tensor& y) { Tensor out = add(x, y); }},
      {"softmax, rows of 1024",
       {1024, 1024},
       2,
       [](const Tensor& x, const Tensor&) { Tensor out = softmax(x, -1); }},
      {"softmax, rows of 256",
       {4096, 256},
       2,
       [](const Tensor& x, const Tensor&) { Tensor out = softmax(x, -1); }},
      {"softmax, rows of 1024, 4M elements",
       {4096, 1024},
       2,
       [](const Tensor& x, const Tensor&) { Tensor out = softmax(x, -1); }},
      {"layer_norm, rows of 256 (forward)",
       {4096, 256},
       2,
       [&](const Tensor& x, const Tensor&) {
         NoGradGuard no_grad;
         Variable out = layer_norm(Variable(x), w, b);
       }},
      {"layer_norm, rows of 256, 4M elements",
       {16384, 256},
       2,
       [&](const Tensor& x, const Tensor&) {
         NoGradGuard no_grad;
         Variable out = layer_norm(Variable(x), w, b);
       }},
  };
  for (const Case& c : cases) {
    const Tensor x = Tensor::normal(c.shape, 0, 1, DType::Float32, &g);
    const Tensor y = Tensor::normal(c.shape, 0, 1, DType::Float32, &g);
    const size_t bytes = static_cast<size_t>(x.numel()) * sizeof(float);
    std::vector<char> src(bytes, 1), dst(bytes);
    const auto [t_kernel, t_copy] = interleaved(
        [&] { c.run(x, y); }, [&] { std::memcpy(dst.data(), src.data(), bytes); }, batch_seconds, rounds);
    const double kernel_gbs = c.tensors_moved * double(bytes) / t_kernel / 1e9;
    const double copy_gbs = 2.0 * double(bytes) / t_copy / 1e9;  // memcpy reads and writes each byte
    std::printf("%-38s %10lld %12.1f %12.1f %10.2f\n", c.name, static_cast<long long>(x.numel()), kernel_gbs,
                copy_gbs, kernel_gbs / copy_gbs);
  }
}

void bench_autograd(double batch_seconds, int rounds) {
  std::printf("\nautograd overhead: a chain of %d tiny ops (y = y * 1.0001 on a 1-element float32 tensor)\n",
              1000);
  constexpr int kOps = 1000;
  Variable x(Tensor::ones({1}), true);
  auto record_and_backprop = [&] {
    Variable y = x;
    for (int i = 0; i < kOps; ++i) y = y * 1.0001;
    y.backward();
  };
  auto without_graph = [&] {
    NoGradGuard no_grad;
    Variable y = x;
    for (int i = 0; i < kOps; ++i) y = y * 1.0001;
  };
  const auto [t_graph, t_plain] = interleaved(record_and_backprop, without_graph, batch_seconds, rounds);
  std::printf("%-44s %10.0f ns/op\n", "record + backward, per op", t_graph / kOps * 1e9);
  std::printf("%-44s %10.0f ns/op\n", "forward without recording (NoGradGuard)", t_plain / kOps * 1e9);
  std::printf("%-44s %10.0f ns/op\n", "cost of the graph (difference)", (t_graph - t_plain) / kOps * 1e9);
}

// A large Conv1d layer (batch 32, length 512, 256 channels in and out, kernel 3, padding 'same'): its
// multiply-adds are those of one product (N·L) x (C_in·K) by (C_in·K) x C_out, which a single cblas_sgemm
// on those shapes does at the sgemm peak. conv1d's forward is that product in N pieces (after im2col),
// its backward two more (dW and dX, then col2im): three times the forward's FLOPs.
void bench_conv(double batch_seconds, int rounds) {
  const int64_t n = 32, length = 512, channels = 256, kernel = 3;
  std::printf("\nconv1d, float32, input (%lld, %lld, %lld), weight (%lld, %lld, %lld), padding same\n",
              static_cast<long long>(n), static_cast<long long>(channels), static_cast<long long>(length),
              static_cast<long long>(channels), static_cast<long long>(channels),
              static_cast<long long>(kernel));
  std::printf("%-34s %16s %16s %10s\n", "pass", "minigrad GFLOP/s", "sgemm GFLOP/s", "of peak");
  Generator g(3);
  const Variable x(Tensor::normal({n, channels, length}, 0, 1, DType::Float32, &g), true);
  const Variable w(Tensor::normal({channels, channels, kernel}, 0, 0.05, DType::Float32, &g), true);
  const Variable b(Tensor::zeros({channels}), true);
  const Tensor upstream = Tensor::normal({n, channels, length}, 0, 1, DType::Float32, &g);
  const int64_t m = n * length, k = channels * kernel;
  const Tensor cols = Tensor::normal({m, k}, 0, 1, DType::Float32, &g);
  const Tensor weight = Tensor::normal({k, channels}, 0, 1, DType::Float32, &g);
  std::vector<float> out(static_cast<size_t>(m * channels));
  auto sgemm = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, channels, k, 1.0f, cols.data_ptr<const float>(),
                k, weight.data_ptr<const float>(), channels, 0.0f, out.data(), channels);
  };
  const double flops = 2.0 * m * k * channels;
  const auto [t_forward, t_gemm] = interleaved(
      [&] {
        NoGradGuard no_grad;
        Variable y = conv1d(x, w, b, {.padding_same = true});
      },
      sgemm, batch_seconds, rounds);
  std::printf("%-34s %16.1f %16.1f %9.0f%%\n", "forward", flops / t_forward / 1e9, flops / t_gemm / 1e9,
              100 * t_gemm / t_forward);
  const auto [t_step, t_gemm2] = interleaved(
      [&] {
        x.zero_grad();
        w.zero_grad();
        b.zero_grad();
        conv1d(x, w, b, {.padding_same = true}).backward(upstream);
      },
      sgemm, batch_seconds, rounds);
  std::printf("%-34s %16.1f %16.1f %9.0f%%\n", "forward + backward (3x the FLOPs)", 3 * flops / t_step / 1e9,
              flops / t_gemm2 / 1e9, 100 * 3 * t_gemm2 / t_step);
}

// The typical Conv2d of a small image model (issue 41's): batch 64, 32 -> 64 channels, 14×14, 3×3, padding
// 1. Against two references in the same run: one sgemm of the same multiply-adds and shape as the
// convolution's product (weight (64, 288) by the columns (288, 64·196)), and the square n = 1024 sgemm,
// the machine's peak.
void bench_conv2d(double batch_seconds, int rounds) {
  const int64_t n = 64, c_in = 32, c_out = 64, size = 14, kernel = 3;
  std::printf(
      "\nconv2d, float32, input (%lld, %lld, %lld, %lld), weight (%lld, %lld, %lld, %lld), padding 1\n",
      static_cast<long long>(n), static_cast<long long>(c_in), static_cast<long long>(size),
      static_cast<long long>(size), static_cast<long long>(c_out), static_cast<long long>(c_in),
      static_cast<long long>(kernel), static_cast<long long>(kernel));
  std::printf("%-34s %16s %16s %10s %16s %10s\n", "pass", "minigrad GFLOP/s", "same-shape sgemm", "of it",
              "n=1024 sgemm", "of it");
  Generator g(5);
  const Variable x(Tensor::normal({n, c_in, size, size}, 0, 1, DType::Float32, &g), true);
  const Variable w(Tensor::normal({c_out, c_in, kernel, kernel}, 0, 0.05, DType::Float32, &g), true);
  const Tensor upstream = Tensor::normal({n, c_out, size, size}, 0, 1, DType::Float32, &g);
  const int64_t m = c_out, k = c_in * kernel * kernel, cols = n * size * size;
  const Tensor a = Tensor::normal({m, k}, 0, 1, DType::Float32, &g);
  const Tensor b = Tensor::normal({k, cols}, 0, 1, DType::Float32, &g);
  std::vector<float> out(static_cast<size_t>(m * cols));
  auto same_shape = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, cols, k, 1.0f, a.data_ptr<const float>(), k,
                b.data_ptr<const float>(), cols, 0.0f, out.data(), cols);
  };
  const int64_t big = 1024;
  const Tensor sa = Tensor::normal({big, big}, 0, 1, DType::Float32, &g);
  const Tensor sb = Tensor::normal({big, big}, 0, 1, DType::Float32, &g);
  std::vector<float> sc(static_cast<size_t>(big * big));
  auto square = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, big, big, big, 1.0f, sa.data_ptr<const float>(),
                big, sb.data_ptr<const float>(), big, 0.0f, sc.data(), big);
  };
  const double flops = 2.0 * m * k * cols, peak_flops = 2.0 * big * big * big;
  auto row = [&](const char* pass, const std::function<void()>& f, double multiple) {
    const auto [t_conv, t_gemm] = interleaved(f, same_shape, batch_seconds, rounds);
    const auto [t_conv2, t_peak] = interleaved(f, square, batch_seconds, rounds);
    const double rate = multiple * flops / std::max(t_conv, t_conv2) / 1e9;  // the slower of the two
    const double gemm_rate = flops / t_gemm / 1e9, peak_rate = peak_flops / t_peak / 1e9;
    std::printf("%-34s %16.1f %16.1f %9.0f%% %16.1f %9.0f%%\n", pass, rate, gemm_rate, 100 * rate / gemm_rate,
                peak_rate, 100 * rate / peak_rate);
  };
  row(
      "forward",
      [&] {
        NoGradGuard no_grad;
        Variable y = conv2d(x, w, Variable(), {.padding = 1});
      },
      1);
  row(
      "forward + backward (3x the FLOPs)",
      [&] {
        x.zero_grad();
        w.zero_grad();
        conv2d(x, w, Variable(), {.padding = 1}).backward(upstream);
      },
      3);
}

// A table of 65,536 rows of 64 floats (the sentiment model's bigram table) looked up by 4,096 random ids
// (about 3,970 distinct rows): one step is zero_grad, the lookup, backward, clip_grad_norm_ and the
// optimizer's step. The dense gradient is the whole 16 MB table at each of those; the row-sparse one is
// the rows looked up.
void bench_embedding(double batch_seconds, int rounds) {
  const int64_t rows = 65536, width = 64, lookups = 4096;
  std::printf("\nembedding, float32, a (%lld, %lld) table looked up by %lld ids: ms per training step\n",
              static_cast<long long>(rows), static_cast<long long>(width), static_cast<long long>(lookups));
  std::printf("%-22s %12s %12s %10s\n", "optimizer", "dense ms", "sparse ms", "speed-up");
  Generator g(4);
  std::vector<int64_t> ids(static_cast<size_t>(lookups));
  for (int64_t& id : ids) id = static_cast<int64_t>(g.next_below(static_cast<uint64_t>(rows)));
  const Tensor batch = Tensor::from_vector(ids, {lookups});
  const Tensor upstream = Tensor::normal({lookups, width}, 0, 1, DType::Float32, &g);
  const Tensor initial = Tensor::normal({rows, width}, 0, 1, DType::Float32, &g);
  // One step of `optimizer` on `table`, looked up with sparse gradients or not.
  auto step = [&](const Variable& table, optim::Optimizer& optimizer, bool sparse) {
    optimizer.zero_grad();
    embedding(table, batch, {.sparse = sparse}).backward(upstream);
    optim::clip_grad_norm_({table}, 1.0);
    optimizer.step();
  };
  const Variable dense_sgd_table(initial.clone(), true), sparse_sgd_table(initial.clone(), true);
  optim::SGD dense_sgd({dense_sgd_table}, {.lr = 0.1}), sparse_sgd({sparse_sgd_table}, {.lr = 0.1});
  const auto [t_dense_sgd, t_sparse_sgd] =
      interleaved([&] { step(dense_sgd_table, dense_sgd, false); },
                  [&] { step(sparse_sgd_table, sparse_sgd, true); }, batch_seconds, rounds);
  std::printf("%-22s %12.3f %12.3f %9.1fx\n", "SGD", 1e3 * t_dense_sgd, 1e3 * t_sparse_sgd,
              t_dense_sgd / t_sparse_sgd);
  const Variable adam_table(initial.clone(), true), sparse_adam_table(initial.clone(), true);
  optim::Adam adam({adam_table}, {});
  optim::SparseAdam sparse_adam({sparse_adam_table}, {});
  const auto [t_adam, t_sparse_adam] =
      interleaved([&] { step(adam_table, adam, false); }, [&] { step(sparse_adam_table, sparse_adam, true); },
                  batch_seconds, rounds);
  std::printf("%-22s %12.3f %12.3f %9.1fx\n", "Adam / SparseAdam", 1e3 * t_adam, 1e3 * t_sparse_adam,
              t_adam / t_sparse_adam);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"minigrad kernel benchmarks, each against a reference measured in the same run."};
  double batch_seconds = 0.1;
  int rounds = 7;
  bool matmul_only = false, bandwidth_only = false, autograd_only = false, conv_only = false,
       embedding_only = false;
  app.add_option("--batch-seconds", batch_seconds, "Length of one timed batch")->capture_default_str();
  app.add_option("--rounds", rounds, "Timed batches per figure (the median is reported)")
      ->check(CLI::Range(1, 101))
      ->capture_default_str();
  app.add_flag("--matmul", matmul_only, "Only the matmul table");
  app.add_flag("--bandwidth", bandwidth_only, "Only the memory-bound kernels");
  app.add_flag("--autograd", autograd_only, "Only the autograd overhead");
  app.add_flag("--conv", conv_only, "Only the convolution");
  app.add_flag("--embedding", embedding_only, "Only the embedding table's training step");
  CLI11_PARSE(app, argc, argv);
  const bool all = !matmul_only && !bandwidth_only && !autograd_only && !conv_only && !embedding_only;

  std::printf("minigrad-bench: %d threads (MINIGRAD_NUM_THREADS / set_num_threads), %u hardware threads\n",
              num_threads(), std::thread::hardware_concurrency());
  // The raw cblas references are threaded by OpenBLAS itself, over as many threads as minigrad uses (in
  // the OpenMP build; minigrad's own calls hold it to one thread each, tensor/matmul.cpp).
  if (openblas_get_parallel() == 2) openblas_set_num_threads(num_threads());
  std::printf("OpenBLAS: %s; the cblas references on %d threads\n", openblas_get_config(),
              openblas_get_num_threads());
  std::printf("each figure: median of %d batches of ~%.2f s, minigrad and reference interleaved\n", rounds,
              batch_seconds);
  if (all || matmul_only) {
    bench_matmul(batch_seconds, rounds);
    bench_step_products(batch_seconds, rounds);
    bench_attention_products(batch_seconds, rounds);
  }
  if (all || bandwidth_only) bench_bandwidth(batch_seconds, rounds);
  if (all || autograd_only) bench_autograd(batch_seconds, rounds);
  if (all || conv_only) {
    bench_conv(batch_seconds, rounds);
    bench_conv2d(batch_seconds, rounds);
  }
  if (all || embedding_only) bench_embedding(batch_seconds, rounds);
  return 0;
}
