// Checkpoints: weights round trip, mismatches reported by name, and exact resumption of training.
#include <filesystem>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {

nn::TransformerEncoderOptions small_encoder() {
  return {.layer = {.num_hiddens = 8, .ffn_num_hiddens = 16, .num_heads = 2, .dropout = 0.1},
          .num_layers = 2,
          .tokens = {.vocab_size = 30}};
}

// A few steps of training with everything that makes resuming hard: dropout (random masks from the
// default generator), AdamW moments, clipping and a learning-rate schedule.
void train(nn::TransformerEncoder& model, optim::Optimizer& optimizer, int64_t from, int64_t to) {
  const optim::WarmupCosine schedule({.peak_lr = 1e-2, .warmup_steps = 3, .total_steps = 20});
  const Tensor tokens = Tensor::from_vector<int64_t>({1, 5, 9, 2, 7, 3, 3, 0}, {2, 4});
  const nn::AttentionMask mask{.valid_lens = Tensor::from_vector<int64_t>({4, 3}, {2})};
  model.train();
  for (int64_t step = from; step < to; ++step) {
    optimizer.set_learning_rate(schedule.at(step));
    optimizer.zero_grad();
    Variable loss = mean(pow(mean_over_time(model(tokens, mask), mask.valid_lens, /*dim=*/1) - 0.5, 2));
    loss.backward();
    optim::clip_grad_norm_(model.parameters(), 0.5);
    optimizer.step();
  }
}

std::vector<std::vector<double>> values_of(const nn::Module& model) {
  std::vector<std::vector<double>> out;
  for (const Variable& p : model.parameters()) out.push_back(p.data().to_vector());
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(checkpoints)

BOOST_AUTO_TEST_CASE(weights_round_trip_into_a_fresh_model) {
  manual_seed(1);
  nn::TransformerEncoder a(small_encoder());
  optim::save_weights(a, "weights_test.safetensors", {{"note", "test"}});
  manual_seed(2);
  nn::TransformerEncoder b(small_encoder());
  BOOST_TEST(values_of(a) != values_of(b));
  optim::load_weights(b, "weights_test.safetensors");
  BOOST_TEST(values_of(a) == values_of(b));
  // The file is plain safetensors with the module's names: what PyTorch's load_state_dict expects.
  const SafetensorsFile f = load_safetensors("weights_test.safetensors");
  BOOST_TEST(f.find("layers.1.attention.W_o.weight") != nullptr);
  BOOST_TEST(f.find("pos_encoding.P") != nullptr);
  BOOST_TEST(f.metadata.at("note") == "test");
  std::filesystem::remove("weights_test.safetensors");
}

BOOST_AUTO_TEST_CASE(mismatched_weights_are_reported_by_name) {
  nn::Linear small(3, 2);
  save_safetensors(
      "mismatch_test.safetensors",
      {{"weight", Tensor::zeros({3, 2})}, {"extra", Tensor::zeros({1})}});  // no bias; weight transposed
  expect_error<Error>(
      [&] { optim::load_weights(small, "mismatch_test.safetensors"); },
      "load_weights: mismatch_test.safetensors: does not match the Linear: missing bias; unexpected "
      "extra; weight is float32 [3,2] in the file but float32 [2,3] in the module");
  // A file in which one tensor fits and another does not changes nothing: the fitting one is not
  // copied before the misfit is found. (The values are taken before the load: a clone taken after it
  // would compare the module with itself.)
  save_safetensors("mismatch_test.safetensors",
                   {{"weight", Tensor::zeros({3, 2})}, {"bias", Tensor::zeros({2})}});
  const Tensor weight_before = small.weight.data().clone(), bias_before = small.bias.data().clone();
  BOOST_REQUIRE(bias_before.to_vector() != std::vector<double>(2, 0.0));
  expect_error_containing<Error>([&] { optim::load_weights(small, "mismatch_test.safetensors"); },
                                 "weight is float32 [3,2] in the file but float32 [2,3] in the module");
  BOOST_TEST(small.weight.data().to_vector() == weight_before.to_vector());
  BOOST_TEST(small.bias.data().to_vector() == bias_before.to_vector());
  std::filesystem::remove("mismatch_test.safetensors");
}

BOOST_AUTO_TEST_CASE(a_non_strict_load_copies_what_fits_and_reports_the_rest) {
  // PyTorch's load_state_dict(strict=False): bias missing from the file keeps its value, "extra" is
  // skipped, both reported; the weight is copied.
  nn::Linear small(3, 2);
  save_safetensors("non_strict_test.safetensors",
                   {{"weight", Tensor::full({2, 3}, 0.5)}, {"extra", Tensor::zeros({1})}});
  const Tensor bias_before = small.bias.data().clone();
  const optim::LoadedWeights left_out =
      optim::load_weights(small, "non_strict_test.safetensors", {.strict = false});
  BOOST_TEST(left_out.missing_keys == std::vector<std::string>{"bias"});
  BOOST_TEST(left_out.unexpected_keys == std::vector<std::string>{"extra"});
  BOOST_TEST(small.weight.data().to_vector() == std::vector<double>(6, 0.5));
  BOOST_TEST(small.bias.data().to_vector() == bias_before.to_vector());
  // A wrong shape is an error even so, and names only the shape.
  save_safetensors("non_strict_test.safetensors", {{"weight", Tensor::zeros({3, 2})}});
  expect_error<Error>(
      [&] { optim::load_weights(small, "non_strict_test.safetensors", {.strict = false}); },
      "load_weights: non_strict_test.safetensors: does not match the Linear: weight is float32 [3,2] in the "
      "file but float32 [2,3] in the module");
  // A strict load reports nothing left out.
  save_safetensors("non_strict_test.safetensors",
                   {{"weight", Tensor::zeros({2, 3})}, {"bias", Tensor::zeros({2})}});
  const optim::LoadedWeights strict = optim::load_weights(small, "non_strict_test.safetensors");
  BOOST_TEST(strict.missing_keys.empty());
  BOOST_TEST(strict.unexpected_keys.empty());
  std::filesystem::remove("non_strict_test.safetensors");
}

BOOST_AUTO_TEST_CASE(resuming_from_a_checkpoint_is_bit_identical) {
  const int64_t n = 6, m = 5;
  // Uninterrupted: n + m steps.
  manual_seed(7);
  nn::TransformerEncoder straight(small_encoder());
  optim::AdamW straight_opt(straight.parameters(), {.lr = 1e-2});
  train(straight, straight_opt, 0, n + m);

  // Interrupted: n steps, save, new objects (other initial values), load, m steps.
  manual_seed(7);
  nn::TransformerEncoder first(small_encoder());
  optim::AdamW first_opt(first.parameters(), {.lr = 1e-2});
  train(first, first_opt, 0, n);
  optim::save_weights(first, "resume_model.safetensors");
  optim::save_training_state("resume_state.safetensors", first_opt, default_generator(), n);

  manual_seed(12345);
  nn::TransformerEncoder second(small_encoder());
  optim::AdamW second_opt(second.parameters(), {.lr = 1e-2});
  optim::load_weights(second, "resume_model.safetensors");
  const int64_t step =
      optim::load_training_state("resume_state.safetensors", second_opt, default_generator());
  BOOST_TEST(step == n);
  train(second, second_opt, step, n + m);

  BOOST_TEST(values_of(second) == values_of(straight));  // exactly, not approximately
  std::filesystem::remove("resume_model.safetensors");
  std::filesystem::remove("resume_state.safetensors");
}

BOOST_AUTO_TEST_CASE(training_state_must_fit_the_optimizer) {
  Variable p(Tensor::ones({2, 3}), true), q(Tensor::ones({4}), true);
  optim::Adam adam({p, q}, {});
  sum(p * 2.0).backward();
  sum(q * 2.0).backward();
  adam.step();
  optim::save_training_state("state_test.safetensors", adam, default_generator(), 1);
  optim::SGD sgd({p, q}, {.momentum = 0.9});
  expect_error<Error>([&] { optim::load_training_state("state_test.safetensors", sgd, default_generator()); },
                      "load_training_state: state_test.safetensors: holds the state of Adam, not SGD");
  optim::Adam fewer({p}, {});
  expect_error<Error>(
      [&] { optim::load_training_state("state_test.safetensors", fewer, default_generator()); },
      "load_training_state: state_test.safetensors: saved for 2 parameters, the optimizer has 1");
  optim::Adam reordered({q, p}, {});
  expect_error<Error>(
      [&] { optim::load_training_state("state_test.safetensors", reordered, default_generator()); },
      "load_training_state: state_test.safetensors: 'param0.exp_avg' is float32 [2,3] but parameter param0 "
      "needs float32 [4]");
  std::filesystem::remove("state_test.safetensors");
}

BOOST_AUTO_TEST_CASE(an_optimizer_given_a_module_names_its_state_by_the_parameters) {
  // Names, not positions: the file says whose moments they are, and a module whose parameters differ
  // is refused by name rather than loaded into the wrong tensors.
  manual_seed(3);
  nn::TransformerEncoder encoder(small_encoder());
  optim::AdamW adam(encoder.named_parameters(), {.lr = 1e-2});
  train(encoder, adam, 0, 1);
  std::vector<std::string> names;
  for (const auto& [name, t] : adam.state_tensors()) names.push_back(name);
  BOOST_TEST((std::find(names.begin(), names.end(), "layers.0.attention.W_q.weight.exp_avg") != names.end()));
  BOOST_TEST((std::find(names.begin(), names.end(), "embedding.weight.step") != names.end()));
  optim::save_training_state("named_state.safetensors", adam, default_generator(), 1);
  optim::AdamW again(encoder.named_parameters(), {.lr = 1e-2});
  BOOST_TEST(optim::load_training_state("named_state.safetensors", again, default_generator()) == 1);
  BOOST_TEST(again.state_tensors().size() == adam.state_tensors().size());
  std::vector<std::pair<std::string, Variable>> renamed = encoder.named_parameters();
  renamed[0].first = "other.weight";
  optim::AdamW other(renamed, {.lr = 1e-2});
  expect_error_containing<Error>(
      [&] { optim::load_training_state("named_state.safetensors", other, default_generator()); },
      "is not part of the state of AdamW");
  std::filesystem::remove("named_state.safetensors");
}

BOOST_AUTO_TEST_SUITE_END()
