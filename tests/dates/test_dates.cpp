// The date-normalisation example: the calendar, the written forms and their parser, the split, the
// character vocabulary, batches, a short training run and its checkpoint.
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "examples/common/json_file.h"
#include "examples/dates/training.h"
#include "examples/sentiment/checkpoint.h"
#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;
using namespace dates;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("dates_test_" + std::to_string(::getpid()));
  TempDir() { fs::remove_all(path); }
  ~TempDir() { fs::remove_all(path); }
};

Config tiny_config() {
  Config c = small_transformer<Config>(/*width=*/32, /*batch_size=*/32, /*lr=*/3e-3);
  c.num_encoder_layers = c.num_decoder_layers = 1;
  c.steps = 150;
  return c;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dates_example)

BOOST_AUTO_TEST_CASE(the_calendar) {
  BOOST_TEST(days_in_month(1999, 2) == 28);
  BOOST_TEST(days_in_month(2000, 2) == 29);  // divisible by 400
  BOOST_TEST(days_in_month(2024, 2) == 29);
  BOOST_TEST(days_in_month(2023, 4) == 30);
  BOOST_TEST(weekday({1999, 3, 3}) == 2);   // a Wednesday
  BOOST_TEST(weekday({1970, 1, 1}) == 3);   // a Thursday
  BOOST_TEST(weekday({2000, 2, 29}) == 1);  // a Tuesday
  BOOST_TEST(weekday({1950, 1, 1}) == 6);   // a Sunday
  BOOST_TEST(all_days().size() == 36525u);  // 100 years, 25 of them leap
  BOOST_TEST(iso({1999, 3, 3}) == "1999-03-03");
  BOOST_TEST(!is_valid({1999, 2, 29}));
  BOOST_TEST(!is_valid({1949, 12, 31}));
}

BOOST_AUTO_TEST_CASE(every_style_writes_its_own_form_of_a_date) {
  const Date d{1999, 3, 3};
  const std::vector<std::string> expected = {"3rd of March 1999",
                                             "the 3rd of march, 1999",
                                             "03/03/99",
                                             "3/3/1999",
                                             "march 3, 99",
                                             "March 3, 1999",
                                             "Wednesday 3 Mar 1999",
                                             "3 March 1999",
                                             "Mar 3 1999",
                                             "03-Mar-1999",
                                             "3.3.1999",
                                             "1999/03/03",
                                             "19990303",
                                             "Wed, 03 Mar 1999",
                                             "MARCH 3 1999",
                                             "Wednesday, March 3rd, 1999"};
  BOOST_REQUIRE_EQUAL(expected.size(), static_cast<size_t>(kStyleCount));
  for (int s = 0; s < kStyleCount; ++s) BOOST_TEST(write_date(d, static_cast<Style>(s)) == expected[s]);
  // ordinals, and days and months that differ (so that the order of the numbers matters)
  BOOST_TEST(write_date({2011, 11, 12}, Style::OrdinalOfMonth) == "12th of November 2011");
  BOOST_TEST(write_date({2001, 1, 22}, Style::WeekdayLong) == "Monday, January 22nd, 2001");
  BOOST_TEST(write_date({1987, 4, 21}, Style::UsSlashShort) == "04/21/87");
  BOOST_TEST(write_date({1987, 4, 21}, Style::EuropeanDots) == "21.4.1987");
  BOOST_TEST(write_date({2005, 10, 1}, Style::MonthDayShortLow) == "october 1, 05");
}

BOOST_AUTO_TEST_CASE(the_parser_reads_every_form_back) {
  // Every form of every 7th day (all weekdays, months and years): each form names exactly one day.
  const std::vector<Date> days = all_days();
  for (size_t i = 0; i < days.size(); i += 7) {
    for (int s = 0; s < kStyleCount; ++s) {
      const std::string text = write_date(days[i], static_cast<Style>(s));
      const std::optional<Date> parsed = parse_date(text);
      BOOST_TEST((parsed && *parsed == days[i]), text << " -> " << (parsed ? iso(*parsed) : "nothing"));
    }
  }
  // case and spacing do not matter
  BOOST_TEST(iso(*parse_date("  WEDNESDAY 3  mar 1999 ")) == "1999-03-03");
}

BOOST_AUTO_TEST_CASE(the_parser_refuses_what_is_not_a_date) {
  for (const char* text :
       {"", "hello", "Thursday 3 Mar 1999" /* a Wednesday */, "02/30/99", "13/01/99", "3rd of Smarch 1999",
        "3th of March 1999", "32 March 1999", "3 March 1949", "3 March March 1999", "3/3", "1999-3",
        "3.3.99.1", "99999999999999 March 1999", "3 March 1999!", "3 März 1999"}) {
    BOOST_TEST(!parse_date(text).has_value(), text);
  }
  BOOST_TEST(iso(*parse_date("03/04/99")) == "1999-03-04");  // American: month first
  BOOST_TEST(iso(*parse_date("4.3.1999")) == "1999-03-04");  // European: day first
  BOOST_TEST(iso(*parse_date("march 3, 49")) == "2049-03-03");
  BOOST_TEST(iso(*parse_date("march 3, 50")) == "1950-03-03");
}

BOOST_AUTO_TEST_CASE(held_out_days_never_appear_in_training) {
  const Split s = split_days(0);
  BOOST_TEST(s.held_out.size() == 2000u);
  BOOST_TEST(s.validation.size() == 1000u);
  BOOST_TEST(s.training.size() == 36525u - 3000u);
  const std::set<Date> training(s.training.begin(), s.training.end());
  for (const Date& d : s.held_out) BOOST_TEST(!training.count(d));
  for (const Date& d : s.validation) BOOST_TEST(!training.count(d));
  BOOST_TEST((split_days(0).held_out == s.held_out));  // the same seed, the same split
  BOOST_TEST((split_days(1).held_out != s.held_out));
  // the held-out days are spread over the whole range
  BOOST_TEST(s.held_out.front().year <= 1952);
  BOOST_TEST(s.held_out.back().year >= 2047);
  // The evaluation examples are fixed by the configuration, and written in every style.
  const Config c;
  const std::vector<Example> a = held_out_examples(c, s), b = held_out_examples(c, s);
  BOOST_REQUIRE_EQUAL(a.size(), 2000u);
  std::set<Style> styles;
  for (size_t i = 0; i < a.size(); ++i) {
    BOOST_TEST(a[i].source == b[i].source);
    BOOST_TEST(iso(*parse_date(a[i].source)) == a[i].target);
    styles.insert(a[i].style);
  }
  BOOST_TEST(styles.size() == static_cast<size_t>(kStyleCount));
}

BOOST_AUTO_TEST_CASE(characters_and_batches) {
  const std::vector<int64_t> ids = CharVocabulary::encode("3 Mar");
  BOOST_TEST(ids.size() == 5u);
  BOOST_TEST(CharVocabulary::decode(ids) == "3 Mar");
  BOOST_TEST(CharVocabulary::decode({CharVocabulary::kBos, ids[0], CharVocabulary::kEos, ids[1]}) == "3");
  expect_error<ValueError>(
      [] { CharVocabulary::encode("3 M\xc3\xa4rz"); },
      "dates: unknown character 0xc3 at position 3 of \"3 M\xc3\xa4rz\": the model reads "
      "printable ASCII only");
  const Batch batch = make_batch({{"3 Mar 1999", "1999-03-03"}, {"19990303", "1999-03-03"}}, 64);
  BOOST_TEST(batch.source.shape() == (Shape{2, 10}));
  expect_equal(batch.source_lens, {10, 8});
  BOOST_TEST(batch.decoder_input.at({0, 0}) == CharVocabulary::kBos);
  BOOST_TEST(batch.labels.at({0, 10}) == CharVocabulary::kEos);
  BOOST_TEST(batch.decoder_input.at({1, 1}) == batch.labels.at({1, 0}));  // shifted by one
  BOOST_TEST(batch.source.at({1, 9}) == CharVocabulary::kPad);
  expect_error<ValueError>(
      [] {
        make_batch({{"", "1999-03-03"}}, 64);
      },
      "dates: empty source: there is no date to read");
  expect_error<ValueError>(
      [] {
        make_batch({{std::string(65, '1'), "1999-03-03"}}, 64);
      },
      "dates: \"" + std::string(65, '1') + "\" has 65 characters; the model reads at most 64");
}

BOOST_AUTO_TEST_CASE(a_short_training_run_learns_and_its_checkpoint_reloads) {
  manual_seed(0);
  const Config config = tiny_config();
  Checkpoint checkpoint{config, make_model(config)};
  const Split split = split_days(config.seed, 100, 100);
  std::ostringstream progress;
  const TrainingLog log = train(checkpoint, split.training, progress, /*interactive=*/false);
  BOOST_TEST(log.steps == 150);
  BOOST_TEST(log.last_loss < 0.6 * log.first_loss, "loss " << log.first_loss << " -> " << log.last_loss);
  BOOST_TEST(progress.str().find("step 150/150  loss") != std::string::npos, progress.str());

  TempDir dir;
  checkpoint.save(dir.path);
  const Checkpoint loaded = Checkpoint::load(dir.path);
  const Batch batch = make_batch(validation_examples(config, split), config.max_source_len);
  NoGradGuard no_grad;
  const nn::DecoderMasks masks{.source_valid_lens = batch.source_lens};
  const Tensor before = (*checkpoint.model)(batch.source, batch.decoder_input, masks).data();
  const Tensor after = (*loaded.model)(batch.source, batch.decoder_input, masks).data();
  BOOST_TEST(max(abs(sub(before, after))).item() == 0.0);
  const Prediction p = predict(loaded, "3 March 1999");
  BOOST_TEST(p.output_chars.size() <= 11u);
  BOOST_TEST(p.cross_attention.shape() == (Shape{static_cast<int64_t>(p.output_chars.size()), 12}));
  // each row of attention weights sums to 1 over the input characters
  const Tensor row_sums = sum(p.cross_attention, {1});
  for (double s : row_sums.to_vector()) BOOST_TEST(std::abs(s - 1) < 1e-5);
}

BOOST_AUTO_TEST_CASE(bad_input_and_the_wrong_checkpoint_get_clear_errors) {
  manual_seed(1);
  TempDir dir;
  const Checkpoint checkpoint{tiny_config(), make_model(tiny_config())};
  checkpoint.save(dir.path / "dates");
  expect_error<ValueError>([&] { predict(checkpoint, ""); }, "dates: empty source: there is no date to read");
  expect_error_containing<ValueError>([&] { predict(checkpoint, "3 M\xc3\xa4rz 1999"); },
                                      "unknown character 0xc3 at position 3");
  expect_error<ValueError>([&] { predict(checkpoint, "3 March 1999", 0); },
                           "dates: beam width must be at least 1, got 0");
  expect_error<ValueError>([&] { predict(checkpoint, "3 March 1999", 1, 5); },
                           "dates: the decoder has 1 layers, no layer 5");
  // A sentiment classifier's checkpoint folder is not a date model.
  sentiment::Config sc;
  sc.num_hiddens = 8;
  sc.ffn_num_hiddens = 8;
  const sentiment::Vocabulary vocabulary({"<pad>", "<unk>", "good"});
  const sentiment::Checkpoint other{sc, vocabulary, std::make_shared<sentiment::SentimentModel>(sc, 3)};
  other.save(dir.path / "sentiment");
  expect_error<Error>(
      [&] { Checkpoint::load(dir.path / "sentiment"); },
      "checkpoint: " + (dir.path / "sentiment" / "config.json").string() +
          " is not the configuration of a date model (it has no \"kind\": \"minigrad-dates\"; "
          "another kind of model?)");
  // config.json of another date model than the weights
  fs::copy_file(dir.path / "sentiment" / "model.safetensors", dir.path / "dates" / "model.safetensors",
                fs::copy_options::overwrite_existing);
  expect_error_containing<Error>([&] { Checkpoint::load(dir.path / "dates"); },
                                 "model.safetensors holds a model of max_len=" + std::to_string(sc.max_len) +
                                     " num_hiddens=8 num_heads=" + std::to_string(sc.num_heads) +
                                     " ffn_num_hiddens=8 num_layers=1 "
                                     "learnable_positions=0, but config.json says "
                                     "minigrad-dates");
  expect_error_containing<Error>([&] { Checkpoint::load(dir.path / "nowhere"); }, "is not a folder");
  // A fraction where a whole number belongs is refused, not truncated.
  nlohmann::json config = examples::parse_json(dir.path / "dates" / "config.json");
  config["num_heads"] = 2.7;
  expect_error<Error>([&] { Config::from_json(config, "config.json"); },
                      "checkpoint: config.json: 'num_heads' must be a whole number, got 2.7");
}

BOOST_AUTO_TEST_SUITE_END()
