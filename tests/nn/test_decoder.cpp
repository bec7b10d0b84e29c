// The decoder: masks (causal, target padding, source valid lengths), the key/value cache, and decoding.
// The gradient checks of DecoderLayer are in the gradcheck catalogue (tests/gradcheck/layer_cases.cpp),
// which test_autograd runs in full.
#include <cmath>
#include <map>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::nn;
using namespace minigrad::testing;

namespace {

TransformerOptions small_options(bool norm_first) {
  const TransformerLayerOptions layer{
      .num_hiddens = 8, .ffn_num_hiddens = 16, .num_heads = 2, .norm_first = norm_first};
  return {.encoder = {.layer = layer, .num_layers = 2, .tokens = {.vocab_size = 11, .max_len = 16}},
          .decoder = {.layer = layer, .num_layers = 2, .tokens = {.vocab_size = 9, .max_len = 12}}};
}

// The largest |a - b| over two tensors of one shape.
double max_difference(const Tensor& a, const Tensor& b) {
  BOOST_REQUIRE(a.shape() == b.shape());
  return max(abs(sub(a.to(DType::Float64), b.to(DType::Float64)))).item();
}

Tensor ids(const std::vector<int64_t>& values, const Shape& shape) {
  return Tensor::from_vector(values, shape);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(decoder)

BOOST_AUTO_TEST_CASE(parameters_have_dotted_names_and_the_tree_prints) {
  TransformerDecoder decoder(
      {.layer = {.num_hiddens = 4, .ffn_num_hiddens = 8, .num_heads = 2}, .tokens = {.vocab_size = 7}});
  std::vector<std::string> names;
  for (const auto& [name, p] : decoder.named_parameters()) names.push_back(name);
  for (const char* expected :
       {"embedding.weight", "layers.0.self_attention.W_q.weight", "layers.0.cross_attention.W_v.weight",
        "layers.0.addnorm3.ln.bias", "output.weight", "output.bias"}) {
    BOOST_TEST(std::count(names.begin(), names.end(), expected) == 1, expected);
  }
  const std::string tree = decoder.repr();
  BOOST_TEST(tree.find("(layers): ModuleList(\n    (0): DecoderLayer(\n      (self_attention): "
                       "MultiHeadAttention(") != std::string::npos,
             tree);
  BOOST_TEST(tree.find("(output): Linear(in_features=4, out_features=7, bias=True)") != std::string::npos);

  // Decoder-only and tied: no cross-attention, no output matrix (the embedding serves), a bias.
  TransformerDecoder lm({.layer = {.num_hiddens = 4, .ffn_num_hiddens = 8, .num_heads = 2},
                         .tokens = {.vocab_size = 7},
                         .cross_attention = false,
                         .tie_weights = true});
  names.clear();
  for (const auto& [name, p] : lm.named_parameters()) names.push_back(name);
  BOOST_TEST(std::count(names.begin(), names.end(), "layers.0.cross_attention.W_q.weight") == 0);
  BOOST_TEST(std::count(names.begin(), names.end(), "output.weight") == 0);
  BOOST_TEST(std::count(names.begin(), names.end(), "output_bias") == 1);
  BOOST_TEST(lm.repr().find("TransformerDecoder(\n  tie_weights=True") == 0);
  // per layer: 4 attention matrices 4·4, two LayerNorms, FFN 4·8+8+8·4+4; embedding 7·4 and bias 7
  BOOST_TEST(lm.parameter_count() == 7 * 4 + 7 + 4 * 16 + 2 * 8 + (32 + 8 + 32 + 4));

  Transformer seq2seq(small_options(false));
  BOOST_TEST(seq2seq.named_parameters().front().first == "encoder.embedding.weight");
  BOOST_TEST(seq2seq.repr().find("(decoder): TransformerDecoder(") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(changing_a_later_target_token_changes_no_earlier_output) {
  for (bool norm_first : {false, true}) {
    manual_seed(3);
    Transformer model(small_options(norm_first));
    model.eval();
    const Tensor source = ids({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
    const Tensor lens = ids({4, 3}, {2});
    Tensor target = ids({0, 3, 4, 5, 6, 0, 2, 2, 7, 1}, {2, 5});
    const Tensor before = model(source, target, {.source_valid_lens = lens}).data();  // (2, 5, 9)
    target.data_ptr<int64_t>()[3] = 8;                                                // row 0, position 3
    target.data_ptr<int64_t>()[6] = 5;                                                // row 1, position 1
    const Tensor after = model(source, target, {.source_valid_lens = lens}).data();
    BOOST_TEST(max_difference(before.select(0, 0).slice(0, 0, 3), after.select(0, 0).slice(0, 0, 3)) == 0.0);
    BOOST_TEST(max_difference(before.select(0, 1).slice(0, 0, 1), after.select(0, 1).slice(0, 0, 1)) == 0.0);
    // ... while the changed positions and those after them do change
    BOOST_TEST(max_difference(before.select(0, 0).slice(0, 3, 5), after.select(0, 0).slice(0, 3, 5)) > 1e-3);
    BOOST_TEST(max_difference(before.select(0, 1).slice(0, 1, 5), after.select(0, 1).slice(0, 1, 5)) > 1e-3);
  }
}

BOOST_AUTO_TEST_CASE(a_source_token_hidden_by_its_valid_length_changes_nothing) {
  manual_seed(4);
  Transformer model(small_options(false));
  model.eval();
  Tensor source = ids({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {2, 5});
  const Tensor lens = ids({5, 2}, {2});
  const Tensor target = ids({0, 3, 4, 0, 2, 2}, {2, 3});
  const DecoderMasks masks{.target_valid_lens = ids({3, 2}, {2}), .source_valid_lens = lens};
  const Tensor before = model(source, target, masks).data();
  source.data_ptr<int64_t>()[5 + 3] = 1;  // row 1, position 3 >= its valid length 2
  BOOST_TEST(max_difference(before, model(source, target, masks).data()) == 0.0);
  source.data_ptr<int64_t>()[5 + 1] = 1;  // row 1, position 1: valid, so it must matter
  BOOST_TEST(max_difference(before, model(source, target, masks).data()) > 1e-3);
}

BOOST_AUTO_TEST_CASE(padding_a_target_changes_nothing_at_its_valid_positions) {
  manual_seed(5);
  Transformer model(small_options(true));
  model.eval();
  const Tensor source = ids({1, 2, 3, 4}, {1, 4});
  const Tensor short_target = ids({0, 3}, {1, 2});
  const Tensor padded = ids({0, 3, 6, 6}, {1, 4});
  const Tensor a = model(source, short_target).data();
  const Tensor b = model(source, padded, {.target_valid_lens = ids({2}, {1})}).data();
  BOOST_TEST(max_difference(a, b.slice(1, 0, 2)) < 1e-6);
}

BOOST_AUTO_TEST_CASE(the_cache_gives_the_same_tokens_and_logits_as_recomputing) {
  for (bool norm_first : {false, true}) {
    manual_seed(6);
    Transformer model(small_options(norm_first));
    model.eval();
    NoGradGuard no_grad;
    const Tensor source = ids({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 1}, {3, 4});
    const Tensor lens = ids({4, 2, 3}, {3});
    const Variable memory = model.encode(source, lens);
    CachedDecoderSteps cached(*model.decoder, memory, lens);
    UncachedDecoderSteps uncached(*model.decoder, memory, lens);
    const Tensor start = ids({0, 0, 0}, {3, 1});
    const Generation a = greedy(cached, start, {.max_new_tokens = 11});
    const Generation b = greedy(uncached, start, {.max_new_tokens = 11});
    BOOST_TEST(a.tokens == b.tokens);
    BOOST_REQUIRE_EQUAL(a.logits.size(), 11u);
    for (size_t i = 0; i < a.logits.size(); ++i) BOOST_TEST(max_difference(a.logits[i], b.logits[i]) < 1e-5);
    BOOST_TEST(cached.cache().length == 11);
  }
  // Decoder-only and tied, with a prompt of several tokens fed at once (the cache's causal mask within
  // a chunk), and sampling: the same seed must give the same text both ways.
  manual_seed(7);
  TransformerDecoder lm({.layer = {.num_hiddens = 8, .ffn_num_hiddens = 16, .num_heads = 2},
                         .num_layers = 2,
                         .tokens = {.vocab_size = 13, .max_len = 20},
                         .cross_attention = false,
                         .tie_weights = true});
  CachedDecoderSteps cached(lm);
  UncachedDecoderSteps uncached(lm);
  const Tensor prompt = ids({3, 1, 4, 1, 5}, {1, 5});
  Generator g1(11), g2(11);
  const Generation a = sample(cached, prompt, {.max_new_tokens = 15, .temperature = 1.5}, g1);
  const Generation b = sample(uncached, prompt, {.max_new_tokens = 15, .temperature = 1.5}, g2);
  BOOST_TEST(a.tokens == b.tokens);
  for (size_t i = 0; i < a.logits.size(); ++i) BOOST_TEST(max_difference(a.logits[i], b.logits[i]) < 1e-5);
}

BOOST_AUTO_TEST_CASE(forward_step_over_a_chunk_matches_forward) {
  manual_seed(8);
  Transformer model(small_options(false));
  model.eval();
  NoGradGuard no_grad;
  const Tensor source = ids({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  const Tensor lens = ids({4, 1}, {2});
  const Tensor target = ids({0, 3, 4, 5, 6, 0, 2, 2, 7, 1}, {2, 5});
  const Variable memory = model.encode(source, lens);
  const Tensor whole = (*model.decoder)(target, memory, {.source_valid_lens = lens}).data();
  DecoderCache cache = model.decoder->start_cache(memory, lens);
  const Tensor first = model.decoder->forward_step(target.slice(1, 0, 3), cache).data();
  const Tensor rest = model.decoder->forward_step(target.slice(1, 3, 5), cache).data();
  BOOST_TEST(max_difference(concat({first, rest}, 1), whole) < 1e-5);
}

// A model whose next-token probabilities are written down: tokens 0 (end), 1 (A), 2 (B).
//   first token:  A 0.6, B 0.4
//   after A:      end 0.3, A 0.4, B 0.3           after B: end 0.9, A 0.05, B 0.05
//   after two:    end 1 (nearly)
// Greedy takes A (0.6) then A (0.4) then end: P = 0.24. The best sequence is B end: P = 0.36.
class HandMadeModel : public StepModel {
 public:
  Tensor next_logits(const Tensor& tokens) override {
    const std::vector<int64_t> fed = tokens.to_vector<int64_t>();
    const int64_t n = tokens.shape()[1];
    std::vector<double> logits;
    for (int64_t row = 0; row < tokens.shape()[0]; ++row) {
      std::vector<int64_t>& seq = rows_.at(static_cast<size_t>(row));
      seq.insert(seq.end(), fed.begin() + row * n, fed.begin() + (row + 1) * n);
      std::vector<double> p;
      if (seq.size() == 1) {
        p = {1e-9, 0.6, 0.4};
      } else if (seq.size() == 2) {
        p = seq[1] == 1 ? std::vector<double>{0.3, 0.4, 0.3} : std::vector<double>{0.9, 0.05, 0.05};
      } else {
        p = {1 - 2e-9, 1e-9, 1e-9};
      }
      for (double q : p) logits.push_back(std::log(q));
    }
    return Tensor::from_values(logits, {tokens.shape()[0], 3}, DType::Float64);
  }
  void select_rows(const Tensor& rows) override {
    std::vector<std::vector<int64_t>> kept;
    for (int64_t r : rows.to_vector<int64_t>()) kept.push_back(rows_.at(static_cast<size_t>(r)));
    rows_ = std::move(kept);
  }

 private:
  std::vector<std::vector<int64_t>> rows_{1};
};

BOOST_AUTO_TEST_CASE(beam_search_finds_the_best_sequence_that_greedy_misses) {
  const Tensor start = ids({0}, {1, 1});
  HandMadeModel greedy_model;
  const Generation g = greedy(greedy_model, start, {.max_new_tokens = 5, .end_token = 0});
  BOOST_TEST(g.tokens[0] == (std::vector<int64_t>{1, 1, 0}));

  HandMadeModel beam_model;
  const std::vector<Hypothesis> beams = beam_search(
      beam_model, start, {.beam_width = 2, .max_new_tokens = 5, .end_token = 0, .length_penalty = 0});
  BOOST_REQUIRE(!beams.empty());
  BOOST_TEST(beams[0].tokens == (std::vector<int64_t>{2, 0}));
  BOOST_TEST(beams[0].finished);
  BOOST_TEST(std::abs(beams[0].log_prob - std::log(0.36)) < 1e-6);
  BOOST_TEST(beams[0].score == beams[0].log_prob);  // length penalty 0
  for (size_t i = 1; i < beams.size(); ++i) BOOST_TEST(beams[i].score <= beams[0].score);

  // With length penalty 1 hypotheses are ranked by log P per token: A A end (log 0.24 / 3 = -0.476) beats
  // B end (log 0.36 / 2 = -0.511), and the search must go on past the first two ended hypotheses to find it.
  HandMadeModel per_token;
  const std::vector<Hypothesis> normalised = beam_search(
      per_token, start, {.beam_width = 2, .max_new_tokens = 5, .end_token = 0, .length_penalty = 1});
  BOOST_REQUIRE_EQUAL(normalised.size(), 2u);
  BOOST_TEST(normalised[0].tokens == (std::vector<int64_t>{1, 1, 0}));
  BOOST_TEST(std::abs(normalised[0].score - std::log(0.24) / 3) < 1e-6);
  BOOST_TEST(normalised[1].tokens == (std::vector<int64_t>{2, 0}));

  // Width 1 is greedy.
  HandMadeModel narrow;
  const std::vector<Hypothesis> one = beam_search(narrow, start, {.beam_width = 1, .end_token = 0});
  BOOST_REQUIRE_EQUAL(one.size(), 1u);
  BOOST_TEST(one[0].tokens == (std::vector<int64_t>{1, 1, 0}));
}

BOOST_AUTO_TEST_CASE(beam_search_on_a_transformer_is_at_least_as_likely_as_greedy) {
  manual_seed(9);
  Transformer model(small_options(false));
  model.eval();
  NoGradGuard no_grad;
  const Tensor source = ids({1, 2, 3, 4}, {1, 4});
  const Variable memory = model.encode(source);
  // log P of a sequence under the model, by teacher forcing
  auto log_prob = [&](const std::vector<int64_t>& tokens) {
    std::vector<int64_t> input{0};
    input.insert(input.end(), tokens.begin(), tokens.end() - 1);
    const Tensor logits =
        log_softmax((*model.decoder)(ids(input, {1, static_cast<int64_t>(input.size())}), memory).data(), -1);
    double total = 0;
    for (size_t i = 0; i < tokens.size(); ++i) total += logits.at({0, static_cast<int64_t>(i), tokens[i]});
    return total;
  };
  CachedDecoderSteps greedy_steps(*model.decoder, memory);
  const Generation g = greedy(greedy_steps, ids({0}, {1, 1}), {.max_new_tokens = 6});
  CachedDecoderSteps beam_steps(*model.decoder, memory);
  const std::vector<Hypothesis> beams =
      beam_search(beam_steps, ids({0}, {1, 1}), {.beam_width = 4, .max_new_tokens = 6, .length_penalty = 0});
  BOOST_REQUIRE_EQUAL(beams.size(), 4u);
  for (size_t i = 0; i < beams.size(); ++i) {
    BOOST_TEST(beams[i].tokens.size() == 6u);
    // the scores beam search kept (from the cached, reordered rows) are the model's own probabilities
    BOOST_TEST(std::abs(beams[i].log_prob - log_prob(beams[i].tokens)) < 1e-4);
    if (i > 0) BOOST_TEST(beams[i].score <= beams[i - 1].score);
  }
  // Width 1 keeps the single best extension at every step: greedy search.
  CachedDecoderSteps narrow_steps(*model.decoder, memory);
  const std::vector<Hypothesis> one =
      beam_search(narrow_steps, ids({0}, {1, 1}), {.beam_width = 1, .max_new_tokens = 6});
  BOOST_TEST(one[0].tokens == g.tokens[0]);
}

BOOST_AUTO_TEST_CASE(sampling_filters_as_asked_and_repeats_with_a_seed) {
  const std::vector<double> logits = {std::log(0.5), std::log(0.3), std::log(0.15), std::log(0.05)};
  auto close = [](const std::vector<double>& got, const std::vector<double>& expected) {
    BOOST_REQUIRE_EQUAL(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) BOOST_TEST(std::abs(got[i] - expected[i]) < 1e-12, i);
  };
  close(sampling_distribution(logits, {}), {0.5, 0.3, 0.15, 0.05});
  close(sampling_distribution(logits, {.top_k = 2}), {0.625, 0.375, 0, 0});
  close(sampling_distribution(logits, {.top_p = 0.7}), {0.625, 0.375, 0, 0});  // 0.5 < 0.7 <= 0.8
  close(sampling_distribution(logits, {.top_p = 0.5}), {1, 0, 0, 0});
  close(sampling_distribution(logits, {.temperature = 0}), {1, 0, 0, 0});
  // T = 0.5 squares the probabilities before renormalising
  const double z = 0.25 + 0.09 + 0.0225 + 0.0025;
  close(sampling_distribution(logits, {.temperature = 0.5}), {0.25 / z, 0.09 / z, 0.0225 / z, 0.0025 / z});

  // Drawn frequencies follow the distribution, and nothing outside the nucleus is ever drawn.
  class Fixed : public StepModel {
   public:
    explicit Fixed(std::vector<double> l) : logits_(std::move(l)) {}
    Tensor next_logits(const Tensor& tokens) override {
      std::vector<double> all;
      for (int64_t r = 0; r < tokens.shape()[0]; ++r) all.insert(all.end(), logits_.begin(), logits_.end());
      return Tensor::from_values(all, {tokens.shape()[0], 4}, DType::Float64);
    }
    void select_rows(const Tensor&) override {}
    std::vector<double> logits_;
  } fixed(logits);
  Generator g(1);
  const Generation drawn = sample(fixed, ids({0}, {1, 1}), {.max_new_tokens = 20000, .top_p = 0.7}, g);
  std::map<int64_t, int> counts;
  for (int64_t t : drawn.tokens[0]) ++counts[t];
  BOOST_TEST(counts.size() == 2u);
  BOOST_TEST(std::abs(counts[0] / 20000.0 - 0.625) < 0.015);
  Generator g1(5), g2(5);
  BOOST_TEST(sample(fixed, ids({0}, {1, 1}), {.max_new_tokens = 50}, g1).tokens ==
             sample(fixed, ids({0}, {1, 1}), {.max_new_tokens = 50}, g2).tokens);
}

BOOST_AUTO_TEST_CASE(bad_decoding_input_gets_a_clear_error) {
  manual_seed(10);
  TransformerDecoder lm({.layer = {.num_hiddens = 4, .ffn_num_hiddens = 4, .num_heads = 1},
                         .tokens = {.vocab_size = 5, .max_len = 6},
                         .cross_attention = false});
  CachedDecoderSteps steps(lm);
  expect_error<ValueError>(
      [&] {
        beam_search(steps, ids({1}, {1, 1}), {.beam_width = 0});
      },
      "beam_search: beam width must be at least 1, got 0");
  // A prompt longer than the model's maximum length
  expect_error<ShapeError>(
      [&] {
        greedy(steps, ids({1, 2, 3, 4, 1, 2, 3}, {1, 7}));
      },
      "PositionalEncoding: expects (batch, steps <= 6, 4), got [1,7,4]");
  // ... or generation running past it
  CachedDecoderSteps fresh(lm);
  expect_error<ShapeError>(
      [&] {
        greedy(fresh, ids({1, 2, 3}, {1, 3}), {.max_new_tokens = 10});
      },
      "PositionalEncoding: positions 6 to 6 go past the maximum length 6");
  Generator g(0);
  expect_error<ValueError>(
      [&] {
        sample(steps, ids({1}, {1, 1}), {.top_p = 0}, g);
      },
      "sample: top_p must be in (0, 1], got 0.000000");
  expect_error<ShapeError>(
      [&] {
        greedy(steps, Tensor::zeros({1, 0}, DType::Int64));
      },
      "greedy: expects tokens int64 (B, n) with B, n >= 1, got int64 [1,0]");
  // An encoder-decoder layer without memory
  TransformerDecoder with_cross(
      {.layer = {.num_hiddens = 4, .ffn_num_hiddens = 4}, .tokens = {.vocab_size = 5}});
  expect_error_containing<ShapeError>(
      [&] {
        with_cross(ids({1}, {1, 1}), Variable());
      },
      "DecoderLayer: expects memory (B = 1, S, 4) from the encoder, got none");
  // An encoder-decoder whose decoder cannot read the encoder's output
  TransformerOptions options = small_options(false);
  options.decoder.cross_attention = false;
  expect_error<ValueError>([&] { Transformer{options}; },
                           "Transformer: the decoder must attend to the encoder's output: "
                           "decoder.cross_attention is false");
  options = small_options(false);
  options.decoder.layer.num_hiddens = 6;
  expect_error<ValueError>([&] { Transformer{options}; },
                           "Transformer: the decoder's num_hiddens (6) must be the encoder's (8): its "
                           "cross-attention reads the encoder's output");
}

BOOST_AUTO_TEST_SUITE_END()
