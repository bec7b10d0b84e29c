// Training the sentiment classifier: it learns, saves and reloads; text that is not UTF-8, any max_len, a
// NaN loss, row-sparse tables.
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "examples/common/utf8.h"
#include "examples/sentiment/evaluation.h"
#include "examples/sentiment/extras/predictions.h"
#include "examples/sentiment/extras/pretraining.h"
#include "examples/sentiment/training.h"
#include "minigrad/tensor/file_io.h"

#include "test_helpers.h"
#include "tests/sentiment/sentiment_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;
using namespace sentiment;
using namespace sentiment::testing;

BOOST_AUTO_TEST_SUITE(sentiment_example)

BOOST_AUTO_TEST_CASE(a_short_training_run_learns_and_its_checkpoint_reloads) {
  manual_seed(3);
  Generator g(5);
  // A tiny aclImdb-shaped folder of 128 reviews, read back through the loader.
  const fs::path root = fs::temp_directory_path() / ("tiny_imdb_train_" + std::to_string(::getpid()));
  fs::remove_all(root);
  const std::vector<Review> written = synthetic_reviews(128, g);
  for (size_t i = 0; i < written.size(); ++i) {
    write(root / "train" / (written[i].label ? "pos" : "neg") / (std::to_string(i) + "_5.txt"),
          written[i].text);
  }
  const std::vector<Review> reviews = load_imdb_split(root, "train").reviews;
  fs::remove_all(root);
  BOOST_REQUIRE(reviews.size() == 128u);
  std::vector<std::vector<std::string>> tokens;
  for (const Review& r : reviews) tokens.push_back(tokenize(r.text));
  Config config = small_transformer<Config>(/*width=*/16, /*batch_size=*/16, /*lr=*/5e-3);
  config.max_len = 32;
  config.epochs = 5;  // 40 steps
  // The plain classifier (no extensions in the config: the n-gram table is tested on its own below), with
  // dropout 0.1.
  config.dropout = 0.1;
  Vocabulary vocabulary = Vocabulary::build(tokens, 100, 1);
  const std::vector<Example> examples = encode(reviews, vocabulary, config.max_len);
  Checkpoint checkpoint{config, vocabulary, std::make_shared<SentimentModel>(config, vocabulary.size())};
  std::ostringstream progress;
  const TrainingLog log = train(checkpoint, examples, progress);
  BOOST_TEST(log.epoch_loss.size() == 5u);
  BOOST_TEST(log.epoch_loss.back() < 0.5 * log.epoch_loss.front(),
             "losses: " << log.epoch_loss.front() << " -> " << log.epoch_loss.back());
  BOOST_TEST(evaluate(*checkpoint.model, examples).accuracy > 0.95);
  BOOST_TEST(progress.str().find("step 40/40  epoch 5/5") != std::string::npos, progress.str());

  const fs::path dir = fs::temp_directory_path() / "sentiment_checkpoint_test";
  checkpoint.save(dir);
  const Checkpoint reloaded = Checkpoint::load(dir);
  BOOST_TEST(positive_probabilities(*reloaded.model, examples) ==
             positive_probabilities(*checkpoint.model, examples));

  // A prediction keeps each layer's attention over the review's own tokens, not the batch's padding
  // (the batch is padded to a multiple of 16: a heatmap once showed 32 columns for 21 tokens).
  const Prediction p = predict(reloaded, "the plot was great great and the scene");
  BOOST_TEST(p.tokens.size() == 8u);
  BOOST_TEST(p.positive > 0.5);
  BOOST_REQUIRE(p.attention.size() == 1u);
  BOOST_TEST(p.attention[0].shape() == (Shape{2, 8, 8}));
  expect_close(sum(p.attention[0], {2}), std::vector<double>(16, 1.0),
               1e-5);  // every query's weights sum to 1

  // A config or vocabulary that does not belong to the weights is refused, saying which.
  std::string json;
  { json = read_file("test", (dir / "config.json").string()); }
  write(dir / "config.json", json.substr(0, json.find("\"num_hiddens\": 16")) + "\"num_hiddens\": 32" +
                                 json.substr(json.find("\"num_hiddens\": 16") + 17));
  expect_error_containing<Error>(
      [&] { Checkpoint::load(dir); },
      "model.safetensors was trained with max_len=32 num_hiddens=16 num_heads=2 "
      "ffn_num_hiddens=32 num_layers=1 learnable_positions=0, but config.json says "
      "max_len=32 num_hiddens=32");
  write(dir / "config.json", json);
  write(dir / "vocab.json", "[\"<pad>\", \"<unk>\", \"great\"]");
  expect_error_containing<Error>([&] { Checkpoint::load(dir); },
                                 "model.safetensors was trained with a vocabulary of");
  fs::remove_all(dir);
  expect_error_containing<Error>([&] { Checkpoint::load(dir); }, "is not a folder");
}

BOOST_AUTO_TEST_CASE(text_that_is_not_utf8_trains_and_its_vocabulary_saves_and_reloads) {
  // Latin-1 and broken bytes in the training text used to make the vocabulary's JSON dump throw after
  // config.json had already been replaced. Now they become U+FFFD where text is read.
  std::vector<Review> reviews = synthetic(32, 1);
  for (size_t i = 0; i < reviews.size(); ++i)
    reviews[i].text += i % 2 ? " caf\xe9 \xff\xfe" : " na\xefve \xc3";
  SmallRun run(reviews);
  Checkpoint checkpoint = run.make();
  std::ostringstream progress;
  train(checkpoint, run.examples, progress, {.max_steps = 2});
  const fs::path dir = fs::temp_directory_path() / ("sentiment_utf8_" + std::to_string(::getpid()));
  checkpoint.save(dir);
  const Checkpoint reloaded = load_extended_checkpoint(dir);
  BOOST_TEST(reloaded.vocabulary.tokens() == checkpoint.vocabulary.tokens());
  BOOST_TEST(reloaded.vocabulary.id("caf\xef\xbf\xbd") > Vocabulary::kUnk);  // "café" in Latin-1
  fs::remove_all(dir);
  // valid_utf8 keeps every well-formed sequence and replaces each bad byte.
  BOOST_TEST(examples::valid_utf8("Café ☕ 😀") == "Café ☕ 😀");
  BOOST_TEST(examples::valid_utf8("\xc0\xaf") == "\xef\xbf\xbd\xef\xbf\xbd");                  // overlong '/'
  BOOST_TEST(examples::valid_utf8("\xed\xa0\x80") == "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate
  BOOST_TEST(examples::valid_utf8("\xf4\x90\x80\x80").size() == 12u);              // above U+10FFFF
  BOOST_TEST(examples::valid_utf8("ab\xe2\x82") == "ab\xef\xbf\xbd\xef\xbf\xbd");  // cut short
}

BOOST_AUTO_TEST_CASE(any_max_len_trains_and_zero_examples_is_an_error) {
  // A max_len that is not a multiple of 16 used to pad batches past the positional-encoding table.
  SmallRun run(synthetic(32, 3), /*max_len=*/20);
  Checkpoint checkpoint = run.make();
  const Batch batch = make_batch(run.examples, {0, 1, 2}, 20);
  BOOST_TEST(batch.tokens.shape()[1] == 20);  // 19 or 20 tokens, not rounded up to 32
  std::ostringstream progress;
  const TrainingLog log = train(checkpoint, run.examples, progress, {.max_steps = 2});
  BOOST_TEST(std::isfinite(log.epoch_loss.at(0)));
  expect_error<ValueError>([&] { train(checkpoint, {}, progress); }, "train: no examples to train on");
  expect_error<ValueError>([&] { make_batch(run.examples, {0}, 8); },
                           "make_batch: an example has 20 tokens, more than max_len 8");
}

BOOST_AUTO_TEST_CASE(a_nan_loss_stops_training_before_the_step_and_names_it) {
  SmallRun run(synthetic(64, 4));
  Checkpoint checkpoint = run.make();
  std::ostringstream progress;
  train(checkpoint, run.examples, progress, {.max_steps = 1});
  // Weights gone bad (as after a divergent step): the loss is NaN, and the weights must not change.
  checkpoint.model->head->bias.data().fill_(std::numeric_limits<double>::quiet_NaN());
  const Tensor before = checkpoint.model->head->weight.data().clone();
  expect_error<Error>([&] { train(checkpoint, run.examples, progress); },
                      "train: step 1: the loss is nan; stopping without taking the step (try a lower --lr)");
  BOOST_TEST(eq(checkpoint.model->head->weight.data(), before).to_vector() ==
             std::vector<double>(before.numel(), 1.0));
  // A prediction from such a model is NaN, not a confident 0 or 1.
  BOOST_TEST(std::isnan(positive_probabilities(*checkpoint.model, run.examples).at(0)));
}

BOOST_AUTO_TEST_CASE(sparse_embedding_tables_move_only_the_rows_a_batch_looked_up) {
  // "zebra" is in the vocabulary but in no training example. With row-sparse tables (the default) its
  // row is never in a gradient, and SparseAdam leaves it exactly as it was; with dense ones, AdamW moves
  // every row (weight decay).
  std::vector<Review> reviews = synthetic(48, 3);
  reviews.push_back({"zebra zebra great", 1});
  SmallRun run(reviews);
  run.examples.pop_back();
  const int64_t zebra = run.vocabulary.id("zebra"), great = run.vocabulary.id("great");
  BOOST_REQUIRE(zebra != Vocabulary::kUnk);
  for (const bool sparse : {true, false}) {
    run.extended.sparse_embeddings = sparse;
    manual_seed(2);
    Checkpoint checkpoint = run.make();
    const Tensor& table = checkpoint.model->encoder->embedding->weight.data();
    const std::vector<double> zebra_before = table.select(0, zebra).to_vector(),
                              great_before = table.select(0, great).to_vector();
    std::ostringstream progress;
    const TrainingLog log = train(checkpoint, run.examples, progress);
    BOOST_TEST(log.steps == 3);
    BOOST_TEST((table.select(0, great).to_vector() != great_before));
    BOOST_TEST((table.select(0, zebra).to_vector() == zebra_before) == sparse, "sparse " << sparse);
  }
  // Pretraining's tied output layer needs a dense token table, and says so.
  run.extended.sparse_embeddings = true;
  run.extended.pretrain_epochs = 1;
  expect_error_containing<ValueError>([&] { run.make(); },
                                      "sparse_embeddings does not go with pretrain_epochs > 0 (train with "
                                      "--dense-embeddings)");
}

BOOST_AUTO_TEST_SUITE_END()
