// minigrad-sentiment: a Transformer-encoder sentiment classifier for movie reviews, trained from scratch
// on the IMDB Large Movie Review Dataset (Maas et al., 2011).
//
//   minigrad-sentiment train --data data/aclImdb --out out/sentiment
//   minigrad-sentiment eval --model out/sentiment --data data/aclImdb
//   minigrad-sentiment eval --model out/sentiment --tsv amazon_cells_labelled.txt
//   minigrad-sentiment predict --model out/sentiment "A tedious, joyless film." --heatmap attention.png
//
// This file reads the command line; commands.h has what each subcommand does.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "examples/common/config_flags.h"
#include "examples/sentiment/extras/commands.h"
#include "examples/sentiment/extras/extended_config.h"

using namespace sentiment;
using namespace minigrad;

int main(int argc, char** argv) {
  CLI::App app{"Sentiment of movie reviews with a Transformer encoder trained from scratch by minigrad."};
  app.require_subcommand(1);
  int threads = 0;
  app.add_option("--threads", threads, "Threads for kernels and BLAS (default: MINIGRAD_NUM_THREADS or all)")
      ->check(CLI::Range(1, 256));

  Config config;
  TrainArgs args;
  std::string data = "data/aclImdb";
  bool no_eval = false;
  CLI::App* train = app.add_subcommand(
      "train", "Train on the IMDB training split, save a checkpoint, evaluate on the test split");
  train->add_option("--data", args.data, "The aclImdb folder")->capture_default_str();
  train
      ->add_option(
          "--out", args.out_dir,
          "Where to save the checkpoint (a folder; one holding a model is replaced only with --overwrite)")
      ->capture_default_str();
  examples::add_config_flags(train, config, kConfigFields);  // every field of Config (config.h)
  ExtendedConfig extended;
  examples::add_config_flags(train, extended, kExtendedFields);  // and of ExtendedConfig (extended_config.h)
  train->add_option("--plot", args.plot,
                    "PNG of the per-epoch loss and accuracy (default: <out>-training.png)");
  train->add_flag("--no-eval", no_eval, "Skip the evaluation on the test split");
  train->add_flag("--overwrite", args.overwrite, "Replace the model already in --out");
  train->add_option("--max-steps", args.max_steps, "Stop after this many steps (quick checks)")
      ->check(CLI::Range(1, 100000000));
  train->add_option("--train-limit", args.train_limit, "Train on this many reviews only (quick checks)")
      ->check(CLI::Range(0, 100000000));
  train->add_option("--perf-control", args.perf_control,
                    "CONTROL,ACK: the FIFOs of a `perf record -D -1 --control` that profiles steps "
                    "--profile-after + 1 to --max-steps (bench/profile-step.sh --main-job)");
  train->add_option("--profile-after", args.profile_after, "Steps before the profile starts")
      ->check(CLI::Range(0, 100000000));
  train->add_option("--resume", args.resume,
                    "Continue the run saved in this folder by --checkpoint-every (same options, data and "
                    "process count)");
  train
      ->add_option("--checkpoint-every", args.checkpoint_every,
                   "Also save a resumable checkpoint after every this many steps and at each epoch's end "
                   "(each save replaces --out whole)")
      ->check(CLI::Range(1, 100000000));

  std::vector<std::string> model_dirs = {"out/sentiment"};
  std::vector<std::string> tsv_files;
  bool held_out = false;
  CLI::App* eval = app.add_subcommand(
      "eval",
      "Accuracy of a checkpoint, or of an ensemble of several, on the IMDB test split or on "
      "sentence<TAB>label files");
  eval->add_option(
          "--model", model_dirs,
          "Checkpoint folder, or an ensemble's folder of members 0, 1, ...; repeated, an ensemble (the "
          "mean of the models' log-odds)")
      ->allow_extra_args(false)  // one folder per --model: the review after it is not one
      ->capture_default_str();
  eval->add_flag("--held-out", held_out,
                 "Evaluate on the training reviews the models' validation run held out, not the test split");
  eval->add_option("--data", data, "The aclImdb folder (used without --tsv)")->capture_default_str();
  eval->add_option("--tsv", tsv_files, "sentence<TAB>label files to evaluate instead (repeatable)")
      ->check(CLI::ExistingFile);

  std::string text, file, heatmap;
  int64_t layer = 0, head = 0;
  CLI::App* predict =
      app.add_subcommand("predict", "Label one review and optionally draw its attention weights");
  predict
      ->add_option("--model", model_dirs,
                   "Checkpoint folder, or an ensemble's folder of members 0, 1, ...; repeated, an ensemble")
      ->allow_extra_args(false)  // one folder per --model: the review after it is not one
      ->capture_default_str();
  predict->add_option("text", text, "The review");
  predict->add_option("--file", file, "Read the review from this file")->check(CLI::ExistingFile);
  predict->add_option("--heatmap", heatmap,
                      "Write a PNG of one layer's and head's attention weights over the tokens");
  predict->add_option("--layer", layer, "Encoder layer for --heatmap")->capture_default_str();
  predict->add_option("--head", head, "Attention head for --heatmap")->capture_default_str();

  // MPI first (it may take its own arguments out of argv), then the command line.
  Parallel parallel(argc, argv);
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) {
    set_num_threads(threads);
  } else if (parallel.world() > 1 && std::getenv("MINIGRAD_NUM_THREADS") == nullptr) {
    // Ranks on one machine share its cores: a rank's share, not all of them each.
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    const int per_machine = local ? std::max(1, std::atoi(local)) : parallel.world();
    set_num_threads(std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / per_machine));
  }
  try {
    if (*train) {
      if (config.num_hiddens % config.num_heads != 0)
        throw CLI::ValidationError("--heads", "must divide --hiddens");
      args.evaluate_test = !no_eval;
      extended.store_in(config);
      return run_train(config, args, parallel);
    }
    if (*eval) return run_eval(model_dirs, data, tsv_files, held_out);
    return run_predict(model_dirs, text, file, heatmap, layer, head);
  } catch (const CLI::Error& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    if (parallel.world() > 1) parallel.fail(std::string("error: ") + e.what());
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
