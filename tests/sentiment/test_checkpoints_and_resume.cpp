// Checkpoints of the sentiment classifier: saves that fail at any step, saves during training, and runs
// resumed from them that end bit for bit where an uninterrupted run does.
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "examples/sentiment/evaluation.h"
#include "examples/sentiment/extras/checkpoints_and_averages.h"
#include "examples/sentiment/extras/predictions.h"
#include "examples/sentiment/training.h"
#include "minigrad/tensor/file_io.h"

#include "test_helpers.h"
#include "tests/sentiment/sentiment_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;
using namespace sentiment;
using namespace sentiment::testing;

namespace {

struct SimulatedCrash : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(sentiment_example)

BOOST_AUTO_TEST_CASE(a_failed_save_at_any_step_leaves_the_old_checkpoint_loadable) {
  SmallRun run(synthetic(32, 2));
  const Checkpoint old_model = run.make();
  const fs::path dir = fs::temp_directory_path() / ("sentiment_atomic_" + std::to_string(::getpid()));
  old_model.save(dir);
  const std::vector<double> old_p = positive_probabilities(*old_model.model, run.examples);
  Checkpoint new_model = run.make();  // other initial weights: other predictions
  const std::vector<double> new_p = positive_probabilities(*new_model.model, run.examples);
  BOOST_REQUIRE(old_p != new_p);

  std::vector<std::string> steps;
  minigrad::testing::set_write_step_hook([&](std::string_view step) { steps.emplace_back(step); });
  old_model.save(dir);
  minigrad::testing::set_write_step_hook(nullptr);
  BOOST_TEST(steps.size() >= 7u);  // create, 3 writes, fsync, swap, fsync parent, remove old
  for (size_t k = 0; k < steps.size(); ++k) {
    old_model.save(dir);
    bool swapped = false;
    for (size_t i = 0; i < k; ++i) swapped |= steps[i] == "swap";
    size_t count = 0;  // (the hook is copied at each call: the count lives out here)
    minigrad::testing::set_write_step_hook([&](std::string_view) {
      if (count++ == k) throw SimulatedCrash(steps[k]);
    });
    BOOST_CHECK_THROW(new_model.save(dir), SimulatedCrash);
    minigrad::testing::set_write_step_hook(nullptr);
    const Checkpoint loaded = load_extended_checkpoint(dir);  // always a whole checkpoint
    BOOST_TEST((positive_probabilities(*loaded.model, run.examples) == (swapped ? new_p : old_p)),
               "after a failure at '" << steps[k] << "'");
  }
  for (const auto& entry : fs::directory_iterator(dir.parent_path())) {  // clean up what crashes left
    if (entry.path().filename().string().rfind("." + dir.filename().string(), 0) == 0) fs::remove_all(entry);
  }
  fs::remove_all(dir);
}

namespace {

// train() with the hooks of a long run: its weight averages (ema_decay) and `long_run`'s checkpoints.
TrainingLog train_long(Checkpoint& checkpoint, const std::vector<Example>& examples, std::ostream& out,
                       LongRunOptions long_run, TrainOptions options = {}) {
  LongRun hooks(*checkpoint.model, checkpoint.config, options.ranks, std::move(long_run));
  options.hooks = &hooks;
  return train(checkpoint, examples, out, options);
}

}  // namespace

BOOST_AUTO_TEST_CASE(checkpoints_are_saved_during_training_when_asked) {
  SmallRun run(synthetic(64, 5));
  Checkpoint checkpoint = run.make();
  std::vector<int64_t> saved_at;
  std::ostringstream progress;
  train_long(
      checkpoint, run.examples, progress,
      {.checkpoint_every = 3, .save = [&](int64_t step, const std::string&) { saved_at.push_back(step); }});
  BOOST_TEST(saved_at == (std::vector<int64_t>{3, 4}));  // 64 reviews in batches of 16: 4 steps, an epoch
}

BOOST_AUTO_TEST_CASE(a_resumed_run_ends_bit_identical_to_an_uninterrupted_one) {
  // One run of 3 epochs (12 steps) with dropout, saving after every 5 steps and at each epoch's end;
  // then, from each saved point, a fresh model (other initial weights) resumed from that save. Each must
  // end with exactly the uninterrupted run's weights: mid-epoch (5, 10) and at epoch ends (4, 8, 12).
  SmallRun run(synthetic(64, 6));
  run.config.epochs = 3;
  run.config.dropout = 0.1;
  manual_seed(run.config.seed);
  Checkpoint straight = run.make();
  std::vector<std::tuple<int64_t, std::string, std::string>> saves;  // step, weights, training state
  std::ostringstream progress;
  train_long(straight, run.examples, progress,
             {.checkpoint_every = 5, .save = [&](int64_t step, const std::string& state) {
                saves.emplace_back(step, optim::serialize_weights(*straight.model), state);
              }});
  const std::vector<double> final_weights = positive_probabilities(*straight.model, run.examples);
  std::vector<int64_t> steps;
  for (const auto& [step, weights, state] : saves) steps.push_back(step);
  BOOST_TEST(steps == (std::vector<int64_t>{4, 5, 8, 10, 12}));
  for (const auto& [step, weights, state] : saves) {
    manual_seed(1000 + step);  // the resumed run must not depend on anything but the save
    Checkpoint resumed = run.make();
    optim::load_weights(*resumed.model, parse_safetensors(weights, "weights"), "weights");
    const SafetensorsFile file = parse_safetensors(state, "state");
    const TrainingLog log =
        train_long(resumed, run.examples, progress, {.resume = &file, .resume_source = "state"});
    BOOST_TEST(log.first_epoch == step / 4 + 1);  // 4 steps an epoch: the plot numbers epochs from here
    const auto expected = straight.model->named_parameters(), got = resumed.model->named_parameters();
    BOOST_REQUIRE(expected.size() == got.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      BOOST_REQUIRE(expected[i].first == got[i].first);
      BOOST_TEST((expected[i].second.data().to_vector() == got[i].second.data().to_vector()),
                 expected[i].first << " after resuming at step " << step);
    }
    BOOST_TEST((positive_probabilities(*resumed.model, run.examples) == final_weights));
  }
  // A state saved by another number of ranks is refused, saying so.
  Checkpoint other = run.make();
  const SafetensorsFile file = parse_safetensors(std::get<2>(saves.front()), "state.safetensors");
  Ranks two{.rank = 0, .world = 2};
  expect_error<Error>(
      [&] {
        train_long(other, run.examples, progress, {.resume = &file, .resume_source = "state.safetensors"},
                   {.ranks = two});
      },
      "resume: state.safetensors: saved by a run of 1 rank(s); this run has 2 (resume with the same "
      "number of processes)");
}

BOOST_AUTO_TEST_CASE(with_a_moving_average_the_model_ends_averaged_and_resumes_exactly) {
  SmallRun run(synthetic(64, 9));
  run.config.epochs = 2;
  run.config.dropout = 0.1;
  run.extended.ema_decay = 0.9;
  manual_seed(run.config.seed);
  Checkpoint straight = run.make();
  std::vector<std::pair<std::string, std::string>> saves;  // weights, training state
  std::ostringstream progress;
  const std::vector<Example> validation(run.examples.begin(), run.examples.begin() + 16);
  const TrainingLog log =
      train_long(straight, run.examples, progress,
                 {.checkpoint_every = 3,
                  .save =
                      [&](int64_t, const std::string& state) {
                        saves.emplace_back(optim::serialize_weights(*straight.model), state);
                      }},
                 {.validation = &validation});
  // The validation after the last epoch measured the weights the model ends with: the averages.
  BOOST_TEST(evaluate(*straight.model, validation).loss == log.epoch_validation.back().loss);
  // Saved mid-run (step 3) and resumed into a fresh model: the same final weights.
  manual_seed(77);
  Checkpoint resumed = run.make();
  optim::load_weights(*resumed.model, parse_safetensors(saves.front().first, "weights"), "weights");
  const SafetensorsFile file = parse_safetensors(saves.front().second, "state");
  train_long(resumed, run.examples, progress, {.resume = &file, .resume_source = "state"});
  const auto expected = straight.model->named_parameters(), got = resumed.model->named_parameters();
  for (size_t i = 0; i < expected.size(); ++i) {
    BOOST_TEST((expected[i].second.data().to_vector() == got[i].second.data().to_vector()),
               expected[i].first);
  }
  // The average differs from the last weights: without it, the same run ends elsewhere.
  run.extended.ema_decay = 0;
  manual_seed(run.config.seed);
  Checkpoint last = run.make();
  train(last, run.examples, progress);
  BOOST_TEST(last.model->head->weight.data().to_vector() != straight.model->head->weight.data().to_vector());
  // A state saved with averages does not resume a run without them.
  expect_error<Error>(
      [&] { train_long(last, run.examples, progress, {.resume = &file, .resume_source = "state"}); },
      "resume: state: holds weight averages (saved with --ema-decay)");
}

BOOST_AUTO_TEST_SUITE_END()
