// The command-line flags of a program's Config, from its field table (config_fields.h): one option per
// row that has a flag, with the row's help text, its range (CLI11 refuses a value outside it) and the
// default shown in --help.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <type_traits>

#include "examples/common/config_fields.h"
#include "minigrad/tensor/threads.h"

namespace examples {

// --threads N: the threads of minigrad's kernels and BLAS, set as the flag is read (without it:
// MINIGRAD_NUM_THREADS, or every core).
inline void add_threads_flag(CLI::App& app) {
  app.add_option_function<int>(
         "--threads", [](int n) { minigrad::set_num_threads(n); },
         "Threads for kernels and BLAS (default: MINIGRAD_NUM_THREADS or all)")
      ->check(CLI::Range(1, 256));
}

template <typename Config, typename Fields>
void add_config_flags(CLI::App* app, Config& config, const Fields& fields) {
  for_each_field(fields, [&](const auto& field) {
    using T = std::remove_cvref_t<decltype(config.*field.member)>;
    if (field.flag == nullptr) return;
    if constexpr (std::is_same_v<T, bool>) {
      app->add_flag(field.flag, config.*field.member, field.help);
    } else {
      CLI::Option* option = app->add_option(field.flag, config.*field.member, field.help);
      // A whole-number field's range is whole numbers: --help says "INT in [1 - 1000]".
      if constexpr (std::is_integral_v<T>) {
        if (field.bounded())
          option->check(CLI::Range(static_cast<int64_t>(field.low), static_cast<int64_t>(field.high)));
      } else {
        if (field.bounded()) option->check(CLI::Range(field.low, field.high));
      }
      option->capture_default_str();
    }
  });
}

}  // namespace examples
