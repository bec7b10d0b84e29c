#include "tests/gradcheck/cases.h"

#include "tests/gradcheck/sections.h"

namespace minigrad::checks {

namespace {

std::vector<GradcheckCase> build() {
  std::vector<GradcheckCase> cases;
  const AddCase add_case = [&](std::string name, std::function<Inputs(Generator&)> make,
                               GradcheckFunction f) {
    cases.push_back({std::move(name), [make, f](Generator& g) { return Check{make(g), f}; }});
  };
  const AddLayer add_layer = [&](std::string name, std::function<Check(Generator&)> make) {
    cases.push_back({std::move(name), std::move(make)});
  };
  // The sections, in the order of autograd/functions.h.
  add_elementwise_cases(add_case);
  add_conv_pooling_matmul_cases(add_case);
  add_shape_reduction_selection_cases(add_case);
  add_nn_function_cases(add_case);
  add_layer_cases(add_layer);
  return cases;
}

}  // namespace

const std::vector<GradcheckCase>& gradcheck_cases() {
  static const std::vector<GradcheckCase> cases = build();
  return cases;
}

std::string shapes_of(const Check& check) {
  std::string s;
  for (size_t i = 0; i + check.parameters < check.inputs.size(); ++i) {
    if (!s.empty()) s += ' ';
    s += check.inputs[i].shape().str();
  }
  if (check.parameters > 0) s += (s.empty() ? "" : " + ") + std::to_string(check.parameters) + " params";
  return s;
}

}  // namespace minigrad::checks
