// minigrad-gradcheck: runs gradcheck (float64, PyTorch's tolerances) over every differentiable op on
// random shapes and prints a table, with forward mode's check beside it (forward_gradcheck, first order).
// Exits with status 1 if any check fails.
//
//   minigrad-gradcheck                 # every op, one random draw of shapes each
//   minigrad-gradcheck --trials 5 --filter matmul --seed 3
//   minigrad-gradcheck --second-order  # gradgradcheck: the gradients of the gradients
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include "tests/gradcheck/cases.h"

int main(int argc, char** argv) {
  using namespace minigrad;
  CLI::App app{"Check every differentiable op's gradient against finite differences (float64)."};
  uint64_t seed = 0;
  int trials = 1;
  std::string filter;
  GradcheckOptions options;
  app.add_option("--seed", seed, "Seed for shapes, values and upstream gradients")->capture_default_str();
  app.add_option("--trials", trials, "Random draws of shapes per op")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--filter", filter, "Only ops whose name contains this text");
  bool second_order = false;
  app.add_flag("--second-order", second_order,
               "Check second derivatives (gradgradcheck: each op's differentiable backward, as used by "
               "create_graph)");
  app.add_flag("--fast", options.fast_mode, "Compare random projections instead of the full Jacobian");
  app.add_option("--eps", options.eps, "Finite-difference step")->capture_default_str();
  app.add_option("--atol", options.atol, "Absolute tolerance")->capture_default_str();
  app.add_option("--rtol", options.rtol, "Relative tolerance")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::printf("%s: float64, eps %g, atol %g, rtol %g, %s, random upstream gradient, seed %llu\n\n",
              second_order ? "gradgradcheck (second order)" : "gradcheck", options.eps, options.atol,
              options.rtol, options.fast_mode ? "fast mode (projections)" : "full Jacobian",
              static_cast<unsigned long long>(seed));
  if (!second_order) {
    std::printf(
        "forward mode: J·v along a random tangent against central differences and reverse mode; "
        "\"tangents\" says whether every op used its tangent rule, or how many ops had none and took "
        "their tangent through their backward (autograd/forward_ad.h)\n\n");
  }
  std::printf("%-52s %-26s %12s %12s %12s %-17s %s\n", "op or layer", "input shapes", "max abs err",
              "max rel err", "forward err", "tangents", "result");
  int checked = 0, failed = 0;
  for (const checks::GradcheckCase& c : checks::gradcheck_cases()) {
    if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
    for (int trial = 0; trial < trials; ++trial) {
      Generator generator(seed * 1000003 + static_cast<uint64_t>(trial));
      const checks::Check check = c.make(generator);
      options.seed = seed + static_cast<uint64_t>(trial);
      const GradcheckResult r = second_order ? gradgradcheck(check.f, check.inputs, options)
                                             : gradcheck(check.f, check.inputs, options);
      const GradcheckResult forward =
          second_order ? GradcheckResult{} : forward_gradcheck(check.f, check.inputs, options);
      const bool passed = r.passed && forward.passed;
      ++checked;
      failed += !passed;
      char forward_error[16] = "-", tangents[32] = "-";
      if (!second_order) {
        std::snprintf(forward_error, sizeof forward_error, "%.2e", forward.max_abs_error);
        if (forward.tangents_through_backward == 0) {
          std::snprintf(tangents, sizeof tangents, "rules");
        } else {
          std::snprintf(tangents, sizeof tangents, "%lld via backward",
                        static_cast<long long>(forward.tangents_through_backward));
        }
      }
      std::printf("%-52s %-26s %12.2e %12.2e %12s %-17s %s\n", c.name.c_str(),
                  checks::shapes_of(check).c_str(), r.max_abs_error, r.max_rel_error, forward_error, tangents,
                  passed ? "pass" : "FAIL");
      if (!r.passed) std::printf("    %s\n", r.report().c_str());
      if (!forward.passed) std::printf("    %s\n", forward.report().c_str());
    }
  }
  if (checked == 0) {
    std::cerr << "no op matches --filter '" << filter << "'\n";
    return 2;
  }
  std::printf("\n%d checks, %d passed, %d failed\n", checked, checked - failed, failed);
  return failed == 0 ? 0 : 1;
}
