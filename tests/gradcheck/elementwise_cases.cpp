// The catalogue's arithmetic and elementwise functions.
#include "tests/gradcheck/sections.h"

namespace minigrad::checks {

void add_elementwise_cases(const AddCase& add_case) {
  // ---- arithmetic ----
  add_case(
      "add",
      [](Generator& g) {
        Shape s{size_in(g, 1, 4), size_in(g, 1, 4)};
        return Inputs{normal(g, s), normal(g, s)};
      },
      [](In x) { return x[0] + x[1]; });
  add_case(
      "add (broadcast [m,1] + [n])",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 2, 4), 1}), normal(g, {size_in(g, 2, 4)})};
      },
      [](In x) { return x[0] + x[1]; });
  add_case(
      "sub (broadcast [b,m,n] - [m,n])",
      [](Generator& g) {
        const int64_t m = size_in(g, 1, 3), n = size_in(g, 1, 3);
        return Inputs{normal(g, {2, m, n}), normal(g, {m, n})};
      },
      [](In x) { return x[0] - x[1]; });
  add_case(
      "mul (broadcast [b,1,n] * [m,1])",
      [](Generator& g) {
        const int64_t m = size_in(g, 2, 3), n = size_in(g, 2, 3);
        return Inputs{normal(g, {2, 1, n}), normal(g, {m, 1})};
      },
      [](In x) { return x[0] * x[1]; });
  add_case(
      "mul (input used twice)", [](Generator& g) { return Inputs{normal(g, {size_in(g, 2, 5)})}; },
      [](In x) { return x[0] * x[0]; });
  add_case(
      "div (broadcast)",
      [](Generator& g) {
        const int64_t n = size_in(g, 2, 4);
        return Inputs{normal(g, {3, n}), away_from_zero(g, {n})};
      },
      [](In x) { return x[0] / x[1]; });
  add_case(
      "neg",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 1, 4), 3})};
      },
      [](In x) { return -x[0]; });
  add_case(
      "scalar ops (x+2, 3x, x/4, 1-x)", [](Generator& g) { return Inputs{normal(g, {size_in(g, 2, 5)})}; },
      [](In x) { return (1.0 - x[0]) * 3.0 + x[0] / 4.0 + 2.0; });
  add_case(
      "rdiv (2/x)", [](Generator& g) { return Inputs{away_from_zero(g, {size_in(g, 2, 5)})}; },
      [](In x) { return 2.0 / x[0]; });
  add_case(
      "pow (x^3)", [](Generator& g) { return Inputs{normal(g, {size_in(g, 2, 5)})}; },
      [](In x) { return pow(x[0], 3); });
  add_case(
      "pow (x^-1.5)", [](Generator& g) { return Inputs{positive(g, {size_in(g, 2, 5)})}; },
      [](In x) { return pow(x[0], -1.5); });

  // ---- elementwise functions ----
  add_case(
      "exp",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 1, 4)})};
      },
      [](In x) { return exp(x[0]); });
  add_case(
      "exp (non-contiguous leaf)", [](Generator& g) { return Inputs{transposed(g, 3, size_in(g, 2, 4))}; },
      [](In x) { return exp(x[0]); });
  add_case(
      "log", [](Generator& g) { return Inputs{positive(g, {size_in(g, 2, 6)})}; },
      [](In x) { return log(x[0]); });
  add_case(
      "sqrt", [](Generator& g) { return Inputs{positive(g, {size_in(g, 2, 6)})}; },
      [](In x) { return sqrt(x[0]); });
  add_case(
      "tanh", [](Generator& g) { return Inputs{normal(g, {size_in(g, 2, 6)})}; },
      [](In x) { return tanh(x[0]); });
  add_case(
      "sigmoid", [](Generator& g) { return Inputs{normal(g, {size_in(g, 2, 6)})}; },
      [](In x) { return sigmoid(x[0]); });
  add_case(
      "relu", [](Generator& g) { return Inputs{away_from_zero(g, {size_in(g, 2, 6)})}; },
      [](In x) { return relu(x[0]); });
  add_case(
      "gelu", [](Generator& g) { return Inputs{normal(g, {size_in(g, 2, 6)})}; },
      [](In x) { return gelu(x[0]); });
  add_case(
      "log1p", [](Generator& g) { return Inputs{positive(g, {size_in(g, 2, 6)})}; },
      [](In x) { return log1p(x[0]); });
  add_case(
      "leaky_relu (0.2)", [](Generator& g) { return Inputs{away_from_zero(g, {size_in(g, 2, 6)})}; },
      [](In x) { return leaky_relu(x[0], 0.2); });
  add_case(
      "silu", [](Generator& g) { return Inputs{normal(g, {size_in(g, 2, 6)})}; },
      [](In x) { return silu(x[0]); });
  add_case(
      "elu (1.5)", [](Generator& g) { return Inputs{away_from_zero(g, {size_in(g, 2, 6)})}; },
      [](In x) { return elu(x[0], 1.5); });
  add_case(
      "softplus (beta 2, threshold 1.5: both parts)",
      // 21 to 27 distinct values from -1 to 1.7, each at least 0.04 from the switch at x = 0.75
      [](Generator& g) {
        return Inputs{distinct(g, {size_in(g, 7, 9), 3})};
      },
      [](In x) { return softplus(x[0], 2.0, 1.5); });
  add_case(
      "abs", [](Generator& g) { return Inputs{away_from_zero(g, {size_in(g, 2, 6)})}; },
      [](In x) { return abs(x[0]); });
  add_case(
      "tanh(x) * sigmoid(x) (two branches)",
      [](Generator& g) { return Inputs{normal(g, {size_in(g, 2, 5)})}; },
      [](In x) { return tanh(x[0]) * sigmoid(x[0]); });
}

}  // namespace minigrad::checks
