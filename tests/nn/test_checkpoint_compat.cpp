// Checkpoints saved before the Transformer's options were nested (issue 44) still load, and give the same
// results to the bit.
//
// nn/checkpoints_before_nested_options/ holds three small models' weights and results, written by the code
// of commit 236995c, the last before the Transformer's options were nested, its layers given one residual
// block and one list of layers, and the masked poolings merged: a post-norm TransformerEncoder, a pre-norm
// encoder-decoder Transformer with tied weights, and a decoder-only TransformerDecoder. Its README.md
// has the program that wrote them; the functions here repeat that program's steps with today's API.
#include <fstream>
#include <functional>
#include <sstream>

#include "test_helpers.h"

using namespace minigrad;

namespace {

using Tensors = std::vector<std::pair<std::string, Tensor>>;
const std::map<std::string, std::string> kMetadata{{"written_by", "236995c"}};

std::string path_of(const std::string& file) {
  return std::string(MINIGRAD_CHECKPOINTS_BEFORE_NESTED_OPTIONS) + "/" + file;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The three models, with the options the writer gave them; their weights are drawn from the default
// generator.
std::shared_ptr<nn::TransformerEncoder> make_encoder() {
  return std::make_shared<nn::TransformerEncoder>(
      nn::TransformerEncoderOptions{.layer = {.num_hiddens = 4,
                                              .ffn_num_hiddens = 6,
                                              .num_heads = 2,
                                              .dropout = 0.1,
                                              .attention_dropout = 0.2,
                                              .bias = true,
                                              .activation = nn::Activation::GELU},
                                    .num_layers = 2,
                                    .tokens = {.vocab_size = 9, .max_len = 6, .padding_idx = 0}});
}
std::shared_ptr<nn::Transformer> make_transformer() {
  const nn::TransformerLayerOptions layer{
      .num_hiddens = 4, .ffn_num_hiddens = 6, .num_heads = 2, .dropout = 0.1, .norm_first = true};
  return std::make_shared<nn::Transformer>(
      nn::TransformerOptions{.encoder = {.layer = layer,
                                         .num_layers = 2,
                                         .tokens = {.vocab_size = 7, .max_len = 6, .padding_idx = 0}},
                             .decoder = {.layer = layer,
                                         .num_layers = 2,
                                         .tokens = {.vocab_size = 8, .max_len = 5, .padding_idx = 0},
                                         .tie_weights = true}});
}
std::shared_ptr<nn::TransformerDecoder> make_lm() {
  return std::make_shared<nn::TransformerDecoder>(
      nn::TransformerDecoderOptions{.layer = {.num_hiddens = 4,
                                              .ffn_num_hiddens = 4,
                                              .num_heads = 2,
                                              .dropout = 0.1,
                                              .activation = nn::Activation::GELU},
                                    .num_layers = 2,
                                    .tokens = {.vocab_size = 6, .max_len = 6, .learnable_positions = true},
                                    .final_norm = true,
                                    .cross_attention = false});
}

// The gradient of sum(y · R) for a random R drawn from `seed`: the parameters' gradients, "grad.NAME".
void add_gradients(Tensors& out, nn::Module& model, const Variable& y, uint64_t seed) {
  Generator g(seed);
  model.zero_grad();
  sum(y * Variable(Tensor::normal(y.shape(), 0, 1, DType::Float64, &g))).backward();
  for (const auto& [name, p] : model.named_parameters()) out.emplace_back("grad." + name, p.grad());
}

// The writer's probe: a computation through the kernels the models use, with modules issue 44 left alone.
Tensors probe() {
  Generator g(5);
  auto attention = std::make_shared<nn::MultiHeadAttention>(nn::MultiHeadAttentionOptions{
      .num_hiddens = 4, .num_heads = 2, .dropout = 0.2, .bias = true, .generator = &g});
  auto norm = std::make_shared<nn::LayerNorm>(4);
  auto ffn = std::make_shared<nn::PositionWiseFFN>(4, 6, nn::Activation::GELU, &g);
  for (nn::Module* m : std::initializer_list<nn::Module*>{attention.get(), norm.get(), ffn.get()})
    m->to(DType::Float64);
  const Variable x(Tensor::normal({2, 3, 4}, 0, 1, DType::Float64, &g), true);
  const nn::AttentionMask mask{.valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2}), .causal = true};
  const Variable h = (*norm)(x + (*attention)(x, x, x, mask));
  const Variable y = (*ffn)(h);
  const Variable pooled =
      max(masked_fill(y, Tensor::from_values({0, 0, 1, 0, 0, 0}, {2, 3, 1}, DType::Bool), -1e30), 1);
  sum(pooled * Variable(Tensor::normal(pooled.shape(), 0, 1, DType::Float64, &g))).backward();
  return {{"probe.y", y.data()}, {"probe.pooled", pooled.data()}, {"probe.grad", x.grad()}};
}

double max_difference(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_vector(), y = b.to_vector();
  double most = 0;
  for (size_t i = 0; i < x.size(); ++i) most = std::max(most, std::abs(x[i] - y[i]) / (1 + std::abs(y[i])));
  return most;
}

// The stored results are the writing machine's: the last bits of a kernel's result depend on the CPU
// (OpenBLAS picks its kernels for it; -march=native) and on the build (-O3 fuses a·b + c into one
// rounding, the sanitizer builds' -O1 does not). Where the probe comes out as stored, this machine and
// build round as the writer's did, and the models' results must be identical to the bit; elsewhere they
// must agree to 1e-12 (relative, in float64), which a change of the computation would not meet.
bool rounds_as_the_writer() {
  static const bool same = [] {
    const SafetensorsFile stored = load_safetensors(path_of("probe.safetensors"));
    for (const auto& [name, t] : probe()) {
      if (stored.find(name) == nullptr || stored.find(name)->to_vector() != t.to_vector()) return false;
    }
    return true;
  }();
  return same;
}

// What the writer saved of `model` after loading it from NAME.safetensors (strictly: every tensor of the
// file, under today's names, and no other), computed by today's code and compared with
// NAME.outputs.safetensors.
void check_results(nn::Module& model, const std::string& name, const std::function<Variable()>& forward,
                   const std::function<void(Tensors&, const Variable&)>& extra) {
  optim::load_weights(model, path_of(name + ".safetensors"));
  model.to(DType::Float64);
  Tensors computed;
  model.eval();
  const Variable evaluated = forward();
  computed.emplace_back("eval", evaluated.data());
  extra(computed, evaluated);
  model.train();
  manual_seed(7);
  const Variable trained = forward();
  computed.emplace_back("train", trained.data());
  add_gradients(computed, model, trained, 3);

  const SafetensorsFile stored = load_safetensors(path_of(name + ".outputs.safetensors"));
  BOOST_TEST_REQUIRE(computed.size() == stored.tensors.size());
  if (!rounds_as_the_writer()) {
    BOOST_TEST_MESSAGE(name << ": this machine or build rounds unlike the writer's (probe.safetensors): "
                               "results compared to 1e-12 instead of to the bit");
  }
  for (size_t i = 0; i < computed.size(); ++i) {
    const auto& [key, value] = computed[i];
    const Tensor& expected = stored.tensors[i].second;
    BOOST_TEST_REQUIRE(key == stored.tensors[i].first);
    BOOST_TEST_REQUIRE(value.shape() == expected.shape(), name << " " << key);
    if (rounds_as_the_writer()) {
      BOOST_TEST((value.to_vector() == expected.to_vector()),
                 name << " " << key << " differs by " << max_difference(value, expected));
    } else {
      BOOST_TEST(max_difference(value, expected) <= 1e-12, name << " " << key);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(checkpoints_before_nested_options)

// The same seed draws the same weights in the same order, saved under the same names: the whole file,
// byte for byte.
BOOST_AUTO_TEST_CASE(a_model_built_from_the_writers_seed_saves_the_same_file) {
  manual_seed(11);
  BOOST_TEST(
      (optim::serialize_weights(*make_encoder(), kMetadata) == bytes_of(path_of("encoder.safetensors"))));
  manual_seed(12);
  BOOST_TEST((optim::serialize_weights(*make_transformer(), kMetadata) ==
              bytes_of(path_of("transformer.safetensors"))));
  manual_seed(13);
  BOOST_TEST((optim::serialize_weights(*make_lm(), kMetadata) == bytes_of(path_of("lm.safetensors"))));
}

// The writer pooled with nn::masked_mean and nn::masked_max, which mean_over_time and max_over_time along
// dim 1 replace.
BOOST_AUTO_TEST_CASE(the_encoder_and_the_masked_poolings_give_the_same_results) {
  manual_seed(0);  // not the writer's seed: the values must come from the file
  const auto encoder = make_encoder();
  const Tensor tokens = Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 8, 1, 2, 0, 0}, {3, 5});
  const Tensor lens = Tensor::from_vector<int64_t>({5, 2, 3}, {3});
  check_results(
      *encoder, "encoder", [&] { return (*encoder)(tokens, {.valid_lens = lens}); },
      [](Tensors& out, const Variable& h) {
        const Tensor pool_lens = Tensor::from_vector<int64_t>({5, 0, 3}, {3});  // one sequence empty
        const Variable x(h.data(), true);
        const Variable mean = mean_over_time(x, pool_lens, /*dim=*/1),
                       top = max_over_time(x, pool_lens, /*dim=*/1);
        Generator g(4);
        const Variable r_mean(Tensor::normal(mean.shape(), 0, 1, DType::Float64, &g));
        const Variable r_top(Tensor::normal(top.shape(), 0, 1, DType::Float64, &g));
        sum(mean * r_mean + top * r_top).backward();
        out.emplace_back("masked_mean", mean.data());
        out.emplace_back("masked_max", top.data());
        out.emplace_back("masked_pooling.grad", x.grad());
      });
}

BOOST_AUTO_TEST_CASE(the_encoder_decoder_gives_the_same_results_and_generation) {
  manual_seed(0);
  const auto transformer = make_transformer();
  const Tensor source = Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6, 0, 0}, {2, 4});
  const Tensor target = Tensor::from_vector<int64_t>({1, 7, 2, 1, 3, 0}, {2, 3});
  const nn::DecoderMasks masks{.target_valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2}),
                               .source_valid_lens = Tensor::from_vector<int64_t>({4, 2}, {2})};
  check_results(
      *transformer, "transformer", [&] { return (*transformer)(source, target, masks); },
      [&](Tensors& out, const Variable&) {
        const Variable memory = transformer->encode(source, masks.source_valid_lens);
        nn::DecoderCache cache = transformer->decoder->start_cache(memory, masks.source_valid_lens);
        std::vector<Variable> steps;
        for (int64_t t = 0; t < 3; ++t)
          steps.push_back(transformer->decoder->forward_step(target.slice(1, t, t + 1), cache));
        out.emplace_back("steps", concat(steps, 1).data());
      });
}

BOOST_AUTO_TEST_CASE(the_decoder_only_model_gives_the_same_results_and_generation) {
  manual_seed(0);
  const auto lm = make_lm();
  const Tensor text = Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 2, 4, 0}, {2, 4});
  check_results(
      *lm, "lm",
      [&] {
        return (*lm)(text, Variable(), {.target_valid_lens = Tensor::from_vector<int64_t>({4, 3}, {2})});
      },
      [&](Tensors& out, const Variable&) {
        nn::DecoderCache cache = lm->start_cache(Variable());
        const Variable first = lm->forward_step(text.slice(1, 0, 2), cache);
        const Variable second = lm->forward_step(text.slice(1, 2, 4), cache);
        out.emplace_back("steps", concat({first, second}, 1).data());
      });
}

BOOST_AUTO_TEST_SUITE_END()
