// minigrad-functional-reference: the function transforms (autograd/functional.h) against PyTorch's
// torch.autograd.functional, in float64.
//
//   --out DIR   writes, for each case, its inputs, constants, directions and every transform's result to
//               DIR/functional_<case>.safetensors, for scripts/compare-functional-with-pytorch.py to
//               recompute with PyTorch 1.13 and compare (1e-10).
//
// Each file holds the inputs x.<i>; the constants the function reads (w, c, targets, and an encoder
// layer's parameters under layer.<PyTorch's name>); the directions u.<k> (one per output) and v.<i> (one
// per input); the outputs y.<k>; jacobian.<k>.<i> built a row at a time and jacobian_forward.<k>.<i> a
// column at a time; vjp.<i> and jvp.<k>; and, for a function with one result of one element,
// hessian.<i>.<j> (both ways), hvp.<i> (both ways) and vhp.<i>.
//
//   minigrad-functional-reference --out /tmp/functional
//   /usr/bin/python3 scripts/compare-functional-with-pytorch.py /tmp/functional
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>

#include "minigrad/minigrad.h"

namespace {

using namespace minigrad;

constexpr DType F64 = DType::Float64;

using Tensors = std::vector<std::pair<std::string, Tensor>>;

struct Case {
  std::string name;
  std::vector<Variable> inputs;
  functional::Function f;
  Tensors constants;  // what f reads besides its inputs, for PyTorch's twin of f
};

Tensor normal(const Shape& shape) {
  return Tensor::normal(shape, 0, 1, F64);
}

std::string key(const std::string& name, size_t a) {
  return name + "." + std::to_string(a);
}
std::string key(const std::string& name, size_t a, size_t b) {
  return key(name, a) + "." + std::to_string(b);
}

void add_blocks(Tensors& out, const std::string& name, const std::vector<std::vector<Variable>>& blocks) {
  for (size_t a = 0; a < blocks.size(); ++a) {
    for (size_t b = 0; b < blocks[a].size(); ++b) out.emplace_back(key(name, a, b), blocks[a][b].data());
  }
}

void add_list(Tensors& out, const std::string& name, const std::vector<Variable>& values) {
  for (size_t a = 0; a < values.size(); ++a) out.emplace_back(key(name, a), values[a].data());
}

void write_case(const Case& c, const std::string& folder) {
  Tensors out = c.constants;
  add_list(out, "x", c.inputs);
  std::vector<Variable> u, v;
  for (const Variable& x : c.inputs) v.emplace_back(normal(x.shape()));
  const std::vector<Variable> ys = c.f(c.inputs);
  for (const Variable& y : ys) u.emplace_back(normal(y.shape()));
  add_list(out, "u", u);
  add_list(out, "v", v);
  add_list(out, "y", ys);
  add_blocks(out, "jacobian", functional::jacobian(c.f, c.inputs));
  add_blocks(out, "jacobian_forward",
             functional::jacobian(c.f, c.inputs, {.mode = functional::Mode::Forward}));
  add_list(out, "vjp", functional::vjp(c.f, c.inputs, u).products);
  add_list(out, "jvp", functional::jvp(c.f, c.inputs, v).products);
  const bool scalar = ys.size() == 1 && ys[0].numel() == 1;
  if (scalar) {
    add_blocks(out, "hessian", functional::hessian(c.f, c.inputs));
    add_blocks(out, "hessian_forward",
               functional::hessian(c.f, c.inputs, {.mode = functional::Mode::Forward}));
    add_list(out, "hvp", functional::hvp(c.f, c.inputs, v).products);
    add_list(out, "hvp_forward",
             functional::hvp(c.f, c.inputs, v, {.mode = functional::Mode::Forward}).products);
    add_list(out, "vhp", functional::vhp(c.f, c.inputs, v).products);
  }
  const std::string path = folder + "/functional_" + c.name + ".safetensors";
  save_safetensors(path, out, {{"case", c.name}});
  std::cout << "wrote " << path << " (" << out.size() << " tensors)\n";
}

// y = tanh(w·x) ⊙ Σx² + x[:3], R⁴ -> R³.
Case tanh_of_a_product() {
  const Tensor w = normal({3, 4});
  return {"tanh_of_a_product",
          {Variable(normal({4}))},
          [w](const std::vector<Variable>& in) {
            const Variable& x = in[0];
            const Variable wx = reshape(matmul(Variable(w), reshape(x, {4, 1})), {3});
            return std::vector<Variable>{tanh(wx) * sum(x * x) + x.slice(0, 0, 3)};
          },
          {{"w", w}}};
}

// log Σ exp((w·x) ⊙ x), R⁴ -> R.
Case log_sum_exp() {
  const Tensor w = normal({4, 4});
  return {"log_sum_exp",
          {Variable(normal({4}))},
          [w](const std::vector<Variable>& in) {
            const Variable wx = reshape(matmul(Variable(w), reshape(in[0], {4, 1})), {4});
            return std::vector<Variable>{log(sum(exp(wx * in[0])))};
          },
          {{"w", w}}};
}

// (a ⊙ b, Σ a·b²): two inputs of two shapes' worth of elements, two outputs.
Case two_inputs_two_outputs() {
  return {"two_inputs_two_outputs",
          {Variable(normal({2, 3})), Variable(normal({3}))},
          [](const std::vector<Variable>& in) {
            return std::vector<Variable>{in[0] * in[1], sum(in[0] * in[1] * in[1])};
          },
          {}};
}

// Cross-entropy of logits (2, 3) against fixed classes: a Hessian of shape (2, 3, 2, 3).
Case cross_entropy_of_logits() {
  const Tensor targets = Tensor::from_values({2, 0}, {2}, DType::Int64);
  return {"cross_entropy",
          {Variable(normal({2, 3}))},
          [targets](const std::vector<Variable>& in) {
            return std::vector<Variable>{cross_entropy(in[0], targets)};
          },
          {{"targets", targets.to(F64)}}};
}

// (relu(x), abs(x) ⊙ w, clamp(x, -0.5, 1), relu(x) ⊙ x) at an x with a NaN, R⁵ -> four results in R⁵:
// each op's rule at NaN on its own, then a product, where 0·NaN = NaN spreads it through the Jacobian.
Case nan_in_the_input() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor w = normal({5});
  return {"nan_in_the_input",
          {Variable(Tensor::from_values({nan, -1, 2, 0.5, -0.25}, {5}, F64))},
          [w](const std::vector<Variable>& in) {
            const Variable& x = in[0];
            return std::vector<Variable>{relu(x), abs(x) * Variable(w), clamp(x, -0.5, 1.0), relu(x) * x};
          },
          {{"w", w}}};
}

// Σ c ⊙ layer(x) for a Transformer encoder layer in eval mode, with respect to its input x (2, 4, 8).
Case encoder_layer() {
  auto layer = std::make_shared<nn::TransformerEncoderLayer>(
      nn::TransformerEncoderLayerOptions{.d_model = 8,
                                         .nhead = 2,
                                         .dim_feedforward = 16,
                                         .activation = nn::Activation::GELU,
                                         .batch_first = true});
  layer->to(F64);
  for (const Variable& p : layer->parameters()) p.data().copy_(Tensor::normal(p.shape(), 0, 0.5, F64));
  layer->eval();
  const Tensor c = normal({2, 4, 8});
  Tensors constants = {{"c", c}};
  for (const auto& [name, p] : layer->named_parameters()) constants.emplace_back("layer." + name, p.data());
  return {"encoder_layer",
          {Variable(normal({2, 4, 8}))},
          [layer, c](const std::vector<Variable>& in) {
            return std::vector<Variable>{sum((*layer)(in[0]) * Variable(c))};
          },
          constants};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The function transforms against PyTorch's torch.autograd.functional, in float64."};
  std::string out;
  app.add_option("--out", out, "Folder for functional_*.safetensors")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    std::filesystem::create_directories(out);
    manual_seed(7);
    for (const Case& c : {tanh_of_a_product(), log_sum_exp(), two_inputs_two_outputs(),
                          cross_entropy_of_logits(), encoder_layer(), nan_in_the_input()}) {
      write_case(c, out);
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
