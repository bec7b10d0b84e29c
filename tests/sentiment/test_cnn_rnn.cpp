// TextCNN and BiRNN (examples/sentiment/extras/cnn_rnn.h): shapes, and that a review's logits depend on its
// valid tokens only, whatever the padding after them holds and however long the batch is padded.
#include <boost/test/unit_test.hpp>

#include "examples/sentiment/extras/cnn_rnn.h"

using namespace minigrad;
using namespace sentiment;

namespace {

// Two reviews of 6 and 5 tokens (at least the widest kernel), padded to `length` with `filler` after each
// review's end.
std::pair<Tensor, Tensor> batch(int64_t length, int64_t filler) {
  Tensor tokens = Tensor::full({2, length}, static_cast<double>(filler), DType::Int64);
  const std::vector<std::vector<int64_t>> reviews = {{5, 9, 2, 7, 7, 3}, {8, 4, 1, 6, 2}};
  for (int64_t i = 0; i < 2; ++i) {
    for (size_t j = 0; j < reviews[i].size(); ++j) {
      tokens.data_ptr<int64_t>()[i * length + static_cast<int64_t>(j)] = reviews[i][j];
    }
  }
  return {tokens, Tensor::from_vector<int64_t>({6, 5}, {2})};
}

double max_difference(const Variable& a, const Variable& b) {
  return max(abs(sub(a.data(), b.data()))).item();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cnn_rnn)

BOOST_AUTO_TEST_CASE(logits_depend_on_the_valid_tokens_only) {
  for (const std::string kind : {"textcnn", "birnn"}) {
    BOOST_TEST_CONTEXT(kind) {
      manual_seed(3);
      CnnRnnClassifier model({.model = kind, .vocab_size = 12, .embed_size = 4, .channels = 3, .hidden = 3});
      model.to(DType::Float64);
      model.eval();
      const auto [tokens, lengths] = batch(8, 0);
      const Variable logits = model(tokens, lengths);
      BOOST_TEST(logits.shape() == Shape({2, 2}));
      const auto [other_tokens, same_lengths] = batch(11, 10);  // longer, and padded with a real token
      BOOST_TEST(max_difference(model(other_tokens, same_lengths), logits) < 1e-12);
      // A valid token does change them.
      Tensor changed = tokens.clone();
      changed.data_ptr<int64_t>()[8] = 11;  // review 1's first token
      BOOST_TEST(max_difference(model(changed, lengths), logits) > 1e-6);
    }
  }
}

BOOST_AUTO_TEST_CASE(parameters_and_errors) {
  CnnRnnClassifier cnn({.model = "textcnn", .vocab_size = 50});
  BOOST_TEST(cnn.convs.size() == 3u);
  BOOST_TEST(cnn.decoder->weight.shape() == Shape({2, 300}));  // 3 widths × 100 channels
  CnnRnnClassifier rnn({.model = "birnn", .vocab_size = 50});
  BOOST_TEST(rnn.decoder->weight.shape() == Shape({2, 400}));  // first and last outputs, both directions
  BOOST_TEST(rnn.lstm->options.num_layers == 2);
  BOOST_CHECK_THROW(CnnRnnClassifier({.model = "gru", .vocab_size = 50}), ValueError);
  // Padded to 4 tokens, fewer than the widest kernel spans.
  const Tensor tokens = Tensor::ones({2, 4}, DType::Int64),
               lengths = Tensor::from_vector<int64_t>({4, 3}, {2});
  BOOST_CHECK_THROW(cnn(tokens, lengths), ShapeError);
}

BOOST_AUTO_TEST_CASE(a_forget_bias_shifts_the_forget_gates_of_every_layer_and_direction_only) {
  auto build = [](double forget_bias) {
    manual_seed(5);
    return CnnRnnClassifier(
        {.model = "birnn", .vocab_size = 12, .embed_size = 4, .hidden = 3, .forget_bias = forget_bias});
  };
  const CnnRnnClassifier plain = build(0), shifted = build(1);
  const auto a = plain.named_parameters(), b = shifted.named_parameters();
  BOOST_TEST_REQUIRE(a.size() == b.size());
  int shifted_biases = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    BOOST_TEST_CONTEXT(a[i].first) {
      const Tensor difference = sub(b[i].second.data(), a[i].second.data());
      if (a[i].first.find("bias_ih") == std::string::npos) {
        BOOST_TEST(max(abs(difference)).item() == 0.0);
        continue;
      }
      ++shifted_biases;  // gates i, f, g, o of 3 each: f is [3, 6)
      for (int64_t j = 0; j < 12; ++j)
        BOOST_TEST(difference.at({j}) == (j >= 3 && j < 6 ? 1.0 : 0.0), boost::test_tools::tolerance(1e-6));
    }
  }
  BOOST_TEST(shifted_biases == 4);  // 2 layers x 2 directions
}

BOOST_AUTO_TEST_SUITE_END()
