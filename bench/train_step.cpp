// minigrad-train-step: the time of one training step of a Transformer encoder classifier, the figure that
// bench/train_step.py measures for the same model in PyTorch and bench/train-step.sh compares.
//
//   tokens (B, T) -> Embedding·√d + sinusoidal positions -> dropout -> N post-norm encoder layers
//   (biased q/k/v/o projections, dropout 0.1 on the attention weights and after each sublayer, keys past
//   each sequence's valid length hidden) -> mean over the valid positions -> Linear -> logits (B, 2)
//   -> cross-entropy; Adam, lr 1e-3.
//
// One step is zero_grad + forward + backward + optimizer step, on batches of random token ids, valid
// lengths and labels drawn from a fixed seed up front and cycled. The run prints one line:
//
//   result impl=minigrad config=A threads=1 ... ms_per_step=... tokens_per_s=... peak_rss_mb=... ...
//
// `--sgemm-peak` instead times a raw cblas_sgemm on square matrices, the reference for the matmul rate;
// `--products-alone` times the step's matrix products with nothing else, about the fastest step they allow.
#include <cblas.h>
#include <sys/resource.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bench/timing.h"
#include "examples/common/perf_control.h"
#include "minigrad/minigrad.h"

using namespace minigrad;

namespace {

constexpr int64_t kVocab = 20000;
constexpr int64_t kClasses = 2;
constexpr double kDropout = 0.1;
constexpr double kLearningRate = 1e-3;
constexpr int kBatches = 4;  // distinct batches, drawn up front and cycled

// The model and batch sizes of one benchmark configuration (bench/train_step.py has the same table).
struct Config {
  int64_t d, heads, ffn, layers, seq, batch;
};

const std::map<std::string, Config> kConfigs = {
    {"A", {.d = 128, .heads = 4, .ffn = 512, .layers = 2, .seq = 128, .batch = 32}},
    {"B", {.d = 64, .heads = 4, .ffn = 256, .layers = 2, .seq = 64, .batch = 16}},
    {"C", {.d = 256, .heads = 8, .ffn = 1024, .layers = 2, .seq = 256, .batch = 32}},
    {"S", {.d = 64, .heads = 2, .ffn = 128, .layers = 1, .seq = 512, .batch = 64}},
};

// Floating-point operations of every matrix product of one training step, forward and backward, counted
// from the shapes (bench/train_step.py's matmul_flops_per_step is the same formula, so that both
// programs' GFLOP/s divide the same work by their own time).
//
// A product C (m×n) = A (m×k)·B (k×n) costs 2·m·n·k (a multiply and an add per term). Its backward costs
// 2·m·n·k for dA = dC·Bᵀ if A needs a gradient, and again for dB = Aᵀ·dC if B does. Here every operand of
// every product needs its gradient: the weights are parameters, and every activation descends from the
// embedding table, which is trained, so even the first layer's input X = dropout(E[tokens]·√d + P) needs
// dX (it flows on into the table's rows). Hence backward = 2 × forward and a step = 3 × forward. (With a
// frozen embedding, the first layer's q/k/v projections would need dW only: once their forward, not twice.)
//
// Not counted: the embedding lookup and its backward (a gather and a scatter-add, no products), and
// everything elementwise. Padded positions are counted: both libraries compute the full T×T scores and
// mask them afterwards.
//
// torch.profiler(with_flops=True) over one PyTorch step counts exactly this in its mm, addmm, bmm and
// baddbmm calls, for each of the four configurations.
double matmul_flops_per_step(const Config& c) {
  const double B = double(c.batch), T = double(c.seq), d = double(c.d), f = double(c.ffn);
  const double N = B * T;  // tokens per batch: the rows of every position-wise product
  // One encoder layer's forward:
  const double projections = 4 * (2 * N * d * d);  // q, k, v and output: (N, d)·(d, d) each
  // Per sequence and head, (T, d/h)·(d/h, T) for Q·Kᵀ and (T, T)·(T, d/h) for weights·V: 2·T·T·(d/h)
  // each, times h heads and B sequences.
  const double attention = 2 * (2 * B * T * T * d);
  const double ffn = 2 * (2 * N * d * f);            // (N, d)·(d, f) and (N, f)·(f, d)
  const double head = 2 * B * d * double(kClasses);  // pooled (B, d)·(d, 2)
  const double forward = double(c.layers) * (projections + attention + ffn) + head;
  return 3 * forward;
}

// The encoder (nn/transformer.h) with masked mean pooling and a linear head.
class EncoderClassifier : public nn::Layer<EncoderClassifier> {
 public:
  explicit EncoderClassifier(const Config& c) {
    encoder = register_module(
        "encoder",
        std::make_shared<nn::TransformerEncoder>(nn::TransformerEncoderOptions{
            .layer = {.num_hiddens = c.d,
                      .ffn_num_hiddens = c.ffn,
                      .num_heads = c.heads,
                      .dropout = kDropout,  // attention_dropout unset: the same 0.1 on the weights
                      .bias = true},        // biased q/k/v/o projections, as PyTorch's MultiheadAttention
            .num_layers = c.layers,
            .tokens = {.vocab_size = kVocab, .max_len = c.seq}}));
    head = register_module("head", std::make_shared<nn::Linear>(c.d, kClasses));
  }

  // tokens (B, T) int64, lengths (B) int64 -> logits (B, 2)
  Variable forward(const Tensor& tokens, const Tensor& lengths) const {
    const Variable h = (*encoder)(tokens, {.valid_lens = lengths});  // (B, T, d)
    return (*head)(mean_over_time(h, lengths, /*dim=*/1));           // (B, d) -> (B, 2)
  }

  std::string name() const override { return "EncoderClassifier"; }

  std::shared_ptr<nn::TransformerEncoder> encoder;
  std::shared_ptr<nn::Linear> head;
};

struct Batch {
  Tensor tokens;   // (B, T) int64, uniform over the vocabulary
  Tensor lengths;  // (B) int64, uniform in [T/2, T]
  Tensor labels;   // (B) int64, 0 or 1
};

std::vector<Batch> random_batches(const Config& c, Generator& g) {
  std::vector<Batch> batches;
  for (int i = 0; i < kBatches; ++i) {
    Batch b{Tensor::empty({c.batch, c.seq}, DType::Int64), Tensor::empty({c.batch}, DType::Int64),
            Tensor::empty({c.batch}, DType::Int64)};
    int64_t* tokens = b.tokens.data_ptr<int64_t>();
    for (int64_t j = 0; j < c.batch * c.seq; ++j) tokens[j] = int64_t(g.next_below(kVocab));
    const int64_t shortest = c.seq / 2;
    for (int64_t j = 0; j < c.batch; ++j) {
      b.lengths.data_ptr<int64_t>()[j] = shortest + int64_t(g.next_below(uint64_t(c.seq - shortest + 1)));
      b.labels.data_ptr<int64_t>()[j] = int64_t(g.next_below(kClasses));
    }
    batches.push_back(std::move(b));
  }
  return batches;
}

rusage usage() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u;
}

// The BLAS libraries mapped into this process, from /proc/self/maps: which OpenBLAS build really runs.
std::string loaded_blas() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> paths;
  for (std::string line; std::getline(maps, line);) {
    const size_t slash = line.find('/');
    if (slash != std::string::npos && line.find("blas", slash) != std::string::npos)
      paths.insert(line.substr(slash));
  }
  std::string out;
  for (const std::string& p : paths) out += (out.empty() ? "" : ",") + p;
  return out.empty() ? "none" : out;
}

// The kernels OpenBLAS runs (its core name: Haswell, SkylakeX, Cooperlake, ...): its own choice for the
// CPU unless OPENBLAS_CORETYPE names one. They matter more than the CPU's generation, so every result line
// names them (docs/performance.md, "OpenBLAS's kernels").
std::string blas_kernels() {
  return openblas_get_corename();
}

void run_train_steps(const std::string& name, const Config& c, int steps, int warmup, uint64_t seed,
                     AttentionKernel kernel, const examples::PerfControl& perf) {
  manual_seed(seed);  // initial weights and dropout masks
  EncoderClassifier model(c);
  nn::set_attention_kernel(model, kernel);
  optim::Adam optimizer(model.named_parameters(), {.lr = kLearningRate});
  Generator data_rng(seed + 1);
  const std::vector<Batch> batches = random_batches(c, data_rng);

  int next = 0;
  auto step = [&] {
    const Batch& b = batches[size_t(next++ % kBatches)];
    optimizer.zero_grad();
    const Variable loss = cross_entropy(model(b.tokens, b.lengths), b.labels);
    loss.backward();
    optimizer.step();
    return loss.item();
  };
  double loss0 = NAN;  // the loss at the first step, before any update: ~ln 2 for an untrained classifier
  for (int i = 0; i < warmup; ++i) {
    const double loss = step();
    if (i == 0) loss0 = loss;
  }
  std::vector<double> seconds;
  perf.send("enable");
  const rusage before = usage();
  for (int i = 0; i < steps; ++i) {
    const auto t0 = bench::Clock::now();
    const double loss = step();
    seconds.push_back(std::chrono::duration<double>(bench::Clock::now() - t0).count());
    if (warmup == 0 && i == 0) loss0 = loss;
  }
  const rusage after = usage();
  perf.send("disable");

  double mean = 0;
  for (double s : seconds) mean += s / double(steps);
  const double med = bench::median(seconds);
  const double faults = double((after.ru_minflt + after.ru_majflt) - (before.ru_minflt + before.ru_majflt));
  const double flops = matmul_flops_per_step(c);
  std::printf(
      "result impl=minigrad config=%s attention=%s threads=%d d=%lld heads=%lld ffn=%lld layers=%lld "
      "seq=%lld batch=%lld "
      "steps=%d warmup=%d ms_per_step=%.2f ms_mean=%.2f tokens_per_s=%.0f peak_rss_mb=%.1f "
      "faults_per_step=%.1f step_gflop=%.4f matmul_gflops=%.2f params=%lld loss0=%.4f blas=%s "
      "blas_kernels=%s\n",
      name.c_str(), kernel == AttentionKernel::Fused ? "fused" : "composed", num_threads(), (long long)c.d,
      (long long)c.heads, (long long)c.ffn, (long long)c.layers, (long long)c.seq, (long long)c.batch, steps,
      warmup, med * 1e3, mean * 1e3, double(c.batch * c.seq) / med, double(after.ru_maxrss) / 1024.0,
      faults / double(steps), flops / 1e9, flops / med / 1e9, (long long)model.parameter_count(), loss0,
      loaded_blas().c_str(), blas_kernels().c_str());
}

// The step's matrix products alone: every product of matmul_flops_per_step, with the shapes, transposes,
// blocks and split between threads that the step gives them (minigrad's gemm, the fused attention's
// blocks of queries), on buffers of the step's sizes, and nothing else. Its time is what a step would take
// if everything but its products cost nothing, so matmul_flops_per_step over it estimates the highest
// share of the sgemm peak that a step of this configuration reaches with these products. An estimate: the
// operands here stay in cache from one product to the next, where in a step other kernels run between.
void run_products_alone(const std::string& name, const Config& c) {
  const int64_t B = c.batch, T = c.seq, d = c.d, f = c.ffn, h = c.heads, head = c.d / c.heads;
  const int64_t N = B * T, wide = std::max(d, f);
  Generator g(1);
  auto filled = [&](Shape shape) { return Tensor::normal(std::move(shape), 0, 0.1, DType::Float32, &g); };
  // Position-wise operands: inputs and gradients up to (N, max(d, f)), a weight up to (max, max).
  const Tensor x = filled({N, wide}), dy = filled({N, wide}), w = filled({wide, wide});
  Tensor y = Tensor::zeros({N, wide}), dx = Tensor::empty({N, wide}), dw = Tensor::empty({wide, wide});
  // Attention's operands, (B, T, h·head) as the projections lay them out, and the kept weights (B·h, T, T).
  const Tensor q = filled({N, d}), k = filled({N, d}), v = filled({N, d}), dO = filled({N, d});
  Tensor o = Tensor::empty({N, d}), dq = Tensor::empty({N, d}), dk = Tensor::empty({N, d}),
         dv = Tensor::empty({N, d}), weights = Tensor::empty({B * h, T, T});
  const float scale = 1.0f / std::sqrt(float(head));
  // the fused attention's blocks of queries
  const int64_t block = attention_rows_per_block(T, T, sizeof(float));

  // y (N, out) = x (N, in)·Wᵀ + y (the bias already there: here zeros, growing by x·Wᵀ each call); dx = dy·W;
  // dW = dyᵀ·x
  auto linear_forward = [&](int64_t rows, int64_t in, int64_t out) {
    gemm(false, true, rows, out, in, 1.0f, x.data_ptr<const float>(), in, w.data_ptr<const float>(), in, 1.0f,
         y.data_ptr<float>(), out);
  };
  auto linear_backward = [&](int64_t rows, int64_t in, int64_t out) {
    gemm(false, false, rows, in, out, 1.0f, dy.data_ptr<const float>(), out, w.data_ptr<const float>(), in,
         0.0f, dx.data_ptr<float>(), in);
    gemm(true, false, out, in, rows, 1.0f, dy.data_ptr<const float>(), out, x.data_ptr<const float>(), in,
         0.0f, dw.data_ptr<float>(), in);
  };
  // Group gr = (sequence b, head j): its (T, head) matrices start at row b·T, column j·head, rows d apart.
  auto at = [&](const Tensor& t, int64_t gr) {
    return t.data_ptr<float>() + (gr / h) * T * d + (gr % h) * head;
  };
  auto attention_forward = [&] {
    parallel_for(B * h, 2 * T * T * head, [&](int64_t begin, int64_t end) {
      for (int64_t gr = begin; gr < end; ++gr) {
        for (int64_t i0 = 0; i0 < T; i0 += block) {
          const int64_t rows = std::min(block, T - i0);
          float* P = weights.data_ptr<float>() + (gr * T + i0) * T;
          gemm(false, true, rows, T, head, scale, at(q, gr) + i0 * d, d, at(k, gr), d, 0.0f, P, T);
          gemm(false, false, rows, head, T, 1.0f, P, T, at(v, gr), d, 0.0f, at(o, gr) + i0 * d, d);
        }
      }
    });
  };
  auto attention_backward = [&] {
    parallel_for(B * h, 4 * T * T * head, [&](int64_t begin, int64_t end) {
      std::vector<float> dS(size_t(block * T));
      for (int64_t gr = begin; gr < end; ++gr) {
        for (int64_t i0 = 0; i0 < T; i0 += block) {
          const int64_t rows = std::min(block, T - i0);
          const float* P = weights.data_ptr<const float>() + (gr * T + i0) * T;
          const float accumulate = i0 == 0 ? 0.0f : 1.0f;
          gemm(true, false, T, head, rows, 1.0f, P, T, at(dO, gr) + i0 * d, d, accumulate, at(dv, gr), d);
          gemm(false, true, rows, T, head, 1.0f, at(dO, gr) + i0 * d, d, at(v, gr), d, 0.0f, dS.data(), T);
          gemm(false, false, rows, head, T, scale, dS.data(), T, at(k, gr), d, 0.0f, at(dq, gr) + i0 * d, d);
          gemm(true, false, T, head, rows, scale, dS.data(), T, at(q, gr) + i0 * d, d, accumulate, at(dk, gr),
               d);
        }
      }
    });
  };
  auto position_wise = [&] {
    for (int64_t l = 0; l < c.layers; ++l) {
      for (int p = 0; p < 4; ++p) linear_forward(N, d, d);  // q, k, v, output
      linear_forward(N, d, f);
      linear_forward(N, f, d);
    }
    linear_forward(B, d, kClasses);
    linear_backward(B, d, kClasses);
    for (int64_t l = 0; l < c.layers; ++l) {
      linear_backward(N, f, d);
      linear_backward(N, d, f);
      for (int p = 0; p < 4; ++p) linear_backward(N, d, d);
    }
  };
  auto attention = [&] {
    for (int64_t l = 0; l < c.layers; ++l) attention_forward();
    for (int64_t l = 0; l < c.layers; ++l) attention_backward();
  };
  const double seconds = bench::seconds_per_call(
      [&] {
        position_wise();
        attention();
      },
      /*batch_seconds=*/0.5, /*batches=*/5);
  const double flops = matmul_flops_per_step(c);
  std::printf(
      "result impl=products_alone config=%s threads=%d ms_per_step=%.2f step_gflop=%.4f matmul_gflops=%.2f "
      "blas=%s blas_kernels=%s\n",
      name.c_str(), num_threads(), seconds * 1e3, flops / 1e9, flops / seconds / 1e9, loaded_blas().c_str(),
      blas_kernels().c_str());
}

// The best rate of a raw cblas_sgemm on square float32 matrices of a few sizes, at this thread count.
void run_sgemm_peak() {
  std::string sizes;
  double best = 0;
  for (const int64_t n : {512, 1024, 2048}) {
    Generator g(1);
    const Tensor a = Tensor::normal({n, n}, 0, 1, DType::Float32, &g);
    const Tensor b = Tensor::normal({n, n}, 0, 1, DType::Float32, &g);
    Tensor c = Tensor::empty({n, n});
    const double seconds = bench::seconds_per_call(
        [&] {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(n), int(n), int(n), 1.0f,
                      a.data_ptr<const float>(), int(n), b.data_ptr<const float>(), int(n), 0.0f,
                      c.data_ptr<float>(), int(n));
        },
        /*batch_seconds=*/0.2, /*batches=*/3);
    const double gflops = 2.0 * double(n * n * n) / seconds / 1e9;
    best = std::max(best, gflops);
    char field[64];
    std::snprintf(field, sizeof field, " gflops_%lld=%.1f", (long long)n, gflops);
    sizes += field;
  }
  std::printf("result impl=sgemm threads=%d gflops=%.2f%s blas=%s blas_kernels=%s\n", num_threads(), best,
              sizes.c_str(), loaded_blas().c_str(), blas_kernels().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Time training steps of a Transformer encoder classifier (or, with --sgemm-peak, raw sgemm)."};
  std::string config = "A";
  int steps = 10, warmup = 2, threads = 0;
  uint64_t seed = 0;
  bool sgemm_peak = false, products_alone = false;
  std::string attention = "fused", perf_control;
  app.add_option("--config", config,
                 "A (128,4,512,2,128,32), B (64,4,256,2,64,16), C (256,8,1024,2,256,32), "
                 "S (64,2,128,1,512,64): (d, heads, ffn, layers, seq, batch)")
      ->check(CLI::IsMember({"A", "B", "C", "S"}))
      ->capture_default_str();
  app.add_option("--steps", steps, "Timed steps (the median is reported)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--warmup", warmup, "Untimed steps first")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--threads", threads, "Threads (default: MINIGRAD_NUM_THREADS, else all cores)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--seed", seed, "Seed of the weights, dropout masks and batches")->capture_default_str();
  app.add_option("--attention", attention,
                 "The attention kernel: fused (the default) or composed (the reference)")
      ->check(CLI::IsMember({"fused", "composed"}))
      ->capture_default_str();
  app.add_flag("--sgemm-peak", sgemm_peak,
               "Time raw cblas_sgemm (square 512, 1024, 2048) instead; print the best");
  app.add_flag("--products-alone", products_alone,
               "Time the step's matrix products alone (its shapes and splits, nothing else): about the "
               "fastest step these products allow. Takes --config and --threads; the step's options do not "
               "apply");
  app.add_option("--perf-control", perf_control,
                 "CONTROL,ACK: the FIFOs of a perf record started with -D -1 --control; its samples are then "
                 "of the timed steps alone (bench/profile-step.sh)");
  CLI11_PARSE(app, argc, argv);

  if (threads > 0) set_num_threads(threads);
  if (sgemm_peak) {
    run_sgemm_peak();
    return 0;
  }
  if (products_alone) {
    run_products_alone(config, kConfigs.at(config));
    return 0;
  }
  try {
    const examples::PerfControl perf(perf_control);
    run_train_steps(config, kConfigs.at(config), steps, warmup, seed,
                    attention == "fused" ? AttentionKernel::Fused : AttentionKernel::Composed, perf);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
