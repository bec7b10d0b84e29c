// Command-line options the example programs' `train` subcommands share: the optimiser's and the
// Transformer's settings, read into any Config with these fields.
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>

#include "minigrad/optim/schedule.h"

namespace examples {

template <typename Config>
void add_training_options(CLI::App* train, Config& config) {
  train->add_option("--lr", config.lr, "Peak learning rate (AdamW)")
      ->check(CLI::Range(1e-7, 10.0))
      ->capture_default_str();
  train->add_option("--weight-decay", config.weight_decay, "AdamW weight decay")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  train->add_option("--warmup", config.warmup, "Fraction of steps spent warming up")
      ->check(CLI::Range(0.0, 0.9))
      ->capture_default_str();
  train->add_option("--clip", config.clip, "Gradient norm limit")
      ->check(CLI::Range(1e-6, 1e6))
      ->capture_default_str();
  train->add_option("--dropout", config.dropout, "Dropout probability")
      ->check(CLI::Range(0.0, 0.9))
      ->capture_default_str();
  train->add_option("--hiddens", config.num_hiddens, "Model width")
      ->check(CLI::Range(2, 4096))
      ->capture_default_str();
  train->add_option("--heads", config.num_heads, "Attention heads (must divide --hiddens)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  train->add_option("--ffn", config.ffn_num_hiddens, "Width of the position-wise FFN")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
}

// The programs' learning-rate schedule: linear warm-up over the fraction `warmup` of `total_steps`, then
// cosine decay to the last step.
inline minigrad::optim::WarmupCosine warmup_cosine(double lr, double warmup, int64_t total_steps) {
  return minigrad::optim::WarmupCosine(
      {.peak_lr = lr,
       .warmup_steps = static_cast<int64_t>(warmup * static_cast<double>(total_steps)),
       .total_steps = std::max<int64_t>(total_steps, 1) + 1});
}

}  // namespace examples
