// minigrad-sentiment train: everything that can be checked before the data is read; then the reviews,
// the vocabulary, the n-grams and the model; pretraining if asked, training, the saved checkpoint, the
// per-epoch curves, and the test evaluation.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "examples/plot/plot.h"
#include "examples/sentiment/extras/checkpoints_and_averages.h"
#include "examples/sentiment/extras/commands.h"
#include "examples/sentiment/extras/extended_model.h"
#include "examples/sentiment/extras/pretraining.h"
#include "examples/sentiment/extras/profiled_run.h"
#include "examples/sentiment/training.h"
#include "minigrad/tensor/file_io.h"

namespace sentiment {

using namespace minigrad;

namespace {

// Training and validation loss and accuracy after each epoch, as a PNG.
void plot_epochs(const std::string& path, const TrainingLog& log) {
  std::vector<double> epochs, validation_loss, validation_accuracy;
  for (size_t e = 0; e < log.epoch_validation.size(); ++e) {
    epochs.push_back(static_cast<double>(log.first_epoch + static_cast<int64_t>(e)));
    validation_loss.push_back(log.epoch_validation[e].loss);
    validation_accuracy.push_back(log.epoch_validation[e].accuracy);
  }
  const std::vector<double> training_loss(log.epoch_loss.begin(), log.epoch_loss.begin() + epochs.size());
  const std::vector<double> training_accuracy(log.epoch_accuracy.begin(),
                                              log.epoch_accuracy.begin() + epochs.size());
  plot::line_plot(path,
                  {{.label = "training loss", .x = epochs, .y = training_loss, .dashed = true},
                   {.label = "validation loss", .x = epochs, .y = validation_loss},
                   {.label = "training accuracy", .x = epochs, .y = training_accuracy, .dashed = true},
                   {.label = "validation accuracy", .x = epochs, .y = validation_accuracy}},
                  {.title = "IMDB sentiment: loss and accuracy per epoch",
                   .x_label = "epoch",
                   .y_label = "loss (cross-entropy) / accuracy",
                   .legend_left = true});
}

// Rank 0's share of its training time in MPI collectives, `seconds` in all, split into the wait at each
// step's end for the slowest rank (which no faster communication could remove) and the rest, the time the
// gradients' sums themselves take: "3.1% of rank 0's training time in MPI collectives (2.6% waiting ...".
std::string collectives_share(double seconds, const TrainingLog& log) {
  const double training = std::max(log.seconds, 1e-9);
  char text[200];
  std::snprintf(text, sizeof text,
                "%.2f%% of rank 0's training time in MPI collectives (%.2f%% waiting for the slowest rank "
                "to end its step, %.2f%% summing)",
                100 * seconds / training, 100 * log.waiting_seconds / training,
                100 * (seconds - log.waiting_seconds) / training);
  return text;
}

// The fields of two configurations that differ, "lr 0.002 -> 0.001, epochs 2 -> 3", or "".
std::string differences(const Config& saved, const Config& asked) {
  const nlohmann::json a = saved.to_json(), b = asked.to_json();
  std::string out;
  for (const auto& [key, value] : a.items()) {
    if (b.contains(key) && b[key] != value)
      out += (out.empty() ? "" : ", ") + key + " " + value.dump() + " -> " + b[key].dump();
  }
  return out;
}

// Refuses, before any data is read, an output folder that cannot be written, that another run is
// writing (the lock, held until this run ends), or that holds another model; and a plot that cannot be
// written.
void claim_output(const Config& config, const TrainArgs& args, std::optional<FolderLock>& lock) {
  check_folder_writable("train --out", args.out_dir);
  lock.emplace(args.out_dir);  // a second run into the same folder stops here
  // A folder that holds something (another model) is replaced only when asked, as Hugging Face's
  // trainer refuses a non-empty output folder without --overwrite_output_dir.
  const std::filesystem::path out(args.out_dir);
  if (!args.overwrite && args.resume.empty() && std::filesystem::is_directory(out) &&
      !std::filesystem::is_empty(out)) {
    throw Error("train --out",
                args.out_dir +
                    " already holds files (another model?); pass --overwrite to replace it, or "
                    "--resume " +
                    args.out_dir + " to continue its training");
  }
  if (config.validation > 0) check_file_writable("train --plot", args.plot_path());
}

// The training state that --checkpoint-every saves beside the weights, in the folder --resume names.
std::string state_file(const TrainArgs& args) {
  return (std::filesystem::path(args.resume) / "training_state.safetensors").string();
}

// The run that --resume continues: its checkpoint, saved with this configuration, and its training state.
struct Resumed {
  Checkpoint checkpoint;
  SafetensorsFile state;
};

std::optional<Resumed> load_resumed(const Config& config, const TrainArgs& args) {
  if (args.resume.empty()) return std::nullopt;
  Checkpoint checkpoint = load_extended_checkpoint(args.resume);
  const std::string changed = differences(checkpoint.config, config);
  if (!changed.empty()) {
    throw Error("train --resume", args.resume + " was saved with another configuration: " + changed +
                                      " (give the options it was trained with)");
  }
  return Resumed{std::move(checkpoint), load_safetensors(state_file(args))};
}

// The reviews of a run: the training split's, less those held out for validation, and the test split's.
struct Reviews {
  std::vector<Review> training, validation, test;
  int64_t duplicates_removed = 0;  // training reviews whose text is held out (Split::duplicates_removed)
};

Reviews read_reviews(const Config& config, const TrainArgs& args, bool root) {
  LoadReport train_set = load_imdb_split(args.data, "train");
  if (root) warn_skipped(train_set, "training files");
  // Held out first, from the whole training split, so that --train-limit does not change which reviews
  // validate; the vocabulary is then built from the training part alone.
  Split split = train_set.reviews.empty()
                    ? Split{}  // refused below, saying there is nothing to train on
                    : hold_out(train_set.reviews, config.validation, config.validation_seed);
  Reviews reviews{.training = std::move(split.training),
                  .validation = std::move(split.validation),
                  .test = {},
                  .duplicates_removed = split.duplicates_removed};
  if (args.evaluate_test) {  // read now: a missing test split must not surface after training
    LoadReport test_set = load_imdb_split(args.data, "test");
    if (root) warn_skipped(test_set, "test files");
    if (test_set.reviews.empty())
      throw Error("train", "no test reviews in " + args.data + "/test (or pass --no-eval)");
    reviews.test = std::move(test_set.reviews);
  }
  if (args.train_limit >= 0 && args.train_limit < static_cast<int64_t>(reviews.training.size())) {
    // A spread-out subset (both labels), for quick experiments.
    std::vector<Review> subset;
    const double stride =
        static_cast<double>(reviews.training.size()) / static_cast<double>(args.train_limit);
    for (int64_t i = 0; i < args.train_limit; ++i) {
      subset.push_back(reviews.training[static_cast<size_t>(static_cast<double>(i) * stride)]);
    }
    reviews.training = std::move(subset);
  }
  if (reviews.training.empty()) {
    throw Error("train", "no training reviews" +
                             std::string(args.train_limit == 0 ? " (--train-limit 0)"
                                                               : " in " + args.data + "/train") +
                             ": nothing to train on, nothing written");
  }
  return reviews;
}

// What the model reads, all from the training reviews: the vocabulary, the NB branch's n-grams and
// ratios (a resumed run has them saved), the encoded examples, and the n-grams that get rows. A resumed
// run must find the vocabulary and n-grams it was saved with.
struct TrainingData {
  Vocabulary vocabulary;
  NbFeatures nb{};       // empty without the branch, and when resuming
  int64_t nb_count = 0;  // NB n-grams with a row
  std::vector<Example> examples{}, validation{};
  NgramVocabulary ngrams{};
  size_t ngram_count = 0;
  int64_t duplicates_removed = 0;  // Reviews::duplicates_removed
};

TrainingData encode_reviews(const Config& config, const TrainArgs& args, const Reviews& reviews,
                            const Checkpoint* resumed) {
  std::vector<std::vector<std::string>> tokenized;
  for (const Review& r : reviews.training) tokenized.push_back(tokenize(r.text));
  TrainingData data{.vocabulary = Vocabulary::build(tokenized, config.vocab_size, config.min_freq),
                    .duplicates_removed = reviews.duplicates_removed};
  if (resumed && resumed->vocabulary.tokens() != data.vocabulary.tokens()) {
    throw Error("train --resume", args.resume + "/vocab.json is not the vocabulary of this training data (" +
                                      std::to_string(resumed->vocabulary.size()) + " tokens saved, " +
                                      std::to_string(data.vocabulary.size()) + " built from " + args.data +
                                      ")");
  }
  const ExtendedConfig e = ExtendedConfig::of(config);
  if (e.nb_max > 0 && !resumed) {
    std::vector<int64_t> labels;
    for (const Review& r : reviews.training) labels.push_back(r.label);
    data.nb = NbFeatures::build(tokenized, labels, e.nb_max, e.nb_rows, e.nb_min_reviews);
  }
  const NbBranch* saved_nb = resumed ? nb_branch(*resumed->model) : nullptr;
  const NbFeatures* nb = saved_nb ? &saved_nb->features() : (data.nb.empty() ? nullptr : &data.nb);
  data.nb_count = nb ? nb->kept() : 0;
  const Featurizer featurizer = [nb](const std::vector<std::string>& tokens) { return nb->present(tokens); };
  data.examples = encode(reviews.training, data.vocabulary, config.max_len, nb ? featurizer : Featurizer{});
  data.validation =
      encode(reviews.validation, data.vocabulary, config.max_len, nb ? featurizer : Featurizer{});
  data.ngrams = build_ngram_vocabulary(config, data.examples);
  const NgramTable* saved_ngrams = resumed ? ngram_table(*resumed->model) : nullptr;
  const std::vector<std::vector<int64_t>> no_ngrams;
  const auto& saved = saved_ngrams ? saved_ngrams->vocabulary().ngrams() : no_ngrams;
  if (resumed && saved != data.ngrams.ngrams()) {
    throw Error("train --resume", args.resume + "/ngrams.json is not the n-grams of this training data (" +
                                      std::to_string(saved.size()) + " saved, " +
                                      std::to_string(data.ngrams.ngrams().size()) + " built from " +
                                      args.data + ")");
  }
  data.ngram_count = data.ngrams.ngrams().size();
  return data;
}

// "training on 22493 reviews (2500 held out for validation, 7 copies of them left out): vocabulary 5000
// tokens and ...", then the configuration as JSON.
void print_start(std::ostream& out, const TrainingData& data, const Checkpoint& checkpoint,
                 const Ranks& ranks, const TrainArgs& args) {
  out << "training on " << data.examples.size() << " reviews (" << data.validation.size()
      << " held out for validation"
      << (data.duplicates_removed > 0
              ? ", " + std::to_string(data.duplicates_removed) + " copies of them left out"
              : std::string())
      << "): vocabulary " << data.vocabulary.size() << " tokens"
      << (data.ngram_count > 0 ? " and " + std::to_string(data.ngram_count) + " n-grams" : std::string())
      << (data.nb_count > 0 ? ", " + std::to_string(data.nb_count) + " NB-weighted n-grams" : std::string())
      << ", " << checkpoint.model->parameter_count() << " parameters, " << ranks.world << " process(es) x "
      << num_threads() << " thread(s)" << (args.resume.empty() ? "" : ", resuming from " + args.resume)
      << "\n";
  out << "config: " << checkpoint.config.to_json().dump() << "\n" << std::flush;
}

// "trained 352 steps in 47.1 s: 198354 tokens/s on 1 process(es) x 2 thread(s) (an epoch, ...); saved ..."
// `collective_seconds`: the time the training spent in MPI collectives.
void print_trained(std::ostream& out, const TrainingLog& log, const TrainingData& data, const Ranks& ranks,
                   double collective_seconds, const TrainArgs& args) {
  // An epoch's real tokens (what log.tokens counts), for the time an epoch takes at this run's speed.
  double epoch_tokens = 0;
  for (const Example& e : data.examples) epoch_tokens += static_cast<double>(e.ids.size());
  const double tokens_per_second = log.tokens / std::max(log.seconds, 1e-9);
  // A resumed run that had nothing left to do trained no tokens: no speed to project an epoch from.
  std::ostringstream epoch_time;
  if (tokens_per_second > 0)
    epoch_time << " (an epoch, " << std::fixed << std::setprecision(0) << epoch_tokens
               << " tokens: " << std::setprecision(1) << epoch_tokens / tokens_per_second
               << " s at this speed)";
  out << "trained " << log.steps << " steps in " << std::fixed << std::setprecision(1) << log.seconds
      << " s: " << std::setprecision(0) << tokens_per_second << " tokens/s on " << ranks.world
      << " process(es) x " << num_threads() << " thread(s)" << epoch_time.str() << std::setprecision(1)
      << (ranks.world > 1 ? ", " + collectives_share(collective_seconds, log) : std::string()) << "; saved "
      << args.out_dir << "/{model.safetensors,config.json,vocab.json"
      << (data.ngram_count > 0 ? ",ngrams.json" : "") << "}\n";
}

}  // namespace

int run_train(const Config& config, const TrainArgs& args, const Parallel& parallel) {
  const auto start = std::chrono::steady_clock::now();
  const Ranks ranks = parallel.ranks(config);
  const bool root = ranks.rank == 0;
  // Everything that can be checked is checked before the data is read: a run must not fail, or
  // overwrite a model, after an hour of training for a reason it could have seen at the start. Only
  // rank 0 writes the checkpoint.
  config.check("train");
  const ExtendedConfig extended = ExtendedConfig::of(config);
  std::optional<FolderLock> lock;
  if (root) claim_output(config, args, lock);
  std::optional<Resumed> resumed = load_resumed(config, args);
  manual_seed(config.seed);
  std::ostream silent(nullptr);                   // discards what it is given
  std::ostream& out = root ? std::cout : silent;  // only rank 0 reports
  const Reviews reviews = read_reviews(config, args, root);
  TrainingData data = encode_reviews(config, args, reviews, resumed ? &resumed->checkpoint : nullptr);
  Checkpoint checkpoint = resumed
                              ? std::move(resumed->checkpoint)
                              : Checkpoint{config, data.vocabulary,
                                           make_extended_model(config, data.vocabulary.size(),
                                                               std::move(data.ngrams), std::move(data.nb))};
  parallel.broadcast(*checkpoint.model);  // every rank starts from rank 0's weights
  // Dropout differs between ranks (each sees other examples) and is reproducible from the seed.
  if (ranks.world > 1)
    default_generator().seed_with(config.seed * 1000003 + static_cast<uint64_t>(ranks.rank) + 1);
  print_start(out, data, checkpoint, ranks, args);
  LongRun long_run(*checkpoint.model, config, ranks,
                   {.checkpoint_every = args.checkpoint_every,
                    .save =
                        [&](int64_t, const std::string& state) {
                          if (root) checkpoint.save(args.out_dir, {{"training_state.safetensors", state}});
                        },
                    .resume = resumed ? &resumed->state : nullptr,
                    .resume_source = state_file(args)});
  if (!args.perf_control.empty() && args.max_steps <= args.profile_after) {
    throw ValueError("train",
                     "--perf-control profiles steps --profile-after + 1 to --max-steps: give a "
                     "--max-steps above --profile-after");
  }
  const examples::PerfControl perf(args.perf_control);
  ProfiledRun profiled(long_run, perf, args.profile_after, args.max_steps);
  const TrainOptions options{
      .interactive = root && isatty(STDOUT_FILENO) != 0,
      .max_steps = args.max_steps,
      .ranks = ranks,
      .validation = data.validation.empty() ? nullptr : &data.validation,
      .hooks = args.perf_control.empty() ? static_cast<TrainingHooks*>(&long_run) : &profiled,
      .augment = extended.token_dropout == 0 ? std::function<void(Batch&)>{}
                                             : [p = extended.token_dropout](Batch& b) {
                                                 b.tokens =
                                                     drop_tokens(b.tokens, b.lengths, p, default_generator());
                                               }};
  // A resumed run's weights were pretrained already: it continues the classifier's training.
  if (extended.pretrain_epochs > 0 && !resumed) {
    const PretrainingLog pretraining = pretrain(checkpoint, data.examples, out, options);
    out << "pretrained " << pretraining.steps << " steps in " << std::fixed << std::setprecision(1)
        << pretraining.seconds << " s\n"
        << std::defaultfloat;
  }
  // Time in collectives during training only: the broadcast above also waits for the slowest rank to
  // finish reading the data.
  const double collective_before = parallel.collective_seconds();
  const TrainingLog log = train(checkpoint, data.examples, out, options);
  if (root) {
    std::vector<FolderFile> state;
    if (!long_run.final_state().empty())
      state.emplace_back("training_state.safetensors", long_run.final_state());
    checkpoint.save(args.out_dir, state);
  }
  print_trained(out, log, data, ranks, parallel.collective_seconds() - collective_before, args);
  if (root && !log.epoch_validation.empty()) {
    const std::string plot = args.plot_path();
    plot_epochs(plot, log);
    out << "validation accuracy " << std::setprecision(4) << log.epoch_validation.back().accuracy << " (loss "
        << log.epoch_validation.back().loss << ") after the last epoch; per epoch in " << plot << "\n";
  }
  if (args.evaluate_test) {
    const Evaluation e = evaluate(
        *checkpoint.model,
        encode(reviews.test, data.vocabulary, config.max_len, checkpoint.model->featurizer()), 64, ranks);
    if (root) print_evaluation("IMDB test", e);
  }
  out << "total wall time (loading, training, evaluation): " << std::fixed << std::setprecision(1)
      << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s\n";
  return 0;
}

}  // namespace sentiment
