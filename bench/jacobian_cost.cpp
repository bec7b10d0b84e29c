// The cost of a whole Jacobian by forward mode (a column per pass) and by reverse mode (a row per pass),
// for a small network f: Rⁿ → Rᵐ, f(x) = tanh(x·W₁ᵀ)·W₂ᵀ, float64: the table in docs/forward-mode.md
// ("When each wins").
//
//   minigrad-jacobian-cost [--sizes 4x512,64x64,512x4] [--hidden 256] [--rounds 7]
//
//   forward: n passes of f, the input carrying the tangent e_j in the j-th (forward_ad): J's columns
//   reverse: one recorded pass of f, then m backward passes from e_i (grad, retain_graph): J's rows
// and, for the cost of carrying a tangent, one pass of f three ways: recording nothing, recorded (the
// input requires grad, as for a backward pass), and with a tangent. The two Jacobians are compared. Then
// H·v of Σ f(x)² by functional::hvp, forward over reverse and reverse over reverse.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/timing.h"
#include "minigrad/minigrad.h"

using namespace minigrad;

namespace {

constexpr DType F64 = DType::Float64;

struct Network {
  Variable w1, w2;  // (hidden, n), (m, hidden): constants, the Jacobian is with respect to x
  Variable operator()(const Variable& x) const { return matmul(tanh(matmul(x, w1.t())), w2.t()); }
};

Tensor one_hot(int64_t size, int64_t index) {
  Tensor e = Tensor::zeros({1, size}, F64);
  e.data_ptr<double>()[index] = 1;
  return e;
}

// J (m, n) by forward mode: column j is the tangent of f(x + ε·e_j).
Tensor jacobian_forward(const Network& f, const Tensor& x) {
  const int64_t n = x.shape()[1];
  std::vector<Variable> columns;
  for (int64_t j = 0; j < n; ++j) {
    const forward_ad::DualLevel level;
    const Variable y = f(forward_ad::make_dual(x, one_hot(n, j)));  // (1, m)
    columns.push_back(Variable(forward_ad::unpack_dual(y).tangent.data().reshape({-1, 1})));
  }
  return concat(columns, 1).data();
}

// J (m, n) by reverse mode: row i is the gradient of y_i, from one recording of f.
Tensor jacobian_reverse(const Network& f, const Tensor& x, int64_t m) {
  const Variable input(x, /*requires_grad=*/true);
  const Variable y = f(input);
  std::vector<Variable> rows;
  for (int64_t i = 0; i < m; ++i) {
    rows.push_back(grad({y}, {input}, {Variable(one_hot(m, i))}, {.retain_graph = true})[0]);
  }
  return concat(rows, 0).data();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The cost of a whole Jacobian by forward mode and by reverse mode (float64)."};
  std::vector<std::string> sizes{"4x512", "64x64", "512x4", "256x256"};
  int64_t hidden = 256;
  int rounds = 7;
  double batch_seconds = 0.2;
  app.add_option("--sizes", sizes, "n x m: inputs x outputs")->delimiter(',')->capture_default_str();
  app.add_option("--hidden", hidden, "Hidden units")->capture_default_str();
  app.add_option("--rounds", rounds, "Timed batches per figure (the median is reported)")
      ->capture_default_str();
  app.add_option("--batch-seconds", batch_seconds, "Length of one timed batch")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::printf(
      "f: R^n -> R^m, f(x) = tanh(x W1^T) W2^T, %lld hidden units, float64, %d threads; median of %d\n\n",
      static_cast<long long>(hidden), num_threads(), rounds);
  std::printf("%5s %5s | %12s %12s %8s | %12s %12s %12s | %s\n", "n", "m", "forward ms", "reverse ms",
              "fwd/rev", "pass us", "recorded us", "tangent us", "max |J_fwd - J_rev|");
  struct HessianProduct {
    int64_t n, m;
    double forward, reverse;
  };
  std::vector<HessianProduct> hessian_products;
  for (const std::string& size : sizes) {
    const size_t x_at = size.find('x');
    if (x_at == std::string::npos) {
      std::fprintf(stderr, "--sizes: '%s' is not n x m (as 64x64)\n", size.c_str());
      return 2;
    }
    const int64_t n = std::stoll(size.substr(0, x_at)), m = std::stoll(size.substr(x_at + 1));
    Generator generator(1);
    const Network f{Variable(Tensor::normal({hidden, n}, 0, 1 / std::sqrt(double(n)), F64, &generator)),
                    Variable(Tensor::normal({m, hidden}, 0, 1 / std::sqrt(double(hidden)), F64, &generator))};
    const Tensor x = Tensor::normal({1, n}, 0, 1, F64, &generator);

    const double difference = max(abs(jacobian_forward(f, x) - jacobian_reverse(f, x, m))).item();
    const auto time = [&](const std::function<void()>& run) {
      return bench::seconds_per_call(run, batch_seconds, rounds);
    };
    const auto time_hvp = [&](const Network& net, const Tensor& at, functional::Mode mode) {
      const auto g = [&](const Variable& z) {
        const Variable y = net(z);
        return sum(y * y);
      };
      const Variable v(Tensor::ones(at.shape(), F64));
      return time([&] { functional::hvp(g, Variable(at), v, {.mode = mode}); });
    };
    const double forward = time([&] { jacobian_forward(f, x); });
    const double reverse = time([&] { jacobian_reverse(f, x, m); });
    const double pass = time([&] { f(Variable(x)); });
    const double recorded = time([&] { f(Variable(x, true)); });
    const double with_tangent = time([&] {
      const forward_ad::DualLevel level;
      f(forward_ad::make_dual(x, one_hot(n, 0)));
    });
    std::printf("%5lld %5lld | %12.3f %12.3f %8.2f | %12.1f %12.1f %12.1f | %.1e\n",
                static_cast<long long>(n), static_cast<long long>(m), forward * 1e3, reverse * 1e3,
                forward / reverse, pass * 1e6, recorded * 1e6, with_tangent * 1e6, difference);
    hessian_products.push_back(
        {n, m, time_hvp(f, x, functional::Mode::Forward), time_hvp(f, x, functional::Mode::Reverse)});
  }
  std::printf("\nH·v of g(x) = Σ f(x)², functional::hvp (us): forward over reverse, reverse over reverse\n");
  for (const auto& [n, m, forward, reverse] : hessian_products) {
    std::printf("%5lld %5lld | %12.1f %12.1f %8.2f\n", static_cast<long long>(n), static_cast<long long>(m),
                forward * 1e6, reverse * 1e6, forward / reverse);
  }
}
