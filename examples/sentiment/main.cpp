// minigrad-sentiment: a Transformer-encoder sentiment classifier for movie reviews, trained from scratch
// on the IMDB Large Movie Review Dataset (Maas et al., 2011).
//
//   minigrad-sentiment train --data data/aclImdb --out out/sentiment
//   minigrad-sentiment eval --model out/sentiment --data data/aclImdb
//   minigrad-sentiment eval --model out/sentiment --tsv amazon_cells_labelled.txt
//   minigrad-sentiment predict --model out/sentiment "A tedious, joyless film." --heatmap attention.png
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "examples/common/cli_options.h"
#include "examples/sentiment/attention_plot.h"
#include "examples/sentiment/pretraining.h"
#include "examples/sentiment/training.h"
#include "minigrad/tensor/file_io.h"

namespace {

using namespace sentiment;
using namespace minigrad;

void warn_skipped(const LoadReport& report, const std::string& what) {
  if (report.skipped == 0) return;
  std::cerr << "warning: skipped " << report.skipped << " " << what << " (unreadable, empty or malformed)";
  if (!report.skipped_examples.empty()) std::cerr << ", e.g. " << report.skipped_examples.front();
  std::cerr << "\n";
}

void print_evaluation(const std::string& name, const Evaluation& e) {
  std::printf("%-28s accuracy %.4f (%lld examples, loss %.4f, %.1f s)\n", name.c_str(), e.accuracy,
              static_cast<long long>(e.count), e.loss, e.seconds);
}

// The other processes of a data-parallel run (mpirun -np N minigrad-sentiment train ...), when the
// program is built with the distributed layer; otherwise, and when started without mpirun, a world of one.
class Parallel {
 public:
#ifdef MINIGRAD_HAS_DISTRIBUTED
  Parallel(int& argc, char**& argv) : context_(argc, argv) {}
  Ranks ranks() const {
    return {.rank = context_.rank(),
            .world = context_.world_size(),
            .average_gradients = [](const std::vector<Variable>& p) { distributed::average_gradients(p); },
            .sum = [](std::span<double> values) { distributed::all_reduce_sum(values); },
            .gather =
                [](const Generator::State& state) {
                  const std::vector<uint64_t> words = distributed::all_gather(state);
                  std::vector<Generator::State> out(words.size() / 4);
                  for (size_t r = 0; r < out.size(); ++r)
                    std::copy_n(words.begin() + 4 * r, 4, out[r].begin());
                  return out;
                }};
  }
  void broadcast(const nn::Module& module) const {
    distributed::broadcast_parameters(module);
  }
  double collective_seconds() const {
    return distributed::seconds_in_collectives();
  }
  // Ends every rank's process, printing "rank R of N: MESSAGE": the others may be waiting for this one.
  [[noreturn]] void fail(const std::string& message) const {
    context_.abort(message);
  }

 private:
  distributed::Context context_;
#else
  Parallel(int&, char**&) {}
  Ranks ranks() const {
    return {};
  }
  void broadcast(const nn::Module&) const {}
  double collective_seconds() const {
    return 0;
  }
  [[noreturn]] void fail(const std::string& message) const {
    std::cerr << message << "\n";
    std::exit(1);
  }
#endif
};

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

  std::string plot_path() const { return plot.empty() ? out_dir + "-training.png" : plot; }
};

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

int run_train(const Config& config, const TrainArgs& args, const Parallel& parallel) {
  const auto start = std::chrono::steady_clock::now();
  const Ranks ranks = parallel.ranks();
  const bool root = ranks.rank == 0;
  // Everything that can be checked is checked before the data is read: a run must not fail, or
  // overwrite a model, after an hour of training for a reason it could have seen at the start. Only
  // rank 0 writes the checkpoint.
  config.check("train");
  std::optional<FolderLock> lock;
  if (root) {
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
  std::optional<SafetensorsFile> resume_state;
  const std::string resume_file =
      (std::filesystem::path(args.resume) / "training_state.safetensors").string();
  std::optional<Checkpoint> resumed;
  if (!args.resume.empty()) {
    resumed.emplace(Checkpoint::load(args.resume));
    const std::string changed = differences(resumed->config, config);
    if (!changed.empty()) {
      throw Error("train --resume", args.resume + " was saved with another configuration: " + changed +
                                        " (give the options it was trained with)");
    }
    resume_state.emplace(load_safetensors(resume_file));
  }
  manual_seed(config.seed);
  std::ostream silent(nullptr);                   // discards what it is given
  std::ostream& out = root ? std::cout : silent;  // only rank 0 reports
  LoadReport train_set = load_imdb_split(args.data, "train");
  if (root) warn_skipped(train_set, "training files");
  // Held out first, from the whole training split, so that --train-limit does not change which reviews
  // validate; the vocabulary is then built from the training part alone.
  Split split = train_set.reviews.empty()
                    ? Split{}  // refused below, saying there is nothing to train on
                    : hold_out(train_set.reviews, config.validation, config.validation_seed);
  train_set.reviews = std::move(split.training);
  LoadReport test_set;
  if (args.evaluate_test) {  // read now: a missing test split must not surface after training
    test_set = load_imdb_split(args.data, "test");
    if (root) warn_skipped(test_set, "test files");
    if (test_set.reviews.empty())
      throw Error("train", "no test reviews in " + args.data + "/test (or pass --no-eval)");
  }
  if (args.train_limit >= 0 && args.train_limit < static_cast<int64_t>(train_set.reviews.size())) {
    // A spread-out subset (both labels), for quick experiments.
    std::vector<Review> subset;
    const double stride =
        static_cast<double>(train_set.reviews.size()) / static_cast<double>(args.train_limit);
    for (int64_t i = 0; i < args.train_limit; ++i) {
      subset.push_back(train_set.reviews[static_cast<size_t>(static_cast<double>(i) * stride)]);
    }
    train_set.reviews = std::move(subset);
  }
  if (train_set.reviews.empty()) {
    throw Error("train", "no training reviews" +
                             std::string(args.train_limit == 0 ? " (--train-limit 0)"
                                                               : " in " + args.data + "/train") +
                             ": nothing to train on, nothing written");
  }
  std::vector<std::vector<std::string>> tokenized;
  for (const Review& r : train_set.reviews) tokenized.push_back(tokenize(r.text));
  Vocabulary vocabulary = Vocabulary::build(tokenized, config.vocab_size, config.min_freq);
  if (resumed && resumed->vocabulary.tokens() != vocabulary.tokens()) {
    throw Error("train --resume", args.resume + "/vocab.json is not the vocabulary of this training data (" +
                                      std::to_string(resumed->vocabulary.size()) + " tokens saved, " +
                                      std::to_string(vocabulary.size()) + " built from " + args.data + ")");
  }
  // The NB branch's n-grams and ratios, from the training reviews alone (a resumed run has them saved).
  NbFeatures nb;
  if (config.nb_max > 0 && !resumed) {
    std::vector<int64_t> labels;
    for (const Review& r : train_set.reviews) labels.push_back(r.label);
    nb = NbFeatures::build(tokenized, labels, config.nb_max, config.nb_rows, config.nb_min_reviews);
  }
  const NbFeatures* nb_used = resumed ? resumed->model->nb_features() : (nb.empty() ? nullptr : &nb);
  const std::vector<Example> examples = encode(train_set.reviews, vocabulary, config.max_len, nb_used);
  const std::vector<Example> validation = encode(split.validation, vocabulary, config.max_len, nb_used);
  NgramVocabulary ngrams = build_ngram_vocabulary(config, examples);
  if (resumed && resumed->model->ngram_vocabulary().ngrams() != ngrams.ngrams()) {
    throw Error("train --resume", args.resume + "/ngrams.json is not the n-grams of this training data (" +
                                      std::to_string(resumed->model->ngram_vocabulary().ngrams().size()) +
                                      " saved, " + std::to_string(ngrams.ngrams().size()) + " built from " +
                                      args.data + ")");
  }
  const size_t ngram_count = ngrams.ngrams().size();
  const int64_t nb_count = nb_used ? nb_used->kept() : 0;
  Checkpoint checkpoint = resumed
                              ? std::move(*resumed)
                              : Checkpoint{config, vocabulary,
                                           std::make_shared<SentimentModel>(
                                               config, vocabulary.size(), std::move(ngrams), std::move(nb))};
  parallel.broadcast(*checkpoint.model);  // every rank starts from rank 0's weights
  // Dropout differs between ranks (each sees other examples) and is reproducible from the seed.
  if (ranks.world > 1)
    default_generator().seed_with(config.seed * 1000003 + static_cast<uint64_t>(ranks.rank) + 1);
  out << "training on " << examples.size() << " reviews (" << validation.size()
      << " held out for validation): vocabulary " << vocabulary.size() << " tokens"
      << (ngram_count > 0 ? " and " + std::to_string(ngram_count) + " n-grams" : std::string())
      << (nb_count > 0 ? ", " + std::to_string(nb_count) + " NB-weighted n-grams" : std::string()) << ", "
      << checkpoint.model->parameter_count() << " parameters, " << ranks.world << " process(es) x "
      << num_threads() << " thread(s)" << (resume_state ? ", resuming from " + args.resume : "") << "\n";
  out << "config: " << config.to_json().dump() << "\n" << std::flush;
  const TrainOptions options{.interactive = root && isatty(STDOUT_FILENO) != 0,
                             .max_steps = args.max_steps,
                             .checkpoint_every = args.checkpoint_every,
                             .save =
                                 [&](int64_t, const std::string& state) {
                                   if (root)
                                     checkpoint.save(args.out_dir, {{"training_state.safetensors", state}});
                                 },
                             .resume = resume_state ? &*resume_state : nullptr,
                             .resume_source = resume_file,
                             .ranks = ranks,
                             .validation = validation.empty() ? nullptr : &validation};
  // A resumed run's weights were pretrained already: it continues the classifier's training.
  if (config.pretrain_epochs > 0 && !resume_state) {
    const PretrainingLog pretraining = pretrain(checkpoint, examples, out, options);
    out << "pretrained " << pretraining.steps << " steps in " << std::fixed << std::setprecision(1)
        << pretraining.seconds << " s\n"
        << std::defaultfloat;
  }
  // Time in collectives during training only: the broadcast above also waits for the slowest rank to
  // finish reading the data.
  const double collective_before = parallel.collective_seconds();
  const TrainingLog log = train(checkpoint, examples, out, options);
  if (root) {
    std::vector<FolderFile> state;
    if (!log.final_state.empty()) state.emplace_back("training_state.safetensors", log.final_state);
    checkpoint.save(args.out_dir, state);
  }
  const double reduced = parallel.collective_seconds() - collective_before;
  // An epoch's real tokens (what log.tokens counts), for the time an epoch takes at this run's speed.
  double epoch_tokens = 0;
  for (const Example& e : examples) epoch_tokens += static_cast<double>(e.ids.size());
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
      << (ranks.world > 1 ? ", " + collectives_share(reduced, log) : std::string()) << "; saved "
      << args.out_dir << "/{model.safetensors,config.json,vocab.json"
      << (ngram_count > 0 ? ",ngrams.json" : "") << "}\n";
  if (root && !log.epoch_validation.empty()) {
    const std::string plot = args.plot_path();
    plot_epochs(plot, log);
    out << "validation accuracy " << std::setprecision(4) << log.epoch_validation.back().accuracy << " (loss "
        << log.epoch_validation.back().loss << ") after the last epoch; per epoch in " << plot << "\n";
  }
  if (args.evaluate_test) {
    const Evaluation e = evaluate(
        *checkpoint.model,
        encode(test_set.reviews, vocabulary, config.max_len, checkpoint.model->nb_features()), 64, ranks);
    if (root) print_evaluation("IMDB test", e);
  }
  out << "total wall time (loading, training, evaluation): " << std::fixed << std::setprecision(1)
      << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s\n";
  return 0;
}

// The checkpoint folders that --model names: a checkpoint folder itself, or a folder of an ensemble's
// members 0, 1, ... (what scripts/train-sentiment.sh saves), each in turn.
std::vector<std::string> model_folders(const std::vector<std::string>& given) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& dir : given) {
    if (!fs::exists(fs::path(dir) / "config.json") && fs::exists(fs::path(dir) / "0" / "config.json")) {
      for (int k = 0; fs::exists(fs::path(dir) / std::to_string(k) / "config.json"); ++k)
        out.push_back((fs::path(dir) / std::to_string(k)).string());
    } else {
      out.push_back(dir);
    }
  }
  return out;
}

// Evaluation over zero examples has no accuracy: an error, not a 0.
Evaluation evaluate_nonempty(const std::vector<const Checkpoint*>& members, const LoadReport& set,
                             const std::string& where) {
  if (set.reviews.empty()) throw Error("eval", "no examples to evaluate in " + where);
  const Evaluation e = evaluate_ensemble(members, set.reviews);
  if (!std::isfinite(e.loss)) {
    throw Error("eval", "the model's loss on " + where + " is not finite (" + std::to_string(e.loss) +
                            "); its outputs are not usable");
  }
  return e;
}

// One model, or an ensemble of several (the mean of their log-odds), on the IMDB test split, on the
// training reviews the models' validation run held out (--held-out), or on sentence files.
int run_eval(const std::vector<std::string>& model_dirs, const std::string& data,
             const std::vector<std::string>& tsv_files, bool held_out) {
  std::vector<Checkpoint> checkpoints;
  for (const std::string& dir : model_folders(model_dirs)) checkpoints.push_back(Checkpoint::load(dir));
  std::vector<const Checkpoint*> members;
  for (const Checkpoint& c : checkpoints) members.push_back(&c);
  if (members.size() > 1)
    std::printf("an ensemble of %zu models (the mean of their log-odds)\n", members.size());
  if (held_out) {
    const Config& first = checkpoints.front().config;
    if (first.validation == 0)
      throw Error("eval --held-out",
                  model_dirs.front() + " was trained on every training review: none held out");
    for (size_t i = 1; i < checkpoints.size(); ++i) {
      if (checkpoints[i].config.validation != first.validation ||
          checkpoints[i].config.validation_seed != first.validation_seed) {
        throw Error("eval --held-out", model_dirs[i] + " held out other reviews than " + model_dirs.front());
      }
    }
    LoadReport train_set = load_imdb_split(data, "train");
    train_set.reviews = hold_out(train_set.reviews, first.validation, first.validation_seed).validation;
    print_evaluation("IMDB held out", evaluate_nonempty(members, train_set, data + "/train (held out)"));
  } else if (tsv_files.empty()) {
    const LoadReport test_set = load_imdb_split(data, "test");
    warn_skipped(test_set, "test files");
    print_evaluation("IMDB test", evaluate_nonempty(members, test_set, data + "/test"));
  }
  for (const std::string& file : tsv_files) {
    const LoadReport set = load_tsv(file);
    warn_skipped(set, "lines of " + file);
    print_evaluation(std::filesystem::path(file).filename().string(), evaluate_nonempty(members, set, file));
  }
  return 0;
}

int run_predict(const std::vector<std::string>& model_dirs, std::string text, const std::string& file,
                const std::string& heatmap, int64_t layer, int64_t head) {
  if (!heatmap.empty()) check_file_writable("predict --heatmap", heatmap);
  if (!file.empty()) text = read_file("predict", file);
  if (text.empty()) throw Error("predict", "no text: give a review as an argument or with --file");
  const std::vector<std::string> folders = model_folders(model_dirs);
  std::vector<Checkpoint> checkpoints;
  for (const std::string& dir : folders) checkpoints.push_back(Checkpoint::load(dir));
  const Checkpoint& checkpoint = checkpoints.front();  // the attention heatmap is the first model's
  const std::string model_dir = folders.front();
  if (!heatmap.empty() && (layer < 0 || layer >= checkpoint.config.num_layers || head < 0 ||
                           head >= checkpoint.config.num_heads)) {
    throw Error("predict", "--layer must be below " + std::to_string(checkpoint.config.num_layers) +
                               " and --head below " + std::to_string(checkpoint.config.num_heads));
  }
  Prediction p = predict(checkpoint, valid_utf8(text));
  if (checkpoints.size() > 1) {  // an ensemble: σ(the mean of the members' log-odds)
    std::vector<const Checkpoint*> members;
    for (const Checkpoint& c : checkpoints) members.push_back(&c);
    p.positive = 1 / (1 + std::exp(-ensemble_log_odds(members, {{valid_utf8(text), 0}})[0]));
  }
  if (!std::isfinite(p.positive)) {
    throw Error("predict", "the model's output is not a number (P(positive) = " + std::to_string(p.positive) +
                               "); is " + model_dir + " a damaged model?");
  }
  std::printf("%s (P(positive) = %.4f)%s\n", p.positive >= 0.5 ? "positive" : "negative", p.positive,
              checkpoints.size() > 1
                  ? (", an ensemble of " + std::to_string(checkpoints.size()) + " models").c_str()
                  : "");
  if (!heatmap.empty()) {
    write_attention_heatmap(
        heatmap, p.attention[static_cast<size_t>(layer)].select(0, head), p.tokens,
        "Attention weights, layer " + std::to_string(layer) + ", head " + std::to_string(head));
    std::printf("wrote %s\n", heatmap.c_str());
  }
  return 0;
}

}  // namespace

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
