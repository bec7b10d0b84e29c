// minigrad-sentiment eval and predict: a checkpoint, or an ensemble of them, on labelled reviews or on one.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "examples/common/utf8.h"
#include "examples/sentiment/extras/attention_plot.h"
#include "examples/sentiment/extras/commands.h"
#include "examples/sentiment/extras/ensembles.h"
#include "examples/sentiment/extras/extended_model.h"
#include "examples/sentiment/extras/sentences.h"
#include "minigrad/tensor/file_io.h"

namespace sentiment {

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

namespace {

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

}  // namespace

int run_eval(const std::vector<std::string>& model_dirs, const std::string& data,
             const std::vector<std::string>& tsv_files, bool held_out) {
  std::vector<Checkpoint> checkpoints;
  for (const std::string& dir : model_folders(model_dirs))
    checkpoints.push_back(load_extended_checkpoint(dir));
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
  for (const std::string& dir : folders) checkpoints.push_back(load_extended_checkpoint(dir));
  const Checkpoint& checkpoint = checkpoints.front();  // the attention heatmap is the first model's
  const std::string model_dir = folders.front();
  if (!heatmap.empty() && (layer < 0 || layer >= checkpoint.config.num_layers || head < 0 ||
                           head >= checkpoint.config.num_heads)) {
    throw Error("predict", "--layer must be below " + std::to_string(checkpoint.config.num_layers) +
                               " and --head below " + std::to_string(checkpoint.config.num_heads));
  }
  Prediction p = predict(checkpoint, examples::valid_utf8(text));
  if (checkpoints.size() > 1) {  // an ensemble: σ(the mean of the members' log-odds)
    std::vector<const Checkpoint*> members;
    for (const Checkpoint& c : checkpoints) members.push_back(&c);
    p.positive = 1 / (1 + std::exp(-ensemble_log_odds(members, {{examples::valid_utf8(text), 0}})[0]));
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

}  // namespace sentiment
