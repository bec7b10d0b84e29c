// The catalogue's shape ops, reductions, selection, and softmax and masking.
#include "tests/gradcheck/sections.h"

namespace minigrad::checks {

void add_shape_reduction_selection_cases(const AddCase& add_case) {
  // ---- shape ----
  add_case(
      "reshape",
      [](Generator& g) {
        return Inputs{normal(g, {2, 3, size_in(g, 1, 3)})};
      },
      [](In x) {
        return reshape(x[0], {-1, 2}) * 2.0;
      });
  add_case(
      "transpose",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 1, 3), 3})};
      },
      [](In x) { return transpose(x[0], 0, 2) * 2.0; });
  add_case(
      "permute",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 1, 3), 3})};
      },
      [](In x) {
        return permute(x[0], {1, 2, 0}) * 2.0;
      });
  add_case(
      "slice (step 2, of a transposed view)",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 3, 5), 4})};
      },
      [](In x) { return slice(transpose(x[0], 0, 1), 1, 1, 5, 2) * 2.0; });
  add_case(
      "select",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 2, 4), 3})};
      },
      [](In x) { return select(x[0], 1, 2) * 2.0; });
  add_case(
      "unbind (steps used unevenly, twice, or not)",
      [](Generator& g) {
        return Inputs{normal(g, {4, size_in(g, 1, 3), 2})};
      },
      [](In x) {
        const std::vector<Variable> steps = unbind(x[0], 0);  // 4 x (N, 2)
        return concat({steps[0] * steps[1], steps[3] * 3.0, steps[0]}, 1) + sum(x[0]);
      });
  add_case(
      "concat",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 1, 3)}), normal(g, {2, size_in(g, 1, 3)})};
      },
      [](In x) {
        return concat({x[0], x[1], x[0]}, 1);
      });
  add_case(
      "stack (the last dimension)",
      [](Generator& g) {
        const int64_t n = size_in(g, 1, 3);
        return Inputs{normal(g, {2, n}), normal(g, {2, n})};
      },
      [](In x) {
        return stack({x[0], x[1], x[0]}, -1);
      });
  add_case(
      "unsqueeze, squeeze",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 2, 4), 3})};
      },
      [](In x) { return squeeze(unsqueeze(x[0], 1) * 2.0, 1); });

  // ---- reductions ----
  add_case(
      "sum (all)",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 1, 4), 3})};
      },
      [](In x) { return sum(x[0]); });
  add_case(
      "sum (dims 0 and 2, keepdim)",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 1, 3), 3})};
      },
      [](In x) {
        return sum(x[0], {0, 2}, true);
      });
  add_case(
      "mean (all)",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 1, 4), 3})};
      },
      [](In x) { return mean(x[0]); });
  add_case(
      "mean (dim -1)",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 1, 3), 3})};
      },
      [](In x) { return mean(x[0], {-1}); });
  add_case(
      "max (dim 1)",
      [](Generator& g) {
        return Inputs{distinct(g, {2, size_in(g, 2, 4), 3})};
      },
      [](In x) { return max(x[0], 1); });
  add_case(
      "max (dim 0, keepdim)",
      [](Generator& g) {
        return Inputs{distinct(g, {size_in(g, 2, 4), 3})};
      },
      [](In x) { return max(x[0], 0, true); });
  add_case(
      "min (dim 1)",
      [](Generator& g) {
        return Inputs{distinct(g, {2, size_in(g, 2, 4), 3})};
      },
      [](In x) { return min(x[0], 1); });
  add_case(
      "max and min (whole tensor)",
      [](Generator& g) {
        return Inputs{distinct(g, {size_in(g, 2, 4), 3})};
      },
      [](In x) { return max(x[0]) * min(x[0]); });

  // ---- selection ----
  add_case(
      "clamp (-0.5, 0.5)",
      [](Generator& g) {
        return Inputs{distinct(g, {size_in(g, 2, 4), 3})};
      },
      [](In x) { return clamp(x[0], -0.55, 0.55); });  // distinct values are 0.01 off multiples of 0.1
  add_case(
      "clamp_min and clamp_max", [](Generator& g) { return Inputs{distinct(g, {size_in(g, 3, 6)})}; },
      [](In x) { return clamp_min(x[0], -0.35) + clamp_max(x[0], 0.25); });
  add_case(
      "maximum and minimum (broadcast [m,1] and [n])",
      [](Generator& g) {
        const int64_t m = size_in(g, 2, 3), n = size_in(g, 2, 3);
        // Drawn together as distinct values, so that no two are within eps of a tie.
        const Tensor both = distinct(g, {m + n}).data();
        return Inputs{Variable(both.slice(0, 0, m).reshape({m, 1}).contiguous(), true),
                      Variable(both.slice(0, m, m + n).contiguous(), true)};
      },
      [](In x) { return maximum(x[0], x[1]) * 2.0 + minimum(x[0], x[1]); });
  add_case(
      "where (broadcast cond [n], a [m,n], b [1])",
      [](Generator& g) {
        const int64_t n = size_in(g, 2, 4);
        return Inputs{normal(g, {size_in(g, 1, 3), n}), normal(g, {1})};
      },
      [](In x) {
        const int64_t n = x[0].shape()[1];
        std::vector<bool> c(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) c[static_cast<size_t>(i)] = i % 2 == 0;
        return where(Tensor::from_vector<bool>(c, {n}), x[0], x[1]);
      });

  // ---- softmax and masking ----
  add_case(
      "softmax (last dim)",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 2, 5)})};
      },
      [](In x) { return softmax(x[0], -1); });
  add_case(
      "softmax (dim 0)",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 2, 4), 3})};
      },
      [](In x) { return softmax(x[0], 0); });
  add_case(
      "softmax (non-contiguous leaf)",
      [](Generator& g) { return Inputs{transposed(g, 3, size_in(g, 2, 4))}; },
      [](In x) { return softmax(x[0], 1); });
  add_case(
      "log_softmax",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 2, 5)})};
      },
      [](In x) { return log_softmax(x[0], -1); });
  add_case(
      "masked_fill, then softmax",
      [](Generator& g) {
        return Inputs{normal(g, {3, size_in(g, 3, 5)})};
      },
      [](In x) {
        // Mask the last key of every row: those entries get no gradient.
        const int64_t n = x[0].shape()[1];
        const Tensor mask = ge(Tensor::arange(n, DType::Int64), Tensor::scalar(double(n - 1), DType::Int64));
        return softmax(masked_fill(x[0], mask, -1e6), -1);
      });
}

}  // namespace minigrad::checks
