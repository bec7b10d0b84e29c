// minigrad-dates: a character-level encoder-decoder Transformer that rewrites dates written many ways
// ("3rd of March 1999", "03/03/99", "Wednesday 3 Mar 1999", ...) as ISO dates (1999-03-03), trained from
// scratch on dates the program writes itself, and evaluated on days it never saw.
//
//   minigrad-dates train --out out/dates
//   minigrad-dates eval --model out/dates
//   minigrad-dates predict --model out/dates "the 3rd of march, 1999" --heatmap attention.png
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "examples/common/config_flags.h"
#include "examples/dates/training.h"
#include "examples/plot/plot.h"

namespace {

using namespace dates;
using namespace minigrad;

void print_evaluation(const std::string& name, const Evaluation& e, bool details) {
  std::printf("%s: %lld of %lld exact (%.1f s)\n", name.c_str(), static_cast<long long>(e.correct),
              static_cast<long long>(e.count), e.seconds);
  if (!details) return;
  for (int s = 0; s < kStyleCount; ++s) {
    const auto [correct, count] = e.by_style[static_cast<size_t>(s)];
    if (count > 0)
      std::printf("  %-18s %6.2f%% of %lld\n", style_name(static_cast<Style>(s)).c_str(),
                  100.0 * static_cast<double>(correct) / static_cast<double>(count),
                  static_cast<long long>(count));
  }
  for (size_t i = 0; i < e.mistakes.size() && i < 10; ++i) {
    const auto& [example, written] = e.mistakes[i];
    std::printf("  mistake: \"%s\" -> %s (expected %s)\n", example.source.c_str(), written.c_str(),
                example.target.c_str());
  }
}

void write_heatmap(const std::string& path, const Prediction& p, int64_t layer) {
  plot::heatmap(path, p.cross_attention,
                {.title = "Cross-attention, decoder layer " + std::to_string(layer) + " (mean over heads)",
                 .x_label = "input character",
                 .y_label = "output character",
                 .colorbar_label = "weight",
                 .x_ticks = p.input_chars,
                 .y_ticks = p.output_chars,
                 .rows_downward = true});
  std::printf("wrote %s\n", path.c_str());
}

int run_train(const Config& config, const std::string& out_dir, bool evaluate_held_out, int64_t max_steps) {
  const auto start = std::chrono::steady_clock::now();
  manual_seed(config.seed);
  const Split split = split_days(config.seed, config.held_out, config.validation);
  Checkpoint checkpoint{config, make_model(config)};
  std::printf("dates %d-%d: %zu training days, %zu validation days, %zu held-out days (never trained on)\n",
              kFirstYear, kLastYear, split.training.size(), split.validation.size(), split.held_out.size());
  std::printf("model: %lld parameters; %d threads\n",
              static_cast<long long>(checkpoint.model->parameter_count()), num_threads());
  std::printf("config: %s\n", config.to_json().dump().c_str());
  std::fflush(stdout);
  const TrainingLog log = train(checkpoint, split.training, std::cout, isatty(STDOUT_FILENO) != 0, max_steps);
  checkpoint.save(out_dir);
  std::printf("trained %lld steps in %.1f s (loss %.4f -> %.4f); saved %s/{model.safetensors,config.json}\n",
              static_cast<long long>(log.steps), log.seconds, log.first_loss, log.last_loss, out_dir.c_str());
  const Evaluation v = evaluate(*checkpoint.model, validation_examples(config, split), config.max_source_len);
  print_evaluation("validation", v, false);
  std::printf("validation exact match: %.2f%%\n", 100 * v.accuracy);
  if (evaluate_held_out) {
    const Evaluation h = evaluate(*checkpoint.model, held_out_examples(config, split), config.max_source_len);
    print_evaluation("held-out", h, false);
    std::printf("held-out exact match: %.2f%%\n", 100 * h.accuracy);
  }
  std::printf("total wall time (training and evaluation): %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

int run_eval(const std::string& model_dir, const std::string& set) {
  const Checkpoint checkpoint = Checkpoint::load(model_dir);
  const Config& c = checkpoint.config;
  const Split split = split_days(c.seed, c.held_out, c.validation);
  const bool held_out = set == "held-out";
  const Evaluation e =
      evaluate(*checkpoint.model, held_out ? held_out_examples(c, split) : validation_examples(c, split),
               c.max_source_len);
  print_evaluation(set, e, true);
  std::printf("%s exact match: %.2f%%\n", set.c_str(), 100 * e.accuracy);
  return 0;
}

int run_predict(const std::string& model_dir, const std::vector<std::string>& texts, int64_t beam,
                const std::string& heatmap, int64_t layer) {
  const Checkpoint checkpoint = Checkpoint::load(model_dir);
  for (const std::string& text : texts) {
    const Prediction p = predict(checkpoint, text, beam, layer);
    const std::optional<Date> reference = parse_date(text);
    std::printf(
        "%s -> %s%s\n", text.c_str(), p.output.c_str(),
        reference ? (iso(*reference) == p.output ? "  (the rule-based parser agrees)"
                                                 : ("  (the rule-based parser says " + iso(*reference) + ")"))
                        .c_str()
                  : "  (not a form the rule-based parser reads)");
    for (size_t i = 1; i < p.beams.size(); ++i) {
      std::printf("    beam %zu: %s (log P %.4f)\n", i, CharVocabulary::decode(p.beams[i].tokens).c_str(),
                  p.beams[i].log_prob);
    }
    if (!heatmap.empty() && &text == &texts.front())
      write_heatmap(heatmap, p, layer < 0 ? layer + checkpoint.config.num_decoder_layers : layer);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Dates written many ways -> ISO dates, with an encoder-decoder Transformer trained by minigrad."};
  app.require_subcommand(1);
  examples::add_threads_flag(app);

  Config config;
  std::string out_dir = "out/dates";
  bool no_eval = false;
  int64_t max_steps = 0;
  CLI::App* train = app.add_subcommand(
      "train", "Train on generated dates, save a checkpoint, report validation and held-out exact match");
  train->add_option("--out", out_dir, "Where to save the checkpoint")->capture_default_str();
  examples::add_config_flags(train, config, kConfigFields);  // every field of Config but max_source_len
  train->add_flag("--no-eval", no_eval, "Skip the held-out evaluation (validation only)");
  train->add_option("--max-steps", max_steps, "Stop after this many steps (quick checks)")
      ->check(CLI::Range(1, 100000000));

  std::string model_dir = "out/dates", set = "held-out";
  CLI::App* eval =
      app.add_subcommand("eval", "Exact match of a checkpoint on the held-out or validation days");
  eval->add_option("--model", model_dir, "Checkpoint folder")->capture_default_str();
  eval->add_option("--set", set, "Which days")
      ->check(CLI::IsMember({"held-out", "validation"}))
      ->capture_default_str();

  std::vector<std::string> texts;
  std::string heatmap;
  int64_t beam = 1, layer = -1;
  CLI::App* predict = app.add_subcommand("predict", "Rewrite dates as ISO dates; draw the cross-attention");
  predict->add_option("--model", model_dir, "Checkpoint folder")->capture_default_str();
  predict->add_option("text", texts, "Dates, as written")->required();
  predict->add_option("--beam", beam, "Beam width (1: greedy)")->capture_default_str();
  predict->add_option("--heatmap", heatmap,
                      "PNG of the first date's cross-attention (output x input characters)");
  predict->add_option("--layer", layer, "Decoder layer for --heatmap (-1: the last)")->capture_default_str();

  CLI11_PARSE(app, argc, argv);
  try {
    if (*train) return run_train(config, out_dir, !no_eval, max_steps);
    if (*eval) return run_eval(model_dir, set);
    return run_predict(model_dir, texts, beam, heatmap, layer);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
