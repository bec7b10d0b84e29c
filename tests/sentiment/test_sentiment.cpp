// The sentiment example: text handling, data loading, batching, and a short training run.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include "examples/sentiment/pretraining.h"
#include "examples/sentiment/training.h"
#include "minigrad/tensor/file_io.h"
#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;
using namespace sentiment;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

// A folder shaped like aclImdb, made fresh for each test that needs it.
struct TinyImdb {
  fs::path root = fs::temp_directory_path() / ("tiny_imdb_" + std::to_string(::getpid()));
  TinyImdb() {
    fs::remove_all(root);
    write(root / "train/pos/0_9.txt", "A great film, I loved it.");
    write(root / "train/pos/1_8.txt", "Wonderful acting<br />and a great story!");
    write(root / "train/neg/0_2.txt", "Awful. I hated every minute.");
    write(root / "train/neg/1_1.txt", "");                         // empty: skipped
    fs::create_directories(root / "train/neg/2_1.txt");            // a folder, not readable as a file
    write(root / "train/neg/3_3.txt", "A boring \xff\xfe mess.");  // not UTF-8: must not matter
    write(root / "train/neg/notes.md", "not a review");            // not .txt: ignored
    write(root / "test/pos/0_10.txt", "Great!");
    write(root / "test/neg/0_1.txt", "Awful!");
  }
  ~TinyImdb() { fs::remove_all(root); }
};

// Reviews whose label a bag of words can learn: "great"/"awful" among neutral filler.
std::vector<Review> synthetic_reviews(int64_t n, Generator& g) {
  const std::vector<std::string> filler = {"the", "movie", "plot", "actor", "scene",
                                           "was", "a",     "and",  "it",    "story"};
  std::vector<Review> out;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = i % 2;
    std::string text;
    for (int w = 0; w < 12; ++w) text += filler[g.next_below(filler.size())] + " ";
    text += label ? "great great" : "awful awful";
    for (int w = 0; w < 6; ++w) text += " " + filler[g.next_below(filler.size())];
    out.push_back({text, label});
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sentiment_example)

BOOST_AUTO_TEST_CASE(tokenizer_on_hand_written_reviews) {
  using Tokens = std::vector<std::string>;
  BOOST_TEST(tokenize("Not bad.<br />I LOVED it!") == (Tokens{"not", "bad", ".", "i", "loved", "it", "!"}));
  BOOST_TEST(tokenize("I didn't like it... at ALL!!") ==
             (Tokens{"i", "didn't", "like", "it", ".", ".", ".", "at", "all", "!", "!"}));
  BOOST_TEST(tokenize("'Quoted' (10/10)") == (Tokens{"'", "quoted", "'", "(", "10", "/", "10", ")"}));
  BOOST_TEST(tokenize("Café crème") == (Tokens{"café", "crème"}));  // UTF-8 letters stay inside words
  // Bytes that are not UTF-8 become U+FFFD (EF BF BD), inside the word they were in.
  BOOST_TEST(tokenize("bad\xff\xfe bytes\x80") ==
             (Tokens{"bad\xef\xbf\xbd\xef\xbf\xbd", "bytes\xef\xbf\xbd"}));
  BOOST_TEST(tokenize("  \t\n ").empty());
  BOOST_TEST(tokenize("<br /><br />ok") == (Tokens{"ok"}));
}

BOOST_AUTO_TEST_CASE(vocabulary_keeps_frequent_tokens_in_a_fixed_order) {
  const std::vector<std::vector<std::string>> docs = {
      {"good", "film", "good"}, {"bad", "film", "good"}, {"rare"}};
  const Vocabulary v = Vocabulary::build(docs, /*max_size=*/10, /*min_freq=*/2);
  BOOST_TEST(v.tokens() ==
             (std::vector<std::string>{"<pad>", "<unk>", "good", "film"}));  // by count, then name
  BOOST_TEST(v.id("good") == 2);
  BOOST_TEST(v.id("rare") == Vocabulary::kUnk);
  BOOST_TEST(v.id("never seen") == Vocabulary::kUnk);
  BOOST_TEST(Vocabulary::build(docs, 3, 1).tokens() == (std::vector<std::string>{"<pad>", "<unk>", "good"}));
  BOOST_TEST(Vocabulary::build(docs, 10, 1).size() == 6);  // ties (bad, rare: once each) by name
  BOOST_TEST(Vocabulary::build(docs, 10, 1).token(4) == "bad");
  expect_error<ValueError>(
      [] {
        Vocabulary({"<pad>", "<unk>", "a", "a"});
      },
      "Vocabulary: token 'a' appears twice");
}

BOOST_AUTO_TEST_CASE(encoding_truncates_head_and_tail) {
  const Vocabulary v({"<pad>", "<unk>", "a", "b", "c", "d", "e", "f"});
  const std::vector<Example> e = encode({{"a b c d e f", 1}, {"", 0}, {"a zzz", 0}}, v, 4);
  BOOST_TEST(e[0].ids == (std::vector<int64_t>{2, 3, 6, 7}));  // first two and last two
  BOOST_TEST(e[0].label == 1);
  BOOST_TEST(e[1].ids == (std::vector<int64_t>{Vocabulary::kUnk}));  // an empty review is one <unk>
  BOOST_TEST(e[2].ids == (std::vector<int64_t>{2, Vocabulary::kUnk}));
}

BOOST_AUTO_TEST_CASE(loader_reads_the_aclimdb_layout_and_counts_what_it_skips) {
  TinyImdb imdb;
  const LoadReport train = load_imdb_split(imdb.root, "train");
  BOOST_TEST(train.reviews.size() == 4u);
  BOOST_TEST(train.skipped == 2);           // the empty file and the unreadable one
  BOOST_TEST(train.reviews[0].label == 0);  // negatives first, by file name
  BOOST_TEST(train.reviews[0].text == "Awful. I hated every minute.");
  BOOST_TEST(train.reviews[0].number == 0);  // from 0_2.txt
  BOOST_TEST(train.reviews[1].number == 3);  // 3_3.txt
  BOOST_TEST(train.reviews[3].label == 1);
  BOOST_TEST(load_imdb_split(imdb.root, "test").reviews.size() == 2u);
  expect_error_containing<Error>([&] { load_imdb_split(imdb.root, "unsup"); },
                                 "load_imdb: no folder " + (imdb.root / "unsup/neg").string());
}

BOOST_AUTO_TEST_CASE(tsv_files_in_the_uci_format) {
  const fs::path file = fs::temp_directory_path() / "sentences_test.txt";
  write(file, "So good!\t1\r\nTerrible service.\t0\nno label here\n\nAlso\tbad\t0\n");
  const LoadReport r = load_tsv(file);
  BOOST_TEST(r.reviews.size() == 3u);
  BOOST_TEST(r.reviews[2].text == "Also\tbad");  // the label is after the last tab
  BOOST_TEST(r.skipped == 1);
  fs::remove(file);
  expect_error<Error>([] { load_tsv("/nonexistent.txt"); },
                      "load_tsv: /nonexistent.txt: cannot open the file: No such file or directory");
}

BOOST_AUTO_TEST_CASE(batches_pad_and_cover_every_review_once) {
  Generator g(1);
  std::vector<Example> examples;
  for (int64_t i = 0; i < 100; ++i)
    examples.push_back({std::vector<int64_t>(static_cast<size_t>(1 + i % 37), 2), i % 2});
  const auto batches = training_batches(examples, 16, g);
  std::vector<int> seen(100, 0);
  for (const auto& b : batches)
    for (size_t i : b) ++seen[i];
  BOOST_TEST(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  Generator same(1);
  BOOST_TEST(training_batches(examples, 16, same) == batches);  // same seed, same order
  const Batch batch = make_batch(examples, {3, 40}, 512);       // lengths 4 and 4
  BOOST_TEST(batch.tokens.shape() == (Shape{2, 16}));           // padded up to a multiple of 16
  expect_equal(batch.lengths, {4, 4});
  BOOST_TEST(batch.tokens.at({0, 4}) == Vocabulary::kPad);
  BOOST_TEST(batch.token_count == 8);
}

BOOST_AUTO_TEST_CASE(evaluation_batches_go_longest_first_within_a_token_budget) {
  // 300 reviews of up to 3,000 tokens, and 300 of 1 to 10: long reviews come a few to a batch, short
  // ones as many as the batch size allows.
  std::vector<Example> examples;
  for (int64_t i = 0; i < 600; ++i) {
    const int64_t length = i < 300 ? 1 + (i * 97) % 3000 : 1 + i % 10;
    examples.push_back({std::vector<int64_t>(static_cast<size_t>(length), 2), i % 2});
  }
  const auto batches = evaluation_batches(examples, 256);
  std::vector<int> seen(examples.size(), 0);
  size_t previous = std::numeric_limits<size_t>::max();
  for (const auto& b : batches) {
    BOOST_TEST_REQUIRE(!b.empty());
    BOOST_TEST(b.size() <= 256u);
    const size_t longest = examples[b.front()].ids.size();
    if (b.size() > 1) BOOST_TEST(static_cast<int64_t>(b.size() * longest) <= kEvaluationTokens);
    for (size_t i : b) {
      ++seen[i];
      BOOST_TEST(examples[i].ids.size() <= previous);  // longest first, throughout
      previous = examples[i].ids.size();
    }
  }
  BOOST_TEST(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  BOOST_TEST(batches.front().size() == 2u);  // of 2,9xx tokens: 8,192 holds two
  const auto largest = std::max_element(batches.begin(), batches.end(),
                                        [](const auto& a, const auto& b) { return a.size() < b.size(); });
  BOOST_TEST(largest->size() == 256u);  // the short reviews fill whole batches
}

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
  Config config;
  config.num_hiddens = 16;
  config.num_heads = 2;
  config.ffn_num_hiddens = 32;
  config.max_len = 32;
  config.batch_size = 16;
  config.epochs = 5;  // 40 steps
  config.lr = 5e-3;
  // The configuration this test was written for: no n-gram table (tested on its own below) and dropout
  // 0.1. Forty steps on 128 reviews are too few for the defaults' 65,536 fresh n-gram rows.
  config.ngram_buckets = 0;
  config.nb_max = 0;
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

namespace {

// A small model and data it can learn, for the reliability tests below.
struct SmallRun {
  Config config;
  std::vector<Review> reviews;
  Vocabulary vocabulary{{"<pad>", "<unk>"}};
  std::vector<Example> examples;

  explicit SmallRun(std::vector<Review> texts, int64_t max_len = 32) : reviews(std::move(texts)) {
    config.num_hiddens = 16;
    config.num_heads = 2;
    config.ffn_num_hiddens = 32;
    config.max_len = max_len;
    config.batch_size = 16;
    config.epochs = 1;
    config.ngram_buckets = 64;  // the n-gram table too: resuming must restore it exactly as well
    config.nb_max = 0;          // no NB branch (a test of its own has one)
    std::vector<std::vector<std::string>> tokens;
    for (const Review& r : reviews) tokens.push_back(tokenize(r.text));
    vocabulary = Vocabulary::build(tokens, 100, 1);
    examples = encode(reviews, vocabulary, config.max_len);
  }
  Checkpoint make() const {
    return Checkpoint{config, vocabulary,
                      std::make_shared<SentimentModel>(config, vocabulary.size(),
                                                       build_ngram_vocabulary(config, examples))};
  }
};

std::vector<Review> synthetic(int64_t n, uint64_t seed) {
  Generator g(seed);
  return synthetic_reviews(n, g);
}

struct SimulatedCrash : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace

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
  const Checkpoint reloaded = Checkpoint::load(dir);
  BOOST_TEST(reloaded.vocabulary.tokens() == checkpoint.vocabulary.tokens());
  BOOST_TEST(reloaded.vocabulary.id("caf\xef\xbf\xbd") > Vocabulary::kUnk);  // "café" in Latin-1
  fs::remove_all(dir);
  // valid_utf8 keeps every well-formed sequence and replaces each bad byte.
  BOOST_TEST(valid_utf8("Café ☕ 😀") == "Café ☕ 😀");
  BOOST_TEST(valid_utf8("\xc0\xaf") == "\xef\xbf\xbd\xef\xbf\xbd");                  // overlong '/'
  BOOST_TEST(valid_utf8("\xed\xa0\x80") == "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate
  BOOST_TEST(valid_utf8("\xf4\x90\x80\x80").size() == 12u);                          // above U+10FFFF
  BOOST_TEST(valid_utf8("ab\xe2\x82") == "ab\xef\xbf\xbd\xef\xbf\xbd");              // cut short
}

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
    const Checkpoint loaded = Checkpoint::load(dir);  // always a whole checkpoint
    BOOST_TEST((positive_probabilities(*loaded.model, run.examples) == (swapped ? new_p : old_p)),
               "after a failure at '" << steps[k] << "'");
  }
  for (const auto& entry : fs::directory_iterator(dir.parent_path())) {  // clean up what crashes left
    if (entry.path().filename().string().rfind("." + dir.filename().string(), 0) == 0) fs::remove_all(entry);
  }
  fs::remove_all(dir);
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

BOOST_AUTO_TEST_CASE(checkpoints_are_saved_during_training_when_asked) {
  SmallRun run(synthetic(64, 5));
  Checkpoint checkpoint = run.make();
  std::vector<int64_t> saved_at;
  std::ostringstream progress;
  train(checkpoint, run.examples, progress,
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
  train(straight, run.examples, progress,
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
        train(resumed, run.examples, progress, {.resume = &file, .resume_source = "state"});
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
        train(other, run.examples, progress,
              {.resume = &file, .resume_source = "state.safetensors", .ranks = two});
      },
      "resume: state.safetensors: saved by a run of 1 rank(s); this run has 2 (resume with the same "
      "number of processes)");
}

namespace {

// The cost of a share [begin, end) of a batch: its size × the cost of a review padded to its longest.
int64_t share_cost(const std::vector<int64_t>& lengths, int64_t begin, int64_t end,
                   const std::function<int64_t(int64_t)>& cost) {
  if (begin == end) return 0;
  return (end - begin) * cost(*std::max_element(lengths.begin() + begin, lengths.begin() + end));
}

}  // namespace

BOOST_AUTO_TEST_CASE(balanced_cuts_leave_the_costliest_share_as_cheap_as_any_cutting_can) {
  const Config config;
  const auto cost = [&](int64_t longest) { return review_cost(config, longest); };
  std::mt19937_64 random(11);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t n = 2 + static_cast<int64_t>(random() % 14);
    std::vector<int64_t> lengths(static_cast<size_t>(n));
    for (int64_t& length : lengths) length = 1 + static_cast<int64_t>(random() % 80);
    if (trial % 2 == 0) std::sort(lengths.begin(), lengths.end());  // as training batches come
    // Two and three shares, against every way of cutting into non-empty contiguous shares.
    int64_t best2 = INT64_MAX, best3 = INT64_MAX;
    for (int64_t a = 1; a < n; ++a) {
      best2 = std::min(best2, std::max(share_cost(lengths, 0, a, cost), share_cost(lengths, a, n, cost)));
      for (int64_t b = a + 1; b < n; ++b) {
        best3 = std::min(best3, std::max({share_cost(lengths, 0, a, cost), share_cost(lengths, a, b, cost),
                                          share_cost(lengths, b, n, cost)}));
      }
    }
    for (int world : {2, 3}) {
      if (world > n) continue;
      const std::vector<int64_t> cuts = balanced_cuts(lengths, world, cost);
      BOOST_TEST_REQUIRE(cuts.size() == static_cast<size_t>(world) + 1);
      BOOST_TEST(cuts.front() == 0);
      BOOST_TEST(cuts.back() == n);
      int64_t costliest = 0;
      for (int r = 0; r < world; ++r) {
        BOOST_TEST(cuts[static_cast<size_t>(r)] < cuts[static_cast<size_t>(r) + 1],
                   "share " << r << " is empty");
        costliest = std::max(costliest, share_cost(lengths, cuts[static_cast<size_t>(r)],
                                                   cuts[static_cast<size_t>(r) + 1], cost));
      }
      BOOST_TEST(costliest == (world == 2 ? best2 : best3), "trial " << trial << ", " << world << " shares");
    }
  }
  // Fewer reviews than ranks: one each, then empty shares.
  BOOST_TEST((balanced_cuts(std::vector<int64_t>{5, 9}, 3, cost) == std::vector<int64_t>{0, 1, 2, 2}));
  BOOST_CHECK_THROW(balanced_cuts(std::vector<int64_t>{5}, 0, cost), ValueError);
}

BOOST_AUTO_TEST_CASE(a_rank_with_longer_reviews_takes_fewer_of_them) {
  // 40 reviews padded to 112 tokens and 24 to 128: in halves of 32, the second rank pads 8 short reviews
  // to 128 along with the long ones, while the first could take some of them for less.
  const Config config;
  std::vector<int64_t> lengths(40, 100);
  lengths.resize(64, 120);
  const auto cost = [&](int64_t longest) { return review_cost(config, longest); };
  const std::vector<int64_t> cuts = balanced_cuts(lengths, 2, cost);
  BOOST_TEST(cuts[1] > 32);  // the first rank takes more of the short reviews
  const int64_t even = std::max(share_cost(lengths, 0, 32, cost), share_cost(lengths, 32, 64, cost));
  const int64_t balanced =
      std::max(share_cost(lengths, 0, cuts[1], cost), share_cost(lengths, cuts[1], 64, cost));
  BOOST_TEST(balanced < even);
  // The ranks take their shares from the same cuts.
  const auto [begin0, end0] = Ranks{.rank = 0, .world = 2}.share(lengths, cost);
  const auto [begin1, end1] = Ranks{.rank = 1, .world = 2}.share(lengths, cost);
  BOOST_TEST(begin0 == 0);
  BOOST_TEST(end0 == cuts[1]);
  BOOST_TEST(begin1 == cuts[1]);
  BOOST_TEST(end1 == 64);
}

BOOST_AUTO_TEST_CASE(ranks_take_contiguous_equal_shares_of_the_examples) {
  for (int world = 1; world <= 3; ++world) {
    for (int64_t size = 0; size <= 7; ++size) {
      int64_t next = 0;  // where the next rank's share must begin
      for (int rank = 0; rank < world; ++rank) {
        const auto [begin, end] = Ranks{.rank = rank, .world = world}.share(size);
        BOOST_TEST(begin == next, "rank " << rank << " of " << world << ", batch of " << size);
        // As equal as possible: the first size % world ranks take one more.
        BOOST_TEST(end - begin == size / world + (rank < size % world ? 1 : 0));
        next = end;
      }
      BOOST_TEST(next == size, "world " << world << ", batch of " << size);  // the whole batch
    }
  }
}

BOOST_AUTO_TEST_CASE(validation_holds_out_half_of_each_label_in_blocks_fixed_by_its_seed) {
  // Reviews numbered 0..159 (100 negatives, then positives), given in reverse order.
  std::vector<Review> reviews;
  for (int i = 159; i >= 0; --i) reviews.push_back({"review " + std::to_string(i), i < 100 ? 0 : 1, i});
  const Split split = hold_out(reviews, 21, 7, 4);
  BOOST_REQUIRE(split.validation.size() == 21u);
  BOOST_TEST(split.training.size() == 139u);
  int64_t positives = 0;
  std::set<int64_t> blocks[2];  // the blocks of 4 consecutive numbers (per label) that were held out
  for (const Review& r : split.validation) {
    positives += r.label;
    blocks[r.label].insert((r.number - (r.label ? 100 : 0)) / 4);
  }
  BOOST_TEST(positives == 11);         // 10 negatives, 11 positives
  BOOST_TEST(blocks[0].size() == 3u);  // 4 + 4 + 2 negatives: two whole blocks and part of a third
  BOOST_TEST(blocks[1].size() == 3u);  // 4 + 4 + 3 positives
  // Disjoint, together all of them; the training part keeps the given order.
  std::set<std::string> seen;
  for (const Review& r : split.validation) seen.insert(r.text);
  for (const Review& r : split.training) BOOST_TEST(seen.insert(r.text).second, r.text << " is in both");
  BOOST_TEST(seen.size() == reviews.size());
  BOOST_TEST(std::is_sorted(split.training.begin(), split.training.end(),
                            [&](const Review& a, const Review& b) { return a.number > b.number; }));
  // The same seed holds out the same reviews; another seed, others.
  auto texts = [](const std::vector<Review>& v) {
    std::vector<std::string> out;
    for (const Review& r : v) out.push_back(r.text);
    return out;
  };
  BOOST_TEST(texts(hold_out(reviews, 21, 7, 4).validation) == texts(split.validation));
  BOOST_TEST(texts(hold_out(reviews, 21, 8, 4).validation) != texts(split.validation));
  BOOST_TEST(hold_out(reviews, 0, 7).training.size() == 160u);
  expect_error<ValueError>([&] { hold_out(reviews, 120, 7); },
                           "hold_out: cannot hold 120 reviews out for validation: 60 are positive (use a "
                           "smaller --validation)");
}

BOOST_AUTO_TEST_CASE(ngrams_are_hashed_to_fixed_rows_and_padding_gets_row_zero) {
  // Two reviews, the second of length 3: 5 6 7 5 6 | 5 6 7, padded with 0.
  const Tensor tokens = Tensor::from_vector(std::vector<int64_t>{5, 6, 7, 5, 6, 5, 6, 7, 0, 0}, {2, 5});
  const Tensor lengths = Tensor::from_vector(std::vector<int64_t>{5, 3}, {2});
  const Tensor rows = ngram_rows(tokens, lengths, 1000, 3);  // (2, 5, 2): bigram, trigram
  BOOST_REQUIRE(rows.shape() == (Shape{2, 5, 2}));
  auto row = [&](int64_t b, int64_t t, int64_t k) { return static_cast<int64_t>(rows.at({b, t, k})); };
  // No n-gram ends at the first token, no trigram at the second, none in the padding.
  for (int64_t b = 0; b < 2; ++b) BOOST_TEST((row(b, 0, 0) == 0 && row(b, 0, 1) == 0 && row(b, 1, 1) == 0));
  for (int64_t t = 3; t < 5; ++t) BOOST_TEST((row(1, t, 0) == 0 && row(1, t, 1) == 0));
  // The same n-gram gets the same row wherever it is, and rows are in [1, 1000).
  BOOST_TEST(row(0, 1, 0) == row(0, 4, 0));  // "5 6"
  BOOST_TEST(row(0, 1, 0) == row(1, 1, 0));
  BOOST_TEST(row(0, 2, 1) == row(1, 2, 1));  // "5 6 7"
  BOOST_TEST(row(0, 4, 1) != row(0, 2, 1));  // "7 5 6" is another trigram
  BOOST_TEST(row(0, 2, 0) != row(0, 1, 0));  // "6 7" another bigram
  BOOST_TEST(row(0, 3, 0) != row(0, 1, 0));  // "7 5" another bigram, and not "5 7" reversed
  for (int64_t v : rows.to_vector<int64_t>()) BOOST_TEST((v >= 0 && v < 1000));
  BOOST_TEST(ngram_rows(tokens, lengths, 1000, 2).shape() == (Shape{2, 5, 1}));
  expect_error<ShapeError>(
      [&] { ngram_rows(tokens.reshape({10}), lengths, 1000, 2); },
      "ngram_rows: expects int64 tokens (B, T) and lengths (B), got tokens [10] and lengths [2]");
  BOOST_TEST(ngram_rows(tokens, lengths, 1000, 2).select(2, 0).to_vector<int64_t>() ==
             rows.select(2, 0).contiguous().to_vector<int64_t>());
}

BOOST_AUTO_TEST_CASE(the_ngrams_in_the_most_documents_get_rows_of_their_own) {
  // Bigrams: "5 6" is in all three documents (twice in the first, counted once), "6 7" in two, "7 5" and
  // "6 5" in one. Trigrams: "5 6 7" in two, the others in one.
  const std::vector<int64_t> a = {5, 6, 7, 5, 6}, b = {5, 6, 7}, c = {6, 5, 6};
  const NgramVocabulary v = NgramVocabulary::build({a, b, c}, 3, 4);  // 3 rows besides row 0
  // Ties ("5 6 7" and "6 7", two documents each) go in the order of their ids.
  BOOST_TEST((v.ngrams() == std::vector<std::vector<int64_t>>{{5, 6}, {5, 6, 7}, {6, 7}}));
  BOOST_TEST(v.row(a.data(), 2) == 1);
  BOOST_TEST(v.row(a.data() + 2, 2) == 0);  // "7 5": no row
  BOOST_TEST(NgramVocabulary::build({a, b, c}, 2, 1).ngrams().empty());

  // As rows of the table: the first review "5 6 7 5 6", the second "6 5 6" then padding.
  const Tensor tokens = Tensor::from_vector(std::vector<int64_t>{5, 6, 7, 5, 6, 6, 5, 6, 0, 0}, {2, 5});
  const Tensor lengths = Tensor::from_vector(std::vector<int64_t>{5, 3}, {2});
  const Tensor rows = v.rows(tokens, lengths, 3);  // (2, 5, 2): the bigram and the trigram ending at t
  BOOST_REQUIRE(rows.shape() == (Shape{2, 5, 2}));
  BOOST_TEST(rows.to_vector<int64_t>() == (std::vector<int64_t>{0, 0, 1, 0, 3, 2, 0, 0, 1, 0,  //
                                                                0, 0, 0, 0, 1, 0, 0, 0, 0, 0}));
  expect_error<ShapeError>(
      [&] { v.rows(tokens.reshape({10}), lengths, 2); },
      "NgramVocabulary::rows: expects int64 tokens (B, T) and lengths (B), got tokens [10] and lengths [2]");

  // Saved as text and read back through the vocabulary; what does not read back says why.
  const Vocabulary words({"<pad>", "<unk>", "a", "b", "c", "not", "so", "good"});
  const nlohmann::json text = v.to_json(words);
  BOOST_TEST(text.dump() == R"(["not so","not so good","so good"])");
  BOOST_TEST((NgramVocabulary::from_json(text, words, "ngrams.json").ngrams() == v.ngrams()));
  expect_error<Error>(
      [&] { NgramVocabulary::from_json(nlohmann::json::array({"not bad"}), words, "ngrams.json"); },
      "checkpoint: ngrams.json: entry 0 (\"not bad\") has \"bad\", which is not in the "
      "vocabulary");
  expect_error<Error>(
      [&] {
        NgramVocabulary::from_json(nlohmann::json::array({"so", "not"}), words, "ngrams.json");
      },
      "checkpoint: ngrams.json: entry 0 is not 2 to 5 tokens");
  expect_error<Error>(
      [&] {
        NgramVocabulary::from_json(nlohmann::json::array({"so good", "so good"}), words, "ngrams.json");
      },
      "checkpoint: ngrams.json: n-gram 1 is listed twice");
  expect_error<Error>(
      [&] {
        NgramVocabulary::from_json(nlohmann::json::array({nlohmann::json::array({"so"})}), words,
                                   "ngrams.json");
      },
      "checkpoint: ngrams.json: entry 0 is not a string");
}

BOOST_AUTO_TEST_CASE(a_model_with_ngrams_learns_word_order_and_reports_validation_per_epoch) {
  // The label is in the order of two words: "good not" is positive, "not good" negative — a bag of words
  // cannot tell them apart, a bigram can.
  Generator g(3);
  std::vector<Review> reviews;
  const std::vector<std::string> filler = {"the", "movie", "plot", "actor", "scene", "was", "a", "and"};
  for (int i = 0; i < 192; ++i) {
    std::string text;
    for (int w = 0; w < 6; ++w) text += filler[g.next_below(filler.size())] + " ";
    text += i % 2 ? "good not" : "not good";
    for (int w = 0; w < 4; ++w) text += " " + filler[g.next_below(filler.size())];
    reviews.push_back({text, i % 2});
  }
  const Split split = hold_out(reviews, 32, 0);
  SmallRun run(split.training);
  run.config.epochs = 6;
  run.config.lr = 5e-3;
  run.config.dropout = 0;
  const std::vector<Example> validation = encode(split.validation, run.vocabulary, run.config.max_len);
  Checkpoint checkpoint = run.make();
  BOOST_REQUIRE(checkpoint.model->ngrams != nullptr);
  std::ostringstream progress;
  const TrainingLog log = train(checkpoint, run.examples, progress, {.validation = &validation});
  BOOST_REQUIRE(log.epoch_validation.size() == 6u);
  BOOST_TEST(log.epoch_validation.back().count == 32);
  BOOST_TEST(log.epoch_validation.back().accuracy > 0.95,
             "validation accuracy " << log.epoch_validation.back().accuracy);
  BOOST_TEST(log.epoch_validation.back().loss < log.epoch_validation.front().loss);
  BOOST_TEST(progress.str().find("epoch 6: training loss") != std::string::npos, progress.str());
  // The padding row of the n-gram table never learns.
  const Tensor padding = checkpoint.model->ngrams->weight.data().select(0, 0);
  BOOST_TEST(padding.to_vector() == std::vector<double>(16, 0.0));
  // Saved and loaded with its n-gram table; a config.json without the n-gram fields (as written before
  // they existed) describes a model without them, and is refused for these weights.
  const fs::path dir = fs::temp_directory_path() / ("sentiment_ngrams_" + std::to_string(::getpid()));
  checkpoint.save(dir);
  BOOST_TEST(positive_probabilities(*Checkpoint::load(dir).model, validation) ==
             positive_probabilities(*checkpoint.model, validation));
  // Its n-grams are saved as text, the most common first; a list that is not the one it trained with
  // (the same length) is refused, as is a missing one.
  const nlohmann::json saved = nlohmann::json::parse(read_file("test", (dir / "ngrams.json").string()));
  BOOST_REQUIRE(saved.is_array());
  BOOST_TEST(saved.size() == checkpoint.model->ngram_vocabulary().ngrams().size());
  BOOST_TEST((std::find(saved.begin(), saved.end(), "not good") != saved.end()));
  nlohmann::json reordered = saved;
  std::swap(reordered[0], reordered[1]);
  write(dir / "ngrams.json", reordered.dump());
  expect_error_containing<Error>([&] { Checkpoint::load(dir); }, "model.safetensors was trained with");
  fs::remove(dir / "ngrams.json");
  expect_error_containing<Error>([&] { Checkpoint::load(dir); }, "ngrams.json");
  write(dir / "ngrams.json", saved.dump());
  BOOST_TEST(positive_probabilities(*Checkpoint::load(dir).model, validation) ==
             positive_probabilities(*checkpoint.model, validation));
  nlohmann::json old = Config(run.config).to_json();
  old.erase("ngram_buckets");
  old.erase("ngram_max");
  old.erase("ngram_vocabulary");
  old.erase("validation");
  old.erase("validation_seed");
  write(dir / "config.json", old.dump());
  expect_error_containing<Error>([&] { Checkpoint::load(dir); },
                                 "ngram_buckets=64 ngram_max=2 ngram_vocabulary=1, but config.json says");
  fs::remove_all(dir);
}

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
    run.config.sparse_embeddings = sparse;
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
  run.config.sparse_embeddings = true;
  run.config.pretrain_epochs = 1;
  Checkpoint checkpoint = run.make();
  std::ostringstream progress;
  expect_error_containing<ValueError>([&] { pretrain(checkpoint, run.examples, progress); },
                                      "sparse_embeddings does not go with pretrain_epochs > 0 (train with "
                                      "--dense-embeddings)");
}

BOOST_AUTO_TEST_CASE(nb_ratios_are_the_smoothed_log_count_ratios_of_the_training_reviews) {
  // Positive: "good film", "good"; negative: "bad film". Counts of reviews (positive, negative), plus
  // α = 1: good (3, 1), film (2, 2), bad (1, 2); ‖p‖₁ = 6, ‖q‖₁ = 5.
  const std::vector<std::vector<std::string>> reviews = {{"good", "film"}, {"good"}, {"bad", "film"}};
  const std::vector<int64_t> labels = {1, 1, 0};
  const NbFeatures unigrams = NbFeatures::build(reviews, labels, 1, 10, 1);
  BOOST_TEST(unigrams.kept() == 3);
  BOOST_TEST(unigrams.keys().numel() == 10);
  auto ratios_of = [](const NbFeatures& nb, const std::vector<std::string>& tokens) {
    const NbFeatures::Present present = nb.present(tokens);
    std::vector<double> r(present.ratios.begin(), present.ratios.end());
    std::sort(r.begin(), r.end());
    return r;
  };
  const double good = std::log((3.0 / 6) / (1.0 / 5)), film = std::log((2.0 / 6) / (2.0 / 5)),
               bad = std::log((1.0 / 6) / (2.0 / 5));
  // An n-gram counts once per review, and an unknown word has no row.
  const std::vector<double> got = ratios_of(unigrams, {"good", "zebra", "good", "film"});
  BOOST_REQUIRE(got.size() == 2u);
  BOOST_TEST(got[0] == film, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(got[1] == good, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(ratios_of(unigrams, {"bad"})[0] == bad, boost::test_tools::tolerance(1e-6));
  const NbFeatures::Present present = unigrams.present({"film", "good", "bad"});
  BOOST_TEST(std::is_sorted(present.rows.begin(), present.rows.end()));
  BOOST_TEST((std::set<int64_t>(present.rows.begin(), present.rows.end()) == std::set<int64_t>{1, 2, 3}));
  // Bigrams as well: "good film" and "bad film" get rows of their own.
  BOOST_TEST(NbFeatures::build(reviews, labels, 2, 10, 1).present({"good", "film"}).rows.size() == 3u);
  // At least 2 reviews: "bad" has none; a table of 2 rows keeps one n-gram, one of those in the most reviews.
  BOOST_TEST(NbFeatures::build(reviews, labels, 1, 10, 2).present({"bad"}).rows.empty());
  const NbFeatures one = NbFeatures::build(reviews, labels, 1, 2, 1);
  BOOST_TEST(one.kept() == 1);
  BOOST_TEST(one.present({"bad"}).rows.empty());
  // Read back from its tensors, the same rows; a repeated key is refused.
  const NbFeatures reread(unigrams.keys().clone(), unigrams.ratios().clone(), 1);
  BOOST_TEST(reread.present({"film", "good", "bad"}).rows == present.rows);
  Tensor keys = unigrams.keys().clone();
  keys.data_ptr<int64_t>()[2] = keys.data_ptr<int64_t>()[1];
  expect_error<ValueError>([&] { NbFeatures(keys, unigrams.ratios(), 1); },
                           "NbFeatures: the key of row 2 appears twice");
}

BOOST_AUTO_TEST_CASE(the_nb_branch_moves_only_its_reviews_rows_and_reloads_exactly) {
  Generator g(5);
  SmallRun run(synthetic_reviews(64, g));
  run.config.nb_max = 2;
  run.config.nb_rows = 256;
  run.config.nb_min_reviews = 1;
  std::vector<std::vector<std::string>> tokens;
  std::vector<int64_t> labels;
  for (const Review& r : run.reviews) {
    tokens.push_back(tokenize(r.text));
    labels.push_back(r.label);
  }
  NbFeatures nb = NbFeatures::build(tokens, labels, 2, 256, 1);
  BOOST_REQUIRE(nb.kept() > 20);
  BOOST_REQUIRE(nb.kept() < 255);  // rows left unused: no review looks them up
  const std::vector<Example> examples = encode(run.reviews, run.vocabulary, run.config.max_len, &nb);
  BOOST_TEST(!examples[0].nb_rows.empty());
  BOOST_TEST(examples[0].nb_rows.size() == examples[0].nb_ratios.size());
  manual_seed(6);
  Checkpoint checkpoint{
      run.config, run.vocabulary,
      std::make_shared<SentimentModel>(run.config, run.vocabulary.size(),
                                       build_ngram_vocabulary(run.config, examples), std::move(nb))};
  const Tensor& table = checkpoint.model->nb->weight.data();
  BOOST_TEST(sum(abs(table)).item() == 0.0);  // the branch starts silent
  std::ostringstream progress;
  train(checkpoint, examples, progress);
  const int64_t kept = checkpoint.model->nb_features()->kept();
  BOOST_TEST(sum(abs(table.slice(0, 1, kept + 1))).item() > 0.0);
  BOOST_TEST(sum(abs(table.slice(0, kept + 1, 256))).item() == 0.0);  // never looked up, never moved
  BOOST_TEST(sum(abs(table.select(0, 0))).item() == 0.0);             // the padding row
  // Saved and loaded: the same n-grams, ratios and probabilities, to the bit.
  const fs::path dir = fs::temp_directory_path() / ("sentiment_nb_test_" + std::to_string(::getpid()));
  checkpoint.save(dir);
  const Checkpoint reloaded = Checkpoint::load(dir);
  BOOST_REQUIRE(reloaded.model->nb_features() != nullptr);
  const std::vector<Example> again =
      encode(run.reviews, reloaded.vocabulary, reloaded.config.max_len, reloaded.model->nb_features());
  BOOST_TEST(again[3].nb_rows == examples[3].nb_rows);
  BOOST_TEST(positive_probabilities(*reloaded.model, again) ==
             positive_probabilities(*checkpoint.model, examples));
  fs::remove_all(dir);
  // The branch needs its inputs, and says so.
  const Batch batch = make_batch(examples, {0, 1}, run.config.max_len);
  expect_error_containing<ShapeError>(
      [&] { checkpoint.model->forward(batch.tokens, batch.lengths); },
      "SentimentModel: the NB branch expects nb_rows (B, K) int64 and nb_ratios "
      "(B, K) for 2 reviews, got nb_rows none");
}

BOOST_AUTO_TEST_CASE(an_ensemble_averages_its_members_log_odds) {
  SmallRun run(synthetic(48, 9));
  std::ostringstream progress;
  std::vector<Checkpoint> members;
  for (uint64_t seed : {1, 2}) {
    run.config.seed = seed;
    manual_seed(seed);
    members.push_back(run.make());
    train(members.back(), run.examples, progress);
  }
  const Checkpoint &a = members[0], &b = members[1];
  // The log-odds are the logits' difference: σ of them is P(positive).
  const std::vector<double> za = positive_log_odds(*a.model, run.examples),
                            pa = positive_probabilities(*a.model, run.examples);
  for (size_t i = 0; i < za.size(); ++i)
    BOOST_TEST(1 / (1 + std::exp(-za[i])) == pa[i], boost::test_tools::tolerance(1e-6));
  // One member: the model's own accuracy and loss.
  const Evaluation alone = evaluate_ensemble({&a}, run.reviews), direct = evaluate(*a.model, run.examples);
  BOOST_TEST(alone.count == direct.count);
  BOOST_TEST(alone.accuracy == direct.accuracy);
  BOOST_TEST(alone.loss == direct.loss, boost::test_tools::tolerance(1e-5));
  // Two: the mean of their log-odds, and the loss of σ of that.
  const std::vector<double> zb = positive_log_odds(*b.model, run.examples),
                            z = ensemble_log_odds({&a, &b}, run.reviews);
  double loss = 0, correct = 0;
  for (size_t i = 0; i < z.size(); ++i) {
    BOOST_TEST(z[i] == (za[i] + zb[i]) / 2, boost::test_tools::tolerance(1e-12));
    const double p = 1 / (1 + std::exp(-z[i]));
    loss -= std::log(run.reviews[i].label ? p : 1 - p);
    correct += (p > 0.5) == (run.reviews[i].label == 1);
  }
  const Evaluation both = evaluate_ensemble({&a, &b}, run.reviews);
  BOOST_TEST(both.accuracy == correct / static_cast<double>(z.size()));
  BOOST_TEST(both.loss == loss / static_cast<double>(z.size()), boost::test_tools::tolerance(1e-9));
  BOOST_TEST(za != zb);  // two seeds, two models: the average is not trivially one of them
  expect_error<ValueError>([&] { ensemble_log_odds({}, run.reviews); }, "ensemble: needs at least one model");
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
  run.config.ngram_vocabulary = false;
  run.config.pretrain_epochs = 8;
  run.config.sparse_embeddings = false;  // the tied output layer gives the token table a dense gradient
  run.config.pretrain_lr = 1e-2;
  run.config.mask_prob = 0.15;
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
  run.config.pretrain_epochs = 0;
  Checkpoint untouched = run.make();
  BOOST_TEST(pretrain(untouched, run.examples, progress).steps == 0);
}

BOOST_AUTO_TEST_CASE(with_a_moving_average_the_model_ends_averaged_and_resumes_exactly) {
  SmallRun run(synthetic(64, 9));
  run.config.epochs = 2;
  run.config.dropout = 0.1;
  run.config.ema_decay = 0.9;
  manual_seed(run.config.seed);
  Checkpoint straight = run.make();
  std::vector<std::pair<std::string, std::string>> saves;  // weights, training state
  std::ostringstream progress;
  const std::vector<Example> validation(run.examples.begin(), run.examples.begin() + 16);
  const TrainingLog log = train(straight, run.examples, progress,
                                {.checkpoint_every = 3,
                                 .save =
                                     [&](int64_t, const std::string& state) {
                                       saves.emplace_back(optim::serialize_weights(*straight.model), state);
                                     },
                                 .validation = &validation});
  // The validation after the last epoch measured the weights the model ends with: the averages.
  BOOST_TEST(evaluate(*straight.model, validation).loss == log.epoch_validation.back().loss);
  // Saved mid-run (step 3) and resumed into a fresh model: the same final weights.
  manual_seed(77);
  Checkpoint resumed = run.make();
  optim::load_weights(*resumed.model, parse_safetensors(saves.front().first, "weights"), "weights");
  const SafetensorsFile file = parse_safetensors(saves.front().second, "state");
  train(resumed, run.examples, progress, {.resume = &file, .resume_source = "state"});
  const auto expected = straight.model->named_parameters(), got = resumed.model->named_parameters();
  for (size_t i = 0; i < expected.size(); ++i) {
    BOOST_TEST((expected[i].second.data().to_vector() == got[i].second.data().to_vector()),
               expected[i].first);
  }
  // The average differs from the last weights: without it, the same run ends elsewhere.
  run.config.ema_decay = 0;
  manual_seed(run.config.seed);
  Checkpoint last = run.make();
  train(last, run.examples, progress);
  BOOST_TEST(last.model->head->weight.data().to_vector() != straight.model->head->weight.data().to_vector());
  // A state saved with averages does not resume a run without them.
  expect_error<Error>(
      [&] { train(last, run.examples, progress, {.resume = &file, .resume_source = "state"}); },
      "resume: state: holds weight averages (saved with --ema-decay)");
}

BOOST_AUTO_TEST_SUITE_END()
