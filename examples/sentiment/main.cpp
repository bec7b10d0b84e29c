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

#include "examples/common/cli_options.h"
#include "examples/sentiment/commands.h"

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
  train->add_option("--epochs", config.epochs, "Passes over the training data")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  train->add_option("--batch-size", config.batch_size, "Reviews per step")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  examples::add_training_options(train, config);
  train->add_option("--attention-dropout", config.attention_dropout, "Dropout on the attention weights")
      ->check(CLI::Range(0.0, 0.9))
      ->capture_default_str();
  train
      ->add_option("--token-dropout", config.token_dropout,
                   "Probability that a training token is replaced by <unk>")
      ->check(CLI::Range(0.0, 0.9))
      ->capture_default_str();
  train->add_option("--label-smoothing", config.label_smoothing, "Label smoothing of the training loss")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  train
      ->add_option("--ema-decay", config.ema_decay,
                   "Keep a moving average of the weights with this decay and save it; 0: the last weights")
      ->check(CLI::Range(0.0, 0.99999))
      ->capture_default_str();
  train
      ->add_option("--pretrain-epochs", config.pretrain_epochs,
                   "Epochs of masked-token pretraining on the training reviews before training; 0: none")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  train->add_option("--pretrain-lr", config.pretrain_lr, "Peak learning rate of the pretraining")
      ->check(CLI::Range(1e-7, 10.0))
      ->capture_default_str();
  train->add_option("--mask-prob", config.mask_prob, "Share of the tokens that pretraining predicts")
      ->check(CLI::Range(0.01, 0.9))
      ->capture_default_str();
  train->add_option("--max-len", config.max_len, "Tokens kept per review (head and tail)")
      ->check(CLI::Range(2, 100000))
      ->capture_default_str();
  train->add_option("--vocab-size", config.vocab_size, "Largest vocabulary")
      ->check(CLI::Range(2, 10000000))
      ->capture_default_str();
  train->add_option("--min-freq", config.min_freq, "Least count for a token to get its own id")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  train
      ->add_option("--validation", config.validation,
                   "Training reviews held out for validation (half of each label); 0: none")
      ->check(CLI::Range(0, 10000000))
      ->capture_default_str();
  train->add_option("--validation-seed", config.validation_seed, "Seed that picks the validation reviews")
      ->capture_default_str();
  train
      ->add_option("--ngram-buckets", config.ngram_buckets,
                   "Rows of the n-gram embedding table added to the token embeddings; 0: none")
      ->check(CLI::Range(0, 100000000))
      ->capture_default_str();
  train->add_option("--ngram-max", config.ngram_max, "Longest n-gram (2: bigrams, 3: and trigrams)")
      ->check(CLI::Range(2, 5))
      ->capture_default_str();
  train->add_flag(
      "!--hashed-ngrams", config.ngram_vocabulary,
      "Hash every n-gram into the table's rows (fastText's way) instead of giving the most common "
      "ones a row each");
  train->add_flag("!--dense-embeddings", config.sparse_embeddings,
                  "Dense gradients for the token and n-gram tables, stepped with the rest by AdamW, instead "
                  "of row-sparse ones stepped by SparseAdam (only the rows a batch looked up move)");
  train
      ->add_option("--nb-max", config.nb_max,
                   "The NB-weighted n-gram branch: n-grams of 1 to this many words; 0: no branch")
      ->check(CLI::Range(0, 5))
      ->capture_default_str();
  train->add_option("--nb-rows", config.nb_rows, "Rows of the NB branch's table (with the padding row)")
      ->check(CLI::Range(2, 100000000))
      ->capture_default_str();
  train
      ->add_option("--nb-min-reviews", config.nb_min_reviews,
                   "Training reviews an n-gram must be in to get a row")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  train->add_option("--nb-lr", config.nb_lr, "Peak learning rate of the NB branch; 0: --lr")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  train->add_option("--plot", args.plot,
                    "PNG of the per-epoch loss and accuracy (default: <out>-training.png)");
  train->add_option("--layers", config.num_layers, "Encoder layers")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  train->add_option("--embedding-std", config.embedding_std, "Initial scale of the token embedding")
      ->check(CLI::Range(1e-6, 100.0))
      ->capture_default_str();
  train->add_flag("--learnable-positions", config.learnable_positions,
                  "Learn position embeddings instead of sinusoids");
  train->add_option("--seed", config.seed, "Seed for initialisation, dropout and batch order")
      ->capture_default_str();
  train->add_flag("--no-eval", no_eval, "Skip the evaluation on the test split");
  train->add_flag("--overwrite", args.overwrite, "Replace the model already in --out");
  train->add_option("--max-steps", args.max_steps, "Stop after this many steps (quick checks)")
      ->check(CLI::Range(1, 100000000));
  train->add_option("--train-limit", args.train_limit, "Train on this many reviews only (quick checks)")
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
  } else if (parallel.ranks().world > 1 && std::getenv("MINIGRAD_NUM_THREADS") == nullptr) {
    // Ranks on one machine share its cores: a rank's share, not all of them each.
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    const int per_machine = local ? std::max(1, std::atoi(local)) : parallel.ranks().world;
    set_num_threads(std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / per_machine));
  }
  try {
    if (*train) {
      if (config.num_hiddens % config.num_heads != 0)
        throw CLI::ValidationError("--heads", "must divide --hiddens");
      args.evaluate_test = !no_eval;
      return run_train(config, args, parallel);
    }
    if (*eval) return run_eval(model_dirs, data, tsv_files, held_out);
    return run_predict(model_dirs, text, file, heatmap, layer, head);
  } catch (const CLI::Error& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    if (parallel.ranks().world > 1) parallel.fail(std::string("error: ") + e.what());
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
