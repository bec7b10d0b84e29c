// minigrad-functions-reference: runs the losses, activations, selection ops and one_hot on random float64
// inputs with a random upstream gradient, and writes each case's inputs, output and gradients to a
// safetensors file, for scripts/compare-functions-with-pytorch.py to run the same calls through PyTorch 1.13
// and compare. A case's name says which PyTorch call it is.
//
//   minigrad-functions-reference --out /tmp/functions
//   /usr/bin/python3 scripts/compare-functions-with-pytorch.py /tmp/functions
#include <CLI/CLI.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>

#include "minigrad/minigrad.h"

namespace {

using namespace minigrad;
constexpr DType F64 = DType::Float64;

// The inputs of a case: x always; t (a second operand, or class targets stored as float64) if used.
struct Inputs {
  Variable x, t;
  Tensor ids;  // int64 class targets, for nll_loss
};

struct Case {
  std::string name;  // the key compare-functions-with-pytorch.py looks up
  std::function<Inputs()> make;
  std::function<Variable(const Inputs&)> f;
};

Variable normal(const Shape& shape) {
  return Variable(Tensor::normal(shape, 0, 2, F64), true);
}

Inputs x_only(const Shape& shape) {
  return {normal(shape), {}, {}};
}
Inputs x_and_t(const Shape& shape) {
  return {normal(shape), normal(shape), {}};
}
// Log-probabilities of 5 rows over 4 classes, and targets with row 2 ignored (-100).
Inputs log_probabilities() {
  return {Variable(log_softmax(Tensor::normal({5, 4}, 0, 2, F64), 1), true),
          {},
          Tensor::from_vector<int64_t>({3, 0, -100, 1, 3}, {5})};
}

// Logits of 5 rows over 4 classes, and targets with row 2 ignored (-100).
Inputs class_logits() {
  return {normal({5, 4}), {}, Tensor::from_vector<int64_t>({3, 0, -100, 1, 3}, {5})};
}
// Logits (2, 4, 3): 2 sequences of 3 positions over 4 classes, and targets (2, 3), one ignored.
Inputs sequence_logits() {
  return {normal({2, 4, 3}), {}, Tensor::from_vector<int64_t>({3, 0, 1, 2, -100, 3}, {2, 3})};
}
// Scores (2, 3, 4) and a class of 4 at each of the (2, 3) positions, for one_hot to pick with.
Inputs scores_and_classes() {
  return {normal({2, 3, 4}), {}, Tensor::from_vector<int64_t>({3, 0, 1, 2, 0, 3}, {2, 3})};
}
// One example's logits over 4 classes, unbatched, and its target.
Inputs one_example() {
  return {normal({4}), {}, Tensor::from_vector<int64_t>({2}, {})};
}
// Logits (4, 3) and targets in [0, 1], both differentiable.
Inputs binary_targets() {
  return {normal({4, 3}), Variable(Tensor::uniform({4, 3}, 0, 1, F64), true), {}};
}
// The class weights of the cases that take them (4 classes), and the positive weights (3 columns); the
// Python side uses the same.
Tensor class_weight() {
  return Tensor::from_vector<double>({0.5, 2.0, 1.0, 1.5}, {4});
}
Tensor pos_weight() {
  return Tensor::from_vector<double>({2.0, 0.5, 3.0}, {3});
}

std::vector<Case> cases() {
  return {
      {"cross_entropy", class_logits, [](const Inputs& in) { return cross_entropy(in.x, in.ids); }},
      {"cross_entropy_weight", class_logits,
       [](const Inputs& in) { return cross_entropy(in.x, in.ids, {.weight = class_weight()}); }},
      {"cross_entropy_weight_sum", class_logits,
       [](const Inputs& in) {
         return cross_entropy(in.x, in.ids, {.weight = class_weight(), .reduction = Reduction::Sum});
       }},
      {"cross_entropy_weight_none", class_logits,
       [](const Inputs& in) {
         return cross_entropy(in.x, in.ids, {.weight = class_weight(), .reduction = Reduction::None});
       }},
      {"cross_entropy_weight_smoothing0.2", class_logits,
       [](const Inputs& in) {
         return cross_entropy(in.x, in.ids, {.weight = class_weight(), .label_smoothing = 0.2});
       }},
      {"cross_entropy_smoothing0.2_none", class_logits,
       [](const Inputs& in) {
         return cross_entropy(in.x, in.ids, {.reduction = Reduction::None, .label_smoothing = 0.2});
       }},
      {"cross_entropy_nd_weight", sequence_logits,
       [](const Inputs& in) { return cross_entropy(in.x, in.ids, {.weight = class_weight()}); }},
      {"cross_entropy_nd_none", sequence_logits,
       [](const Inputs& in) { return cross_entropy(in.x, in.ids, {.reduction = Reduction::None}); }},
      {"cross_entropy_unbatched", one_example, [](const Inputs& in) { return cross_entropy(in.x, in.ids); }},
      {"nll_loss_weight", log_probabilities,
       [](const Inputs& in) { return nll_loss(in.x, in.ids, {.weight = class_weight()}); }},
      {"nll_loss_weight_none", log_probabilities,
       [](const Inputs& in) {
         return nll_loss(in.x, in.ids, {.weight = class_weight(), .reduction = Reduction::None});
       }},
      {"nll_loss_nd_weight_sum", sequence_logits,
       [](const Inputs& in) {
         return nll_loss(log_softmax(in.x, 1), in.ids,
                         {.weight = class_weight(), .reduction = Reduction::Sum});
       }},
      {"norm",
       [] {
         return x_only({3, 4});
       },
       [](const Inputs& in) { return norm(in.x); }},
      {"norm_1_dim1",
       [] {
         return x_only({3, 4});
       },
       [](const Inputs& in) { return norm(in.x, 1, {1}); }},
      {"norm_3_dim0_keepdim",
       [] {
         return x_only({3, 4});
       },
       [](const Inputs& in) { return norm(in.x, 3, {0}, true); }},
      {"norm_inf",
       [] {
         return x_only({3, 4});
       },
       [](const Inputs& in) { return norm(in.x, INFINITY); }},
      {"norm_0.5_dims01",
       [] {
         return x_only({2, 3, 2});
       },
       [](const Inputs& in) {
         return norm(in.x, 0.5, {0, 1});
       }},
      {"bce_with_logits", binary_targets,
       [](const Inputs& in) { return binary_cross_entropy_with_logits(in.x, in.t); }},
      {"bce_with_logits_pos_weight", binary_targets,
       [](const Inputs& in) {
         return binary_cross_entropy_with_logits(in.x, in.t, {.pos_weight = pos_weight()});
       }},
      {"bce_with_logits_pos_weight_none", binary_targets,
       [](const Inputs& in) {
         return binary_cross_entropy_with_logits(in.x, in.t,
                                                 {.reduction = Reduction::None, .pos_weight = pos_weight()});
       }},
      {"bce_with_logits_weight_sum", binary_targets,
       [](const Inputs& in) {
         return binary_cross_entropy_with_logits(
             in.x, in.t, {.weight = pos_weight().reshape({1, 3}), .reduction = Reduction::Sum});
       }},
      {"mse_loss",
       [] {
         return x_and_t({3, 4});
       },
       [](const Inputs& in) { return mse_loss(in.x, in.t); }},
      {"mse_loss_sum", [] { return x_and_t({6}); },
       [](const Inputs& in) { return mse_loss(in.x, in.t, {.reduction = Reduction::Sum}); }},
      {"mse_loss_none",
       [] {
         return x_and_t({2, 3});
       },
       [](const Inputs& in) { return mse_loss(in.x, in.t, {.reduction = Reduction::None}); }},
      {"l1_loss",
       [] {
         return x_and_t({3, 4});
       },
       [](const Inputs& in) { return l1_loss(in.x, in.t); }},
      {"smooth_l1_loss_beta0.5_sum",
       [] {
         return x_and_t({4, 5});
       },
       [](const Inputs& in) {
         return smooth_l1_loss(in.x, in.t, {.reduction = Reduction::Sum, .beta = 0.5});
       }},
      {"smooth_l1_loss", [] { return x_and_t({12}); },
       [](const Inputs& in) { return smooth_l1_loss(in.x, in.t); }},
      {"huber_loss_delta1.5_none",
       [] {
         return x_and_t({3, 4});
       },
       [](const Inputs& in) { return huber_loss(in.x, in.t, {.reduction = Reduction::None, .delta = 1.5}); }},
      {"nll_loss", log_probabilities, [](const Inputs& in) { return nll_loss(in.x, in.ids); }},
      {"nll_loss_sum", log_probabilities,
       [](const Inputs& in) { return nll_loss(in.x, in.ids, {.reduction = Reduction::Sum}); }},
      {"nll_loss_none", log_probabilities,
       [](const Inputs& in) { return nll_loss(in.x, in.ids, {.reduction = Reduction::None}); }},
      {"leaky_relu_0.2",
       [] {
         return x_only({4, 5});
       },
       [](const Inputs& in) { return leaky_relu(in.x, 0.2); }},
      {"silu",
       [] {
         return x_only({4, 5});
       },
       [](const Inputs& in) { return silu(in.x); }},
      {"elu_1.5",
       [] {
         return x_only({4, 5});
       },
       [](const Inputs& in) { return elu(in.x, 1.5); }},
      {"softplus_beta2_threshold3",
       [] {
         return x_only({4, 5});
       },
       [](const Inputs& in) { return softplus(in.x, 2.0, 3.0); }},
      {"log1p",
       [] {
         return Inputs{Variable(Tensor::uniform({4, 5}, -0.9, 3, F64), true), {}, {}};
       },
       [](const Inputs& in) { return log1p(in.x); }},
      {"clamp_-0.5_0.7",
       [] {
         return x_only({4, 5});
       },
       [](const Inputs& in) { return clamp(in.x, -0.5, 0.7); }},
      {"maximum",
       [] {
         return x_and_t({4, 5});
       },
       [](const Inputs& in) { return maximum(in.x, in.t); }},
      {"minimum",
       [] {
         return x_and_t({4, 5});
       },
       [](const Inputs& in) { return minimum(in.x, in.t); }},
      {"where_x_gt_t",
       [] {
         return x_and_t({4, 5});
       },
       [](const Inputs& in) { return where(gt(in.x.data(), in.t.data()), in.x, in.t); }},
      {"min_dim1",
       [] {
         return x_only({4, 5});
       },
       [](const Inputs& in) { return min(in.x, 1); }},
      {"max_all",
       [] {
         return x_only({4, 5});
       },
       [](const Inputs& in) { return max(in.x); }},
      // one_hot's classes, inferred (4) and given (5), pick each position's score: (2, 3) and its gradient.
      {"one_hot_picks", scores_and_classes,
       [](const Inputs& in) { return sum(in.x * one_hot(in.ids).to(F64), {2}); }},
      {"one_hot_5_classes", scores_and_classes,
       [](const Inputs& in) { return one_hot(in.ids, 5).to(F64).slice(2, 0, 4) * in.x; }},
      {"flatten_1",
       [] {
         return x_only({2, 3, 4});
       },
       [](const Inputs& in) { return flatten(in.x, 1); }},
      {"max_pool1d_k3_s2_p1",
       [] {
         return x_only({2, 3, 7});
       },
       [](const Inputs& in) { return max_pool1d(in.x, {.kernel_size = 3, .stride = 2, .padding = 1}); }},
      {"avg_pool1d_k3_s2_p1_uncounted",
       [] {
         return x_only({2, 3, 7});
       },
       [](const Inputs& in) {
         return avg_pool1d(in.x, {.kernel_size = 3, .stride = 2, .padding = 1, .count_include_pad = false});
       }},
      {"max_pool2d_k3_s2_p1",
       [] {
         return x_only({2, 3, 7, 6});
       },
       [](const Inputs& in) { return max_pool2d(in.x, {.kernel_size = 3, .stride = 2, .padding = 1}); }},
      {"max_pool2d_k2",  // MaxPool2d(2): a kernel of its own (tensor/pooling.cpp); an odd height too
       [] {
         return x_only({2, 3, 7, 6});
       },
       [](const Inputs& in) { return max_pool2d(in.x, {.kernel_size = 2}); }},
      {"max_pool2d_k2x3_dilation2x1",
       [] {
         return x_only({1, 2, 7, 6});
       },
       [](const Inputs& in) {
         return max_pool2d(in.x, {.kernel_size = {2, 3}, .dilation = {2, 1}});
       }},
      {"avg_pool2d_k3x2_s2x1_p1x1_counted",
       [] {
         return x_only({2, 2, 7, 5});
       },
       [](const Inputs& in) {
         return avg_pool2d(in.x, {.kernel_size = {3, 2}, .stride = {2, 1}, .padding = {1, 1}});
       }},
      {"avg_pool2d_k3_s2_p1_uncounted",
       [] {
         return x_only({2, 2, 7, 6});
       },
       [](const Inputs& in) {
         return avg_pool2d(in.x, {.kernel_size = 3, .stride = 2, .padding = 1, .count_include_pad = false});
       }},
      {"adaptive_avg_pool2d_2x3",
       [] {
         return x_only({2, 3, 4, 6});
       },
       [](const Inputs& in) {
         return adaptive_avg_pool2d(in.x, {2, 3});
       }},
      {"adaptive_avg_pool2d_3x4_uneven",  // bins that overlap: 3 of 5 rows, 4 of 7 columns
       [] {
         return x_only({2, 3, 5, 7});
       },
       [](const Inputs& in) {
         return adaptive_avg_pool2d(in.x, {3, 4});
       }},
  };
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Write the losses', activations' and selection ops' inputs, outputs and gradients for comparison "
      "with PyTorch."};
  std::string out = "out/functions-reference";
  app.add_option("--out", out, "Folder for function_*.safetensors")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    std::filesystem::create_directories(out);
    manual_seed(11);
    for (const Case& c : cases()) {
      const Inputs in = c.make();
      const Variable y = c.f(in);
      const Tensor v = Tensor::normal(y.shape(), 0, 1, F64);  // the upstream gradient
      y.backward(v);
      std::vector<std::pair<std::string, Tensor>> tensors = {
          {"x", in.x.data()}, {"x.grad", in.x.grad()}, {"v", v}, {"y", y.data()}};
      if (in.t.defined()) {
        tensors.emplace_back("t", in.t.data());
        tensors.emplace_back("t.grad", in.t.grad());
      }
      if (in.ids.defined()) tensors.emplace_back("ids", in.ids.to(F64));
      const std::string path = out + "/function_" + c.name + ".safetensors";
      save_safetensors(path, tensors, {{"case", c.name}});
      std::cout << "wrote " << path << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
