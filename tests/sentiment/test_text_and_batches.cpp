// The sentiment example's data: the tokenizer, the vocabulary, loading IMDB and sentence files, encoding,
// the validation split, and batches for training and evaluation.
#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "examples/sentiment/batches.h"
#include "examples/sentiment/extras/sentences.h"

#include "test_helpers.h"
#include "tests/sentiment/sentiment_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;
using namespace sentiment;
using namespace sentiment::testing;

namespace {

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

BOOST_AUTO_TEST_CASE(a_training_review_whose_text_is_held_out_is_left_out_of_training) {
  // Reviews numbered 0..79 (40 negatives, then positives), each text "review <n>", and a copy of each
  // numbered 100 higher: the copy is in another block, so a pair is held out whole or split.
  std::vector<Review> reviews;
  for (int i = 0; i < 80; ++i) reviews.push_back({"review " + std::to_string(i), i < 40 ? 0 : 1, i});
  for (int i = 0; i < 80; ++i) reviews.push_back({"review " + std::to_string(i), i < 40 ? 0 : 1, 100 + i});
  const Split split = hold_out(reviews, 20, 3, 4);
  BOOST_REQUIRE(split.validation.size() == 20u);
  std::set<int64_t> held_numbers;
  std::set<std::string> held_texts;
  for (const Review& r : split.validation) {
    held_numbers.insert(r.number);
    held_texts.insert(r.text);
  }
  int64_t split_pairs = 0;  // pairs with one copy held out: the other must leave training
  for (int64_t i = 0; i < 80; ++i) split_pairs += held_numbers.contains(i) != held_numbers.contains(100 + i);
  BOOST_TEST(split_pairs > 0);
  BOOST_TEST(split.duplicates_removed == split_pairs);
  BOOST_TEST(split.training.size() + split.validation.size() +
                 static_cast<size_t>(split.duplicates_removed) ==
             reviews.size());
  for (const Review& r : split.training)
    BOOST_TEST(!held_texts.contains(r.text), r.text << " trains and validates");
  // Without copies nothing is removed.
  reviews.resize(80);
  BOOST_TEST(hold_out(reviews, 20, 3, 4).duplicates_removed == 0);
}

BOOST_AUTO_TEST_SUITE_END()
