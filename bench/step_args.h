// The command line the step benchmarks share (minigrad-cnn-step, minigrad-lstm-step, and their PyTorch
// twins in bench/step_timing.py): --config NAME (a key of the program's table), --threads, --seconds.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "minigrad/tensor/random.h"
#include "minigrad/tensor/threads.h"

namespace minigrad::bench {

template <typename Config>
struct StepArgs {
  std::string name;    // the configuration's key in the program's table
  Config config;       // its row
  double seconds = 2;  // about how long to time, in total
};

// Parses the command line, sets the thread count (--threads, 0: the default) and seeds the default
// generator with 0, so that every run times the same weights and inputs; exits with CLI11's message on
// --help or a bad option.
template <typename Config>
StepArgs<Config> parse_step_args(int argc, char** argv, const std::string& title,
                                 const std::map<std::string, Config>& configs,
                                 const std::string& default_config) {
  CLI::App app{title};
  StepArgs<Config> args{.name = default_config, .config = {}};
  std::vector<std::string> names;
  for (const auto& entry : configs) names.push_back(entry.first);
  int threads = 0;
  app.add_option("--config", args.name, CLI::detail::join(names, " or "))->check(CLI::IsMember(names));
  app.add_option("--threads", threads, "Threads (0: the default)");
  app.add_option("--seconds", args.seconds, "About how long to time, in total")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  if (threads > 0) set_num_threads(threads);
  manual_seed(0);
  args.config = configs.at(args.name);
  return args;
}

}  // namespace minigrad::bench
