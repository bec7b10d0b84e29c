// Two models built and trained in two threads at once, as two independent users of the library would:
// each must get exactly what it gets when it runs alone. scripts/test.sh also runs this test under
// ThreadSanitizer, which reported a race on the (then global) default generator before it became per
// thread.
#define BOOST_TEST_MODULE minigrad threads
#include <thread>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {

// Builds a small Transformer classifier from `seed` and trains it for a few steps with dropout on,
// drawing every random number from `generator` if given, else from this thread's default generator.
// Returns its parameters after training.
std::vector<std::vector<double>> build_and_train(uint64_t seed, bool own_generator) {
  Generator mine(seed);
  if (!own_generator) manual_seed(seed);
  Generator* g = own_generator ? &mine : nullptr;
  nn::TransformerEncoder encoder(
      {.layer = {.num_hiddens = 16, .ffn_num_hiddens = 32, .num_heads = 2, .dropout = 0.1, .generator = g},
       .num_layers = 1,
       .tokens = {.vocab_size = 50, .max_len = 16}});
  nn::Linear head(16, 2, true, g);
  std::vector<Variable> params = encoder.parameters();
  for (const Variable& p : head.parameters()) params.push_back(p);
  optim::AdamW optimizer(params, {.lr = 1e-2});
  Generator data(seed + 100);  // the batches
  for (int step = 0; step < 4; ++step) {
    std::vector<int64_t> ids(8 * 12);
    for (int64_t& id : ids) id = static_cast<int64_t>(data.next_below(50));
    const Tensor tokens = Tensor::from_vector(ids, {8, 12});
    const Tensor labels = Tensor::from_vector<int64_t>({0, 1, 0, 1, 1, 0, 1, 0}, {8});
    optimizer.zero_grad();
    const Variable loss = cross_entropy(
        head(mean_over_time(encoder(tokens), Tensor::full({8}, 12, DType::Int64), /*dim=*/1)), labels);
    loss.backward();
    optimizer.step();
  }
  std::vector<std::vector<double>> out;
  for (const Variable& p : params) out.push_back(p.data().to_vector());
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(threads)

BOOST_AUTO_TEST_CASE(two_models_in_two_threads_match_each_run_alone) {
  for (bool own_generator : {false, true}) {
    const auto alone_a = build_and_train(1, own_generator);
    const auto alone_b = build_and_train(2, own_generator);
    BOOST_REQUIRE(alone_a != alone_b);
    std::vector<std::vector<double>> a, b;
    std::thread ta([&] { a = build_and_train(1, own_generator); });
    std::thread tb([&] { b = build_and_train(2, own_generator); });
    ta.join();
    tb.join();
    BOOST_TEST((a == alone_a), "model 1, " << (own_generator ? "own generator" : "default generator"));
    BOOST_TEST((b == alone_b), "model 2, " << (own_generator ? "own generator" : "default generator"));
  }
}

BOOST_AUTO_TEST_CASE(each_thread_has_its_own_default_generator) {
  manual_seed(7);
  const double here = default_generator().next_double();
  double there = 0, there_seeded = 0;
  std::thread([&] {
    there = default_generator().next_double();  // a new thread starts from seed 0, whatever this one did
    manual_seed(7);
    there_seeded = default_generator().next_double();
  }).join();
  BOOST_TEST(there == Generator(0).next_double());
  BOOST_TEST(there_seeded == here);
}

BOOST_AUTO_TEST_SUITE_END()
