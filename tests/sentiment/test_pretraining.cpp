// Token dropout and masked-token pretraining.
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "examples/sentiment/extras/pretraining.h"

#include "test_helpers.h"
#include "tests/sentiment/sentiment_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;
using namespace sentiment;
using namespace sentiment::testing;

BOOST_AUTO_TEST_SUITE(sentiment_example)

BOOST_AUTO_TEST_CASE(token_dropout_and_masking_change_only_real_tokens) {
  // Two reviews of lengths 300 and 200 in a (2, 300) batch, ids 2..11, padded with <pad>.
  std::vector<int64_t> ids(600, Vocabulary::kPad);
  for (int64_t j = 0; j < 300; ++j) ids[static_cast<size_t>(j)] = 2 + j % 10;
  for (int64_t j = 0; j < 200; ++j) ids[static_cast<size_t>(300 + j)] = 2 + (j * 7) % 10;
  const Tensor tokens = Tensor::from_vector(ids, {2, 300});
  const Tensor lengths = Tensor::from_vector(std::vector<int64_t>{300, 200}, {2});
  Generator g(5);

  const std::vector<int64_t> dropped = drop_tokens(tokens, lengths, 0.25, g).to_vector<int64_t>();
  int64_t unk = 0;
  for (size_t k = 0; k < ids.size(); ++k) {
    if (dropped[k] == Vocabulary::kUnk)
      ++unk;
    else
      BOOST_TEST(dropped[k] == ids[k]);  // kept as it was, padding included
  }
  for (size_t k = 500; k < 600; ++k) BOOST_TEST(dropped[k] == Vocabulary::kPad);
  BOOST_TEST((unk > 90 && unk < 160), unk << " of 500 tokens dropped at p = 0.25");
  BOOST_TEST(drop_tokens(tokens, lengths, 0, g).to_vector<int64_t>() == ids);

  const MaskedTokens masked = mask_tokens(tokens, lengths, 0.2, 12, g);
  const std::vector<int64_t> inputs = masked.inputs.to_vector<int64_t>();
  const std::vector<int64_t> positions = masked.positions.to_vector<int64_t>();
  const std::vector<int64_t> targets = masked.targets.to_vector<int64_t>();
  BOOST_REQUIRE(positions.size() == targets.size());
  BOOST_TEST((positions.size() > 70 && positions.size() < 130), positions.size()
                                                                    << " of 500 chosen at p = 0.2");
  std::set<int64_t> chosen(positions.begin(), positions.end());
  BOOST_TEST(chosen.size() == positions.size());
  int64_t hidden = 0;
  for (size_t m = 0; m < positions.size(); ++m) {
    const int64_t at = positions[m];
    BOOST_TEST(((at < 300) || (at >= 300 && at < 500)), "position " << at << " is padding");
    BOOST_TEST(targets[m] == ids[static_cast<size_t>(at)]);  // the token that was there
    if (inputs[static_cast<size_t>(at)] == Vocabulary::kUnk) ++hidden;
    BOOST_TEST((inputs[static_cast<size_t>(at)] >= 1 && inputs[static_cast<size_t>(at)] < 12));
  }
  BOOST_TEST(hidden > static_cast<int64_t>(positions.size()) * 6 / 10);  // about 80% become the mask
  for (size_t k = 0; k < ids.size(); ++k)
    if (!chosen.count(static_cast<int64_t>(k))) BOOST_TEST(inputs[k] == ids[k]);
  // A review too short to be chosen at this rate still gets one prediction.
  const MaskedTokens one = mask_tokens(Tensor::from_vector(std::vector<int64_t>{5, 6}, {1, 2}),
                                       Tensor::from_vector(std::vector<int64_t>{2}, {1}), 0.01, 12, g);
  BOOST_TEST(one.positions.numel() == 1);
  expect_error<ValueError>([&] { mask_tokens(tokens, lengths, 0, 12, g); },
                           "mask_tokens: p must be in (0, 1], got 0.000000");
}

BOOST_AUTO_TEST_CASE(pretraining_learns_to_fill_in_masked_tokens_and_leaves_the_model_as_it_was_built) {
  // Each review is a stretch of the cycle w0 w1 ... w9 w0 ..., from a random start: any hidden token
  // follows from its neighbours.
  Generator g(8);
  std::vector<Review> reviews;
  for (int i = 0; i < 128; ++i) {
    std::string text;
    for (uint64_t k = 0, start = g.next_below(10); k < 20; ++k)
      text += "w" + std::to_string((start + k) % 10) + " ";
    reviews.push_back({text, i % 2});
  }
  SmallRun run(reviews);
  // Hashed n-grams: a masked token is read mostly through the bigrams with the mask in them, and with no
  // <unk> in this text an n-gram vocabulary gives those no rows.
  run.extended.ngram_vocabulary = false;
  run.extended.pretrain_epochs = 8;
  run.extended.sparse_embeddings = false;  // the tied output layer gives the token table a dense gradient
  run.extended.pretrain_lr = 1e-2;
  run.extended.mask_prob = 0.15;
  run.config.dropout = 0;
  manual_seed(4);
  Checkpoint checkpoint = run.make();
  const auto before = checkpoint.model->named_parameters();
  std::ostringstream progress;
  const PretrainingLog log = pretrain(checkpoint, run.examples, progress);
  BOOST_TEST(log.steps == 8 * 8);  // 128 reviews in batches of 16, 8 epochs
  BOOST_REQUIRE(log.epoch_loss.size() == 8u);
  BOOST_TEST(log.epoch_loss.back() < 0.5 * log.epoch_loss.front(),
             "masked-token loss " << log.epoch_loss.front() << " -> " << log.epoch_loss.back());
  BOOST_TEST(log.epoch_accuracy.back() > 0.6, "masked-token accuracy " << log.epoch_accuracy.back());
  BOOST_TEST(progress.str().find("pretraining epoch 8: masked-token loss") != std::string::npos);
  // The same parameters (the prediction bias was the pretraining's own), now changed.
  const auto after = checkpoint.model->named_parameters();
  BOOST_REQUIRE(after.size() == before.size());
  for (size_t i = 0; i < after.size(); ++i) BOOST_TEST(after[i].first == before[i].first);
  // Nothing to do without pretraining epochs.
  run.extended.pretrain_epochs = 0;
  Checkpoint untouched = run.make();
  BOOST_TEST(pretrain(untouched, run.examples, progress).steps == 0);
}

BOOST_AUTO_TEST_SUITE_END()
