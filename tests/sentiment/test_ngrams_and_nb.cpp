// The model's n-gram inputs: hashed rows, the n-gram vocabulary and what it learns, and the NB branch's
// ratios and table.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "examples/sentiment/evaluation.h"
#include "examples/sentiment/extras/predictions.h"
#include "examples/sentiment/training.h"
#include "minigrad/tensor/file_io.h"

#include "test_helpers.h"
#include "tests/sentiment/sentiment_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;
using namespace sentiment;
using namespace sentiment::testing;

BOOST_AUTO_TEST_SUITE(sentiment_example)

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

BOOST_AUTO_TEST_CASE(a_batch_split_between_threads_finds_each_reviews_ngrams_as_alone) {
  // A batch large enough to be split between threads: each review's rows as when it is looked up alone.
  const ThreadCount two(2);
  Generator gen(3);
  std::vector<std::vector<int64_t>> documents(64);
  for (std::vector<int64_t>& d : documents) {
    for (int i = 0; i < 64; ++i) d.push_back(2 + static_cast<int64_t>(gen.next_below(6)));
  }
  const NgramVocabulary many = NgramVocabulary::build({documents.begin(), documents.end()}, 3, 40);
  std::vector<int64_t> all_tokens, all_lengths;
  for (const std::vector<int64_t>& d : documents) {
    all_tokens.insert(all_tokens.end(), d.begin(), d.end());
    all_lengths.push_back(static_cast<int64_t>(gen.next_below(66)) - 1);  // -1 (none) to 64 (all)
  }
  const Tensor batch = Tensor::from_vector(all_tokens, {64, 64});
  const Tensor batch_rows = many.rows(batch, Tensor::from_vector(all_lengths, {64}), 3);  // (64, 64, 2)
  int64_t found = 0;
  for (int64_t i = 0; i < 64; ++i) {
    const Tensor alone = many.rows(batch.slice(0, i, i + 1).contiguous(),
                                   Tensor::from_vector(std::vector<int64_t>{all_lengths[size_t(i)]}, {1}), 3);
    const std::vector<int64_t> want = alone.to_vector<int64_t>();
    BOOST_TEST(batch_rows.select(0, i).contiguous().to_vector<int64_t>() == want);
    found += std::count_if(want.begin(), want.end(), [](int64_t r) { return r > 0; });
  }
  BOOST_TEST(found > 1000);  // most positions found an n-gram: the comparison compared something
}

BOOST_AUTO_TEST_CASE(the_lookup_table_finds_the_row_a_search_of_the_list_finds) {
  // 8,000 n-grams of 2 to 5 ids from 8 tokens (so that many share a prefix or a suffix with a listed one,
  // and the table is nearly half full), then every n-gram of other documents looked up: row() and rows()
  // give the row a search of ngrams() gives, or 0, for each n.
  Generator gen(5);
  auto document = [&](int length) {
    std::vector<int64_t> d;
    for (int i = 0; i < length; ++i) d.push_back(2 + static_cast<int64_t>(gen.next_below(8)));
    return d;
  };
  std::vector<std::vector<int64_t>> training(200);
  for (std::vector<int64_t>& d : training) d = document(50);
  const NgramVocabulary v = NgramVocabulary::build({training.begin(), training.end()}, 5, 8001);
  BOOST_REQUIRE(v.ngrams().size() == 8000);
  auto searched = [&](const int64_t* ids, int64_t n) -> int64_t {
    const std::vector<int64_t> wanted(ids, ids + n);
    const auto it = std::find(v.ngrams().begin(), v.ngrams().end(), wanted);
    return it == v.ngrams().end() ? 0 : 1 + (it - v.ngrams().begin());
  };
  const std::vector<int64_t> tokens = document(16 * 40);  // 16 reviews of 40
  const Tensor rows = v.rows(Tensor::from_vector(tokens, {16, 40}),
                             Tensor::from_vector(std::vector<int64_t>(16, 40), {16}), 5);  // (16, 40, 4)
  std::vector<int64_t> found(6, 0), missed(6, 0);                                          // by n
  for (int64_t i = 0; i < 16; ++i) {
    for (int64_t end = 0; end < 40; ++end) {
      for (int64_t n = 2; n <= 5; ++n) {
        const int64_t want = end + 1 >= n ? searched(tokens.data() + i * 40 + end - n + 1, n) : 0;
        BOOST_TEST(static_cast<int64_t>(rows.at({i, end, n - 2})) == want);
        if (end + 1 < n) continue;
        BOOST_TEST(v.row(tokens.data() + i * 40 + end - n + 1, n) == want);
        ++(want > 0 ? found : missed)[static_cast<size_t>(n)];
      }
    }
  }
  // Rows found for every n; none missing for n = 2 and 3 (8 tokens make 64 bigrams and 512 trigrams, all
  // in the training documents), many for 4 and 5.
  for (int64_t n = 2; n <= 5; ++n) BOOST_TEST(found[static_cast<size_t>(n)] > 10);
  BOOST_TEST((missed[4] > 10 && missed[5] > 10));
  BOOST_TEST(v.row(tokens.data(), 6) == 0);  // longer than any n-gram, or too short: none
  BOOST_TEST(v.row(tokens.data(), 1) == 0);
  BOOST_TEST(NgramVocabulary().row(tokens.data(), 2) == 0);
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
  BOOST_REQUIRE(ngram_table(*checkpoint.model) != nullptr);
  std::ostringstream progress;
  const TrainingLog log = train(checkpoint, run.examples, progress, {.validation = &validation});
  BOOST_REQUIRE(log.epoch_validation.size() == 6u);
  BOOST_TEST(log.epoch_validation.back().count == 32);
  BOOST_TEST(log.epoch_validation.back().accuracy > 0.95,
             "validation accuracy " << log.epoch_validation.back().accuracy);
  BOOST_TEST(log.epoch_validation.back().loss < log.epoch_validation.front().loss);
  BOOST_TEST(progress.str().find("epoch 6: training loss") != std::string::npos, progress.str());
  // The padding row of the n-gram table never learns.
  const Tensor padding = ngram_table(*checkpoint.model)->table->weight.data().select(0, 0);
  BOOST_TEST(padding.to_vector() == std::vector<double>(16, 0.0));
  // Saved and loaded with its n-gram table; a config.json without the n-gram fields (as written before
  // they existed) describes a model without them, and is refused for these weights.
  const fs::path dir = fs::temp_directory_path() / ("sentiment_ngrams_" + std::to_string(::getpid()));
  checkpoint.save(dir);
  BOOST_TEST(positive_probabilities(*load_extended_checkpoint(dir).model, validation) ==
             positive_probabilities(*checkpoint.model, validation));
  // Its n-grams are saved as text, the most common first; a list that is not the one it trained with
  // (the same length) is refused, as is a missing one.
  const nlohmann::json saved = nlohmann::json::parse(read_file("test", (dir / "ngrams.json").string()));
  BOOST_REQUIRE(saved.is_array());
  BOOST_TEST(saved.size() == ngram_table(*checkpoint.model)->vocabulary().ngrams().size());
  BOOST_TEST((std::find(saved.begin(), saved.end(), "not good") != saved.end()));
  nlohmann::json reordered = saved;
  std::swap(reordered[0], reordered[1]);
  write(dir / "ngrams.json", reordered.dump());
  expect_error_containing<Error>([&] { load_extended_checkpoint(dir); },
                                 "model.safetensors was trained with");
  fs::remove(dir / "ngrams.json");
  expect_error_containing<Error>([&] { load_extended_checkpoint(dir); }, "ngrams.json");
  write(dir / "ngrams.json", saved.dump());
  BOOST_TEST(positive_probabilities(*load_extended_checkpoint(dir).model, validation) ==
             positive_probabilities(*checkpoint.model, validation));
  nlohmann::json old = checkpoint.config.to_json();
  old.erase("ngram_buckets");
  old.erase("ngram_max");
  old.erase("ngram_vocabulary");
  old.erase("validation");
  old.erase("validation_seed");
  write(dir / "config.json", old.dump());
  expect_error_containing<Error>([&] { load_extended_checkpoint(dir); },
                                 "ngram_buckets=64 ngram_max=2 ngram_vocabulary=1, but config.json says");
  // An extension's option out of its range is refused, naming the file.
  nlohmann::json wrong = checkpoint.config.to_json();
  wrong["ngram_max"] = 9;
  write(dir / "config.json", wrong.dump());
  expect_error_containing<Error>([&] { load_extended_checkpoint(dir); },
                                 "config.json: ngram_max is 9, outside [2, 5]");
  fs::remove_all(dir);
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
    const FeatureBag present = nb.present(tokens);
    std::vector<double> r(present.weights.begin(), present.weights.end());
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
  const FeatureBag present = unigrams.present({"film", "good", "bad"});
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
  run.extended.nb_max = 2;
  run.extended.nb_rows = 256;
  run.extended.nb_min_reviews = 1;
  std::vector<std::vector<std::string>> tokens;
  std::vector<int64_t> labels;
  for (const Review& r : run.reviews) {
    tokens.push_back(tokenize(r.text));
    labels.push_back(r.label);
  }
  NbFeatures nb = NbFeatures::build(tokens, labels, 2, 256, 1);
  BOOST_REQUIRE(nb.kept() > 20);
  BOOST_REQUIRE(nb.kept() < 255);  // rows left unused: no review looks them up
  const std::vector<Example> examples =
      encode(run.reviews, run.vocabulary, run.config.max_len, [&](const auto& t) { return nb.present(t); });
  BOOST_TEST(!examples[0].bag.rows.empty());
  BOOST_TEST(examples[0].bag.rows.size() == examples[0].bag.weights.size());
  manual_seed(6);
  const Config config = run.full();
  Checkpoint checkpoint{config, run.vocabulary,
                        make_extended_model(config, run.vocabulary.size(),
                                            build_ngram_vocabulary(config, examples), std::move(nb))};
  const Tensor& table = nb_branch(*checkpoint.model)->table->weight.data();
  BOOST_TEST(sum(abs(table)).item() == 0.0);  // the branch starts silent
  std::ostringstream progress;
  train(checkpoint, examples, progress);
  const int64_t kept = nb_branch(*checkpoint.model)->features().kept();
  BOOST_TEST(sum(abs(table.slice(0, 1, kept + 1))).item() > 0.0);
  BOOST_TEST(sum(abs(table.slice(0, kept + 1, 256))).item() == 0.0);  // never looked up, never moved
  BOOST_TEST(sum(abs(table.select(0, 0))).item() == 0.0);             // the padding row
  // Saved and loaded: the same n-grams, ratios and probabilities, to the bit.
  const fs::path dir = fs::temp_directory_path() / ("sentiment_nb_test_" + std::to_string(::getpid()));
  checkpoint.save(dir);
  const Checkpoint reloaded = load_extended_checkpoint(dir);
  BOOST_REQUIRE(nb_branch(*reloaded.model) != nullptr);
  const std::vector<Example> again =
      encode(run.reviews, reloaded.vocabulary, reloaded.config.max_len, reloaded.model->featurizer());
  BOOST_TEST(again[3].bag.rows == examples[3].bag.rows);
  BOOST_TEST(again[3].bag.weights == examples[3].bag.weights);
  BOOST_TEST(positive_probabilities(*reloaded.model, again) ==
             positive_probabilities(*checkpoint.model, examples));
  // The model without extensions does not take these weights, and says why.
  expect_error_containing<Error>([&] { Checkpoint::load(dir); },
                                 "nb_max=2 nb_rows=256, but config.json says max_len=32 num_hiddens=16 "
                                 "num_heads=2 ffn_num_hiddens=32 num_layers=1 learnable_positions=0 (without "
                                 "the extensions the weights were saved with");
  fs::remove_all(dir);
  // The branch needs its inputs, and says so.
  Batch batch = make_batch(examples, {0, 1}, run.config.max_len);
  batch.bag_rows = Tensor();
  batch.bag_weights = Tensor();
  expect_error_containing<ShapeError>([&] { (*checkpoint.model)(batch); },
                                      "NbBranch: expects the batch's bag_rows (B, K) int64 and bag_weights "
                                      "(B, K) for 2 reviews, got bag_rows none");
}

BOOST_AUTO_TEST_SUITE_END()
