// minigrad-sentiment's three subcommands, each run from main() once its command line is read:
// train (train_command.cpp), eval and predict (eval_commands.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "examples/sentiment/config.h"
#include "examples/sentiment/evaluation.h"
#include "examples/sentiment/extras/parallel.h"
#include "examples/sentiment/extras/predictions.h"
#include "examples/sentiment/text.h"

namespace sentiment {

// What `train` was asked to do, beside the model's Config.
struct TrainArgs {
  std::string data = "data/aclImdb";
  std::string out_dir = "out/sentiment";
  bool evaluate_test = true;
  int64_t max_steps = 0;
  int64_t train_limit = -1;  // < 0: all
  int64_t checkpoint_every = 0;
  std::string resume;      // a checkpoint folder saved with --checkpoint-every
  std::string plot;        // the per-epoch curves, as a PNG; "" for <out>-training.png
  bool overwrite = false;  // replace a model already in out_dir
  // A `perf record --control` profile of steps profile_after + 1 .. max_steps (bench/profile-step.sh):
  // the FIFOs "CONTROL,ACK", or "" for none.
  std::string perf_control;
  int64_t profile_after = 0;

  std::string plot_path() const { return plot.empty() ? out_dir + "-training.png" : plot; }
};

// Trains a model as `config` says on args.data's training reviews (each rank its share of every batch),
// saves it in args.out_dir, and evaluates it on the test reviews unless asked not to.
int run_train(const Config& config, const TrainArgs& args, const Parallel& parallel);

// One model, or an ensemble of several (the mean of their log-odds), on the IMDB test split, on the
// training reviews the models' validation run held out (held_out), or on sentence files.
int run_eval(const std::vector<std::string>& model_dirs, const std::string& data,
             const std::vector<std::string>& tsv_files, bool held_out);

// The label and P(positive) of one review (`text`, or the contents of `file`); with `heatmap`, a picture
// of the first model's attention weights in one layer and head.
int run_predict(const std::vector<std::string>& model_dirs, std::string text, const std::string& file,
                const std::string& heatmap, int64_t layer, int64_t head);

// What loading skipped, on stderr: "warning: skipped 2 training files (unreadable, empty or malformed)".
void warn_skipped(const LoadReport& report, const std::string& what);
// "IMDB test    accuracy 0.9240 (25000 examples, loss 0.2490, 41.4 s)"
void print_evaluation(const std::string& name, const Evaluation& e);

}  // namespace sentiment
