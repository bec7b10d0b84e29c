// The catalogue's neural-network functions (embedding, losses, dropout, batch norm, ...) and attention.
#include <cmath>

#include "tests/gradcheck/sections.h"

namespace minigrad::checks {

void add_nn_function_cases(const AddCase& add_case) {
  // ---- neural-network functions ----
  // Without a padding index: the padding row's gradient is zero by design, not the true derivative (the
  // test suite checks that separately).
  add_case(
      "embedding (repeated ids)",
      [](Generator& g) {
        return Inputs{normal(g, {5, size_in(g, 1, 3)})};
      },
      [](In x) {
        const Tensor ids = Tensor::from_vector<int64_t>({0, 3, 3, 1, 4, 0}, {2, 3});
        return embedding(x[0], ids);
      });
  // Checked through its dense view: gradcheck reads the table's gradient with grad(), which turns the
  // row-sparse gradient dense; the second derivatives go through the dense fallback of create_graph.
  add_case(
      "embedding (sparse, repeated ids)",
      [](Generator& g) {
        return Inputs{normal(g, {6, size_in(g, 1, 3)})};
      },
      [](In x) {
        const Tensor ids = Tensor::from_vector<int64_t>({5, 3, 3, 1, 5, 0}, {3, 2});
        return embedding(x[0], ids, {.sparse = true});
      });
  // One table looked up twice sparsely and once densely: the row-sparse gradients are coalesced with each
  // other, then added into the dense one.
  add_case(
      "embedding (sparse twice, then dense, one table)",
      [](Generator& g) {
        return Inputs{normal(g, {5, size_in(g, 1, 3)})};
      },
      [](In x) {
        const Tensor first = Tensor::from_vector<int64_t>({4, 1, 4}, {3});
        const Tensor second = Tensor::from_vector<int64_t>({1, 2, 0}, {3});
        return embedding(x[0], first, {.sparse = true}) * embedding(x[0], second, {.sparse = true}) +
               embedding(x[0], Tensor::from_vector<int64_t>({3, 3, 1}, {3}));
      });
  add_case(
      "dropout (p = 0.3, fixed mask)",
      [](Generator& g) {
        return Inputs{normal(g, {3, size_in(g, 2, 5)})};
      },
      [](In x) {
        Generator mask_generator(7);  // the same mask at every evaluation
        return dropout(x[0], 0.3, /*training=*/true, &mask_generator);
      });
  add_case(
      "dropout2d (p = 0.5, fixed mask)",
      [](Generator& g) {
        return Inputs{normal(g, {3, 4, 2, size_in(g, 2, 4)})};
      },
      [](In x) {
        Generator mask_generator(5);  // the same channels dropped at every evaluation
        return dropout2d(x[0], 0.5, /*training=*/true, &mask_generator);
      });
  add_case(
      "batch_norm (training, images, affine, running statistics updated)",
      [](Generator& g) {
        return Inputs{normal(g, {3, 2, 2, size_in(g, 2, 3)}), normal(g, {2}), normal(g, {2})};
      },
      [](In x) {
        const Tensor running_mean = Tensor::zeros({2}, DType::Float64),
                     running_var = Tensor::ones({2}, DType::Float64);
        return batch_norm(x[0], running_mean, running_var, x[1], x[2], {.training = true});
      });
  add_case(
      "batch_norm (training, features, no affine)",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 3, 5), 3})};
      },
      [](In x) { return batch_norm(x[0], Tensor(), Tensor(), Variable(), Variable(), {.training = true}); });
  add_case(
      "batch_norm (evaluation, running statistics)",
      [](Generator& g) {
        return Inputs{normal(g, {4, 3, 2}), normal(g, {3}), normal(g, {3})};
      },
      [](In x) {
        const Tensor running_mean = Tensor::from_values({0.5, -1, 2}, {3}, DType::Float64);
        const Tensor running_var = Tensor::from_values({0.25, 1, 4}, {3}, DType::Float64);
        return batch_norm(x[0], running_mean, running_var, x[1], x[2], {.training = false});
      });
  add_case(
      "layer_norm",
      [](Generator& g) {
        const int64_t d = size_in(g, 2, 5);
        return Inputs{normal(g, {3, d}), normal(g, {d}), normal(g, {d})};
      },
      [](In x) { return layer_norm(x[0], x[1], x[2]); });
  add_case(
      "layer_norm (3-D, no affine)",
      [](Generator& g) {
        return Inputs{normal(g, {2, 2, size_in(g, 2, 5)})};
      },
      [](In x) { return layer_norm(x[0], Variable(), Variable()); });
  add_case(
      "cross_entropy",
      [](Generator& g) {
        return Inputs{normal(g, {4, size_in(g, 3, 5)})};
      },
      [](In x) {
        return cross_entropy(x[0], Tensor::from_vector<int64_t>({2, 0, 1, 2}, {4}));
      });
  add_case(
      "cross_entropy (ignore_index)",
      [](Generator& g) {
        return Inputs{normal(g, {4, size_in(g, 3, 5)})};
      },
      [](In x) {
        return cross_entropy(x[0], Tensor::from_vector<int64_t>({2, -100, 1, 0}, {4}),
                             {.ignore_index = -100});
      });
  add_case(
      "cross_entropy (label_smoothing)",
      [](Generator& g) {
        return Inputs{normal(g, {4, size_in(g, 3, 5)})};
      },
      [](In x) {
        return cross_entropy(x[0], Tensor::from_vector<int64_t>({2, -100, 1, 0}, {4}),
                             {.ignore_index = -100, .label_smoothing = 0.2});
      });
  add_case(
      "cross_entropy (class weights, label_smoothing, per row)",
      [](Generator& g) {
        return Inputs{normal(g, {4, 3})};
      },
      [](In x) {
        return cross_entropy(x[0], Tensor::from_vector<int64_t>({2, -100, 1, 0}, {4}),
                             {.weight = Tensor::from_vector<double>({0.5, 2.0, 1.5}, {3}),
                              .reduction = Reduction::None,
                              .label_smoothing = 0.2});
      });
  add_case(
      "cross_entropy (N, C, d) with class weights",
      [](Generator& g) {
        return Inputs{normal(g, {2, 3, size_in(g, 1, 3)})};
      },
      [](In x) {
        const int64_t d = x[0].shape()[2];
        std::vector<int64_t> targets(static_cast<size_t>(2 * d));
        for (size_t i = 0; i < targets.size(); ++i) targets[i] = static_cast<int64_t>(i % 3);
        return cross_entropy(x[0], Tensor::from_vector(targets, {2, d}),
                             {.weight = Tensor::from_vector<double>({0.5, 2.0, 1.5}, {3})});
      });
  add_case(
      "norm (p = 2, 1, 3 over dims, inf)",
      [](Generator& g) {
        return Inputs{normal(g, {size_in(g, 2, 4), 3})};
      },
      [](In x) {
        return norm(x[0]) + sum(norm(x[0], 1, {1})) + sum(norm(x[0], 3, {0}, true)) + norm(x[0], INFINITY);
      });
  add_case(
      "binary_cross_entropy_with_logits (pos_weight, weight, per element)",
      [](Generator& g) {
        const Shape s{2, 3};
        return Inputs{normal(g, s), Variable(Tensor::uniform(s, 0.1, 0.9, F64, &g), true)};
      },
      [](In x) {
        return binary_cross_entropy_with_logits(
            x[0], x[1],
            {.weight = Tensor::from_vector<double>({1.0, 0.5}, {2, 1}),
             .reduction = Reduction::None,
             .pos_weight = Tensor::from_vector<double>({2.0, 0.5, 3.0}, {3})});
      });
  add_case(
      "binary_cross_entropy_with_logits",
      [](Generator& g) {
        const Shape s{size_in(g, 2, 5)};
        return Inputs{normal(g, s), Variable(Tensor::uniform(s, 0.1, 0.9, F64, &g), true)};
      },
      [](In x) { return binary_cross_entropy_with_logits(x[0], x[1]); });
  add_case(
      "mse_loss and l1_loss",
      [](Generator& g) {
        const Shape s{size_in(g, 1, 3), size_in(g, 2, 4)};
        return Inputs{normal(g, s), normal(g, s)};
      },
      [](In x) { return mse_loss(x[0], x[1]) + l1_loss(x[0], x[1], {.reduction = Reduction::Sum}); });
  add_case(
      "smooth_l1_loss (beta 0.35) and huber_loss (delta 0.45, none)",
      [](Generator& g) {
        // x drawn distinct and t zero: |x - t| stays 0.01 or more from both kinks.
        const Variable x = distinct(g, {size_in(g, 3, 5), 4});
        return Inputs{x, Variable(Tensor::zeros(x.shape(), F64), true)};
      },
      [](In x) {
        return smooth_l1_loss(x[0], x[1], {.beta = 0.35}) * 3.0 +
               huber_loss(x[0], x[1], {.reduction = Reduction::None, .delta = 0.45});
      });
  add_case(
      "nll_loss (ignore_index)",
      [](Generator& g) {
        return Inputs{normal(g, {4, size_in(g, 3, 5)})};
      },
      [](In x) {
        return nll_loss(log_softmax(x[0], 1), Tensor::from_vector<int64_t>({2, -100, 1, 0}, {4}));
      });
  add_case(
      "nll_loss (class weights, (N, C, d))",
      [](Generator& g) {
        return Inputs{normal(g, {2, 3, 2})};
      },
      [](In x) {
        return nll_loss(log_softmax(x[0], 1), Tensor::from_vector<int64_t>({2, -100, 1, 0}, {2, 2}),
                        {.weight = Tensor::from_vector<double>({0.5, 2.0, 1.5}, {3})});
      });
  add_case(
      "flatten (1)",
      [](Generator& g) {
        return Inputs{normal(g, {2, size_in(g, 1, 3), 3})};
      },
      [](In x) { return flatten(x[0], 1); });

  // ---- attention: both kernels, every kind of mask at once, dropout with a fixed seed ----
  for (AttentionKernel kernel : {AttentionKernel::Fused, AttentionKernel::Composed}) {
    add_case(
        std::string("scaled_dot_product_attention (") +
            (kernel == AttentionKernel::Fused ? "fused" : "composed") +
            ", 2 heads, n_q 3 != n_k 4, valid_lens + key padding + causal, dropout 0.3)",
        [](Generator& g) {
          const int64_t d = size_in(g, 2, 3);
          return Inputs{normal(g, {2, 2, 3, d}), normal(g, {2, 2, 4, d}), normal(g, {2, 2, 4, 2})};
        },
        [kernel](In x) {
          const AttentionMask mask{
              .valid_lens = Tensor::from_vector<int64_t>({4, 3}, {2}),
              .key_padding_mask = Tensor::from_values({0, 1, 0, 0, 0, 0, 0, 0}, {2, 4}, DType::Bool),
              .causal = true};
          return scaled_dot_product_attention(x[0], x[1], x[2],
                                              {.mask = mask, .dropout = 0.3, .seed = 11, .kernel = kernel})
              .output;
        });
  }
}

}  // namespace minigrad::checks
