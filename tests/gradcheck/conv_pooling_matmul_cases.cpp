// The catalogue's convolution, pooling, fold and matmul.
#include "tests/gradcheck/sections.h"

namespace minigrad::checks {

void add_conv_pooling_matmul_cases(const AddCase& add_case) {
  // ---- matmul ----
  // ---- convolution ----
  add_case(
      "conv1d (stride 2, padding 1, bias)",
      [](Generator& g) {
        const int64_t c = size_in(g, 1, 3);
        return Inputs{normal(g, {2, c, size_in(g, 5, 8)}), normal(g, {3, c, 3}), normal(g, {3})};
      },
      [](In x) { return conv1d(x[0], x[1], x[2], {.stride = 2, .padding = 1}); });
  add_case(
      "conv1d (dilation 2, groups 2, no bias)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 4, size_in(g, 6, 9)}), normal(g, {6, 2, 2})};
      },
      [](In x) { return conv1d(x[0], x[1], Variable(), {.dilation = 2, .groups = 2}); });
  add_case(
      "conv1d (padding same, even kernel)",
      [](Generator& g) {
        return Inputs{normal(g, {1, 2, size_in(g, 3, 6)}), normal(g, {2, 2, 4}), normal(g, {2})};
      },
      [](In x) { return conv1d(x[0], x[1], x[2], {.padding_same = true}); });
  add_case(
      "conv2d (3x2 kernel, stride (2, 1), padding (1, 0), bias)",
      [](Generator& g) {
        const int64_t c = size_in(g, 1, 3);
        return Inputs{normal(g, {2, c, size_in(g, 4, 6), size_in(g, 3, 5)}), normal(g, {3, c, 3, 2}),
                      normal(g, {3})};
      },
      [](In x) {
        return conv2d(x[0], x[1], x[2], {.stride = {2, 1}, .padding = {1, 0}});
      });
  add_case(
      "conv2d (dilation 2, groups 2, no bias)",
      [](Generator& g) {
        return Inputs{normal(g, {1, 4, size_in(g, 5, 7), 5}), normal(g, {4, 2, 2, 2})};
      },
      [](In x) { return conv2d(x[0], x[1], Variable(), {.dilation = 2, .groups = 2}); });
  add_case(
      "conv2d (padding same, even kernel)",
      [](Generator& g) {
        return Inputs{normal(g, {1, 2, size_in(g, 3, 5), 4}), normal(g, {2, 2, 2, 3}), normal(g, {2})};
      },
      [](In x) { return conv2d(x[0], x[1], x[2], {.padding_same = true}); });
  add_case(
      "conv2d (3x3, padding 1, 32 input channels: Winograd's forward)",
      [](Generator& g) {
        return Inputs{normal(g, {1, 32, size_in(g, 3, 5), 4}), normal(g, {2, 32, 3, 3}), normal(g, {2})};
      },
      [](In x) { return conv2d(x[0], x[1], x[2], {.padding = 1}); });
  add_case(
      "conv2d (3x3, padding (2, 0), 32 -> 40 channels, weight held constant: Winograd's forward and input "
      "gradient)",
      [](Generator& g) {
        return Inputs{normal(g, {1, 32, size_in(g, 2, 3), 3}), constant(g, {40, 32, 3, 3}), normal(g, {40})};
      },
      [](In x) {
        return conv2d(x[0], x[1], x[2], {.padding = {2, 0}});
      });
  // conv2d's backward ops, each differentiated in both its operands: x 5×4 in 2 groups of 2 channels, a
  // 3×2 kernel, stride (2, 1), dilation (1, 2), padding (1, 0) -> 3×2 outputs.
  const Conv2dGeometry strided{.height = {.kernel = 3, .stride = 2, .pad_left = 1, .pad_right = 1},
                               .width = {.kernel = 2, .dilation = 2}};
  add_case(
      "conv2d_input_grad (stride, dilation, groups 2)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 4, 3, 2}), normal(g, {4, 2, 3, 2})};
      },
      [strided](In x) { return conv2d_input_grad(x[0], x[1], 5, 4, strided, 2); });
  add_case(
      "conv2d_weight_grad (stride, dilation, groups 2)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 4, 3, 2}), normal(g, {2, 4, 5, 4})};
      },
      [strided](In x) { return conv2d_weight_grad(x[0], x[1], strided, 2); });
  add_case(
      "conv2d_input_grad (3x3, padding 1, 32 -> 40 channels, weight held constant: Winograd's)",
      [](Generator& g) {
        return Inputs{normal(g, {1, 40, 3, 2}), constant(g, {40, 32, 3, 3})};
      },
      [](In x) {
        const Conv1dGeometry same{.kernel = 3, .pad_left = 1, .pad_right = 1};
        return conv2d_input_grad(x[0], x[1], 3, 2, {.height = same, .width = same}, 1);
      });
  add_case(
      "max_pool1d (kernel 3, stride 2, padding 1)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 2, size_in(g, 4, 7)})};
      },
      [](In x) { return max_pool1d(x[0], {.kernel_size = 3, .stride = 2, .padding = 1}); });
  add_case(
      "avg_pool1d (kernel 3, stride 2, padding 1, with and without the padding counted)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 2, size_in(g, 4, 7)})};
      },
      [](In x) {
        return avg_pool1d(x[0], {.kernel_size = 3, .stride = 2, .padding = 1}) +
               avg_pool1d(x[0], {.kernel_size = 3, .stride = 2, .padding = 1, .count_include_pad = false});
      });
  add_case(
      "max_pool2d (kernel 3, stride 2, padding 1; kernel 2x3, dilation (2, 1); kernel 2, its own kernel)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 2, size_in(g, 5, 7), 6})};
      },
      [](In x) {
        return sum(max_pool2d(x[0], {.kernel_size = 3, .stride = 2, .padding = 1}), {2, 3}) +
               sum(max_pool2d(x[0], {.kernel_size = {2, 3}, .dilation = {2, 1}}), {2, 3}) +
               sum(max_pool2d(x[0], {.kernel_size = 2}), {2, 3});
      });
  add_case(
      "avg_pool2d (kernel 3x2, stride (2, 1), padding 1, with and without the padding counted)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 2, size_in(g, 4, 7), 5})};
      },
      [](In x) {
        const AvgPool2dOptions counted{.kernel_size = {3, 2}, .stride = {2, 1}, .padding = 1};
        AvgPool2dOptions uncounted = counted;
        uncounted.count_include_pad = false;
        return avg_pool2d(x[0], counted) + avg_pool2d(x[0], uncounted);
      });
  add_case(
      "adaptive_avg_pool2d (to 2x1, to 3x2 in overlapping bins, and global)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 3, 4, size_in(g, 2, 5)})};
      },
      [](In x) {
        return sum(adaptive_avg_pool2d(x[0], {2, 1}), {2}) + sum(adaptive_avg_pool2d(x[0], {3, 2}), {2}) +
               reshape(adaptive_avg_pool2d(x[0], 1), {2, 3, 1});
      });
  add_case(
      "max_over_time and mean_over_time (valid lengths 3 and 5)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 3, 5})};
      },
      [](In x) {
        const Tensor lens = Tensor::from_vector<int64_t>({3, 5}, {2});
        return max_over_time(x[0], lens) + mean_over_time(x[0], lens);
      });
  add_case(
      "max_over_time and mean_over_time (dim 1, lengths 4, 0, 2)",
      [](Generator& g) {
        return Inputs{distinct(g, {3, 4, 2})};
      },
      [](In x) {
        const Tensor lens = Tensor::from_vector<int64_t>({4, 0, 2}, {3});
        return max_over_time(x[0], lens, /*dim=*/1) + mean_over_time(x[0], lens, /*dim=*/1);
      });
  add_case(
      "fold1d (col2im)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 6, 4})};  // C 2, K 3; L_out = (7 + 2 - 3) / 2 + 1
      },
      [](In x) {
        return fold1d(x[0], 7,
                      Conv1dGeometry{.kernel = 3, .stride = 2, .dilation = 1, .pad_left = 1, .pad_right = 1});
      });

  add_case(
      "fold2d (col2im over an image)",
      [](Generator& g) {
        // C 2, a 3x2 kernel; H 5, W 4 give 3x3 windows (stride 2 and 1, padding 1 and 0)
        return Inputs{normal(g, {1, 12, 9})};
      },
      [](In x) {
        return fold2d(x[0], 5, 4,
                      Conv2dGeometry{
                          .height = {.kernel = 3, .stride = 2, .dilation = 1, .pad_left = 1, .pad_right = 1},
                          .width = {.kernel = 2, .stride = 1, .dilation = 1, .pad_left = 0, .pad_right = 0}});
      });

  add_case(
      "matmul",
      [](Generator& g) {
        const int64_t k = size_in(g, 1, 4);
        return Inputs{normal(g, {size_in(g, 1, 4), k}), normal(g, {k, size_in(g, 1, 4)})};
      },
      [](In x) { return matmul(x[0], x[1]); });
  add_case(
      "matmul (transposed inputs)",
      [](Generator& g) {
        const int64_t k = size_in(g, 2, 4);
        return Inputs{transposed(g, 3, k), normal(g, {size_in(g, 2, 3), k})};
      },
      [](In x) { return matmul(x[0], transpose(x[1], 0, 1)); });
  add_case(
      "matmul (batched)",
      [](Generator& g) {
        const int64_t k = size_in(g, 1, 3);
        return Inputs{normal(g, {2, size_in(g, 1, 3), k}), normal(g, {2, k, size_in(g, 1, 3)})};
      },
      [](In x) { return matmul(x[0], x[1]); });
  add_case(
      "matmul (batch broadcast [2,1,m,k] @ [3,k,n])",
      [](Generator& g) {
        const int64_t k = size_in(g, 1, 3);
        return Inputs{normal(g, {2, 1, 2, k}), normal(g, {3, k, 2})};
      },
      [](In x) { return matmul(x[0], x[1]); });
  add_case(
      "matmul (batched @ 2-D weight)",
      [](Generator& g) {
        const int64_t k = size_in(g, 1, 3);
        return Inputs{normal(g, {2, size_in(g, 1, 3), k}), normal(g, {k, size_in(g, 1, 3)})};
      },
      [](In x) { return matmul(x[0], x[1]); });
}

}  // namespace minigrad::checks
