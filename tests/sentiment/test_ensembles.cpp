// An ensemble of checkpoints: the mean of its members' log-odds.
#include <cmath>
#include <sstream>
#include <vector>

#include "examples/sentiment/evaluation.h"
#include "examples/sentiment/extras/ensembles.h"
#include "examples/sentiment/training.h"

#include "test_helpers.h"
#include "tests/sentiment/sentiment_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;
using namespace sentiment;
using namespace sentiment::testing;

BOOST_AUTO_TEST_SUITE(sentiment_example)

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

BOOST_AUTO_TEST_SUITE_END()
