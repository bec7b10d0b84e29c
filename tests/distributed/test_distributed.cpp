// Data-parallel training, run by CTest as `mpirun -np 2 test_distributed` (and again forced onto TCP):
// every rank runs every test case, and the collectives inside them meet.
#define BOOST_TEST_MODULE minigrad distributed
#include <cmath>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {

// One Context for the whole run: MPI can be initialised once per process.
struct MpiFixture {
  distributed::Context context;
};

// The largest |a - b| over the flattened parameters of two lists.
double max_difference(const std::vector<Variable>& a, const std::vector<Variable>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::vector<double> x = a[i].data().to_vector(), y = b[i].data().to_vector();
    for (size_t k = 0; k < x.size(); ++k) worst = std::max(worst, std::abs(x[k] - y[k]));
  }
  return worst;
}

// The same number on every rank? Each rank compares the sum over ranks with its own value times the
// rank count (exact for equal values, up to a few roundings of the sum), and the verdicts are summed.
bool same_everywhere(double value) {
  std::array<double, 1> total = {value};
  distributed::all_reduce_sum(total);
  const double n = distributed::world_size();
  std::array<double, 1> differs = {std::abs(total[0] - n * value) > 4 * n * 2.2e-16 * std::abs(value) ? 1.0
                                                                                                      : 0.0};
  distributed::all_reduce_sum(differs);
  return differs[0] == 0;
}

// A checksum of parameters that differs whenever any bit of them does (almost surely).
double fingerprint(const std::vector<Variable>& parameters) {
  double h = 0, k = 1;
  for (const Variable& p : parameters) {
    for (double v : p.data().to_vector()) h += (k += 0.618034) * v;
  }
  return h;
}

struct Model {
  nn::TransformerEncoder encoder;
  nn::Linear head;
  Model(double dropout, Generator* g)
      : encoder({.layer = {.num_hiddens = 8,
                           .ffn_num_hiddens = 16,
                           .num_heads = 2,
                           .dropout = dropout,
                           .generator = g},
                 .num_layers = 1,
                 .tokens = {.vocab_size = 20, .max_len = 8}}),
        head(8, 2, true, g) {
    encoder.to(DType::Float64);
    head.to(DType::Float64);
  }
  std::vector<Variable> parameters() const {
    std::vector<Variable> out = encoder.parameters();
    for (const Variable& p : head.parameters()) out.push_back(p);
    return out;
  }
  // Mean cross-entropy of examples [begin, end) of the batch, times their share of the batch: summed
  // over shares (by average_gradients' mean times the rank count) it is the whole batch's mean.
  Variable loss(const Tensor& tokens, const Tensor& labels, int64_t begin, int64_t end, int64_t batch) {
    const Tensor t = tokens.slice(0, begin, end), l = labels.slice(0, begin, end).contiguous();
    const Variable h = encoder(t.contiguous());
    const Variable logits = head(mean_over_time(h, Tensor::full({end - begin}, 6, DType::Int64), /*dim=*/1));
    return cross_entropy(logits, l) * (static_cast<double>(end - begin) / static_cast<double>(batch));
  }
};

// A batch of `batch` sequences of 6 tokens for step `step`, the same on every rank.
std::pair<Tensor, Tensor> batch_for(int step, int64_t batch) {
  Generator g(1000 + step);
  std::vector<int64_t> ids(batch * 6), labels(batch);
  for (int64_t& id : ids) id = static_cast<int64_t>(g.next_below(20));
  for (int64_t& y : labels) y = static_cast<int64_t>(g.next_below(2));
  return {Tensor::from_vector(ids, {batch, 6}), Tensor::from_vector(labels, {batch})};
}

}  // namespace

BOOST_TEST_GLOBAL_FIXTURE(MpiFixture);

BOOST_AUTO_TEST_SUITE(distributed_training)

BOOST_AUTO_TEST_CASE(shards_are_disjoint_and_cover_the_batch) {
  BOOST_TEST((distributed::shard(10, 0, 3) == std::pair<int64_t, int64_t>{0, 4}));
  BOOST_TEST((distributed::shard(10, 1, 3) == std::pair<int64_t, int64_t>{4, 7}));
  BOOST_TEST((distributed::shard(10, 2, 3) == std::pair<int64_t, int64_t>{7, 10}));
  BOOST_TEST((distributed::shard(1, 1, 2) == std::pair<int64_t, int64_t>{1, 1}));  // an empty share
  expect_error<ValueError>([] { distributed::shard(4, 2, 2); }, "shard: rank 2 of 2 for 4 items");
}

BOOST_AUTO_TEST_CASE(every_rank_starts_from_rank_0s_weights) {
  BOOST_REQUIRE(distributed::world_size() >= 2);
  Generator g(17 + distributed::rank());  // different weights on every rank...
  Model model(0, &g);
  BOOST_TEST(!same_everywhere(fingerprint(model.parameters())));
  distributed::broadcast_parameters(model.encoder);  // ... until rank 0's are broadcast
  distributed::broadcast_parameters(model.head);
  BOOST_TEST(same_everywhere(fingerprint(model.parameters())));
  BOOST_TEST(same_everywhere(fingerprint({model.encoder.pos_encoding->P})));  // buffers too
}

BOOST_AUTO_TEST_CASE(n_ranks_with_b_over_n_each_match_one_process_with_b) {
  // Dropout off. Each rank also trains the single-process reference on the whole batch itself.
  constexpr int64_t kBatch = 6;
  const int rank = distributed::rank(), world = distributed::world_size();
  Generator g1(5), g2(5);
  Model alone(0, &g1), shared(0, &g2);
  optim::AdamW alone_opt(alone.parameters(), {.lr = 1e-2}), shared_opt(shared.parameters(), {.lr = 1e-2});
  for (int step = 0; step < 5; ++step) {
    const auto [tokens, labels] = batch_for(step, kBatch);
    alone_opt.zero_grad();
    alone.loss(tokens, labels, 0, kBatch, kBatch).backward();
    alone_opt.step();

    shared_opt.zero_grad();
    const auto [begin, end] = distributed::shard(kBatch, rank, world);
    // The mean over ranks of (share × share's mean loss) is the batch mean divided by the rank count.
    (shared.loss(tokens, labels, begin, end, kBatch) * static_cast<double>(world)).backward();
    // Every matrix summed by rows (the embedding's unused rows left out), the vectors in buckets.
    distributed::average_gradients(shared.parameters(), {.row_sparse_bytes = 1});
    shared_opt.step();
  }
  // float64: only the order of the additions differs (a sum split in two, then added).
  BOOST_TEST(max_difference(alone.parameters(), shared.parameters()) < 1e-12);
  BOOST_TEST(same_everywhere(fingerprint(shared.parameters())));
}

BOOST_AUTO_TEST_CASE(with_dropout_every_rank_holds_the_same_weights_after_every_step) {
  const int rank = distributed::rank(), world = distributed::world_size();
  Generator g(9);  // the same initial weights everywhere...
  Model model(0.3, &g);
  g.seed_with(100 + rank);  // ... then a dropout stream of each rank's own (the modules keep drawing from g)
  optim::Adam optimizer(model.parameters(), {.lr = 1e-2});
  for (int step = 0; step < 4; ++step) {
    const auto [tokens, labels] = batch_for(step, 8);
    optimizer.zero_grad();
    const auto [begin, end] = distributed::shard(8, rank, world);
    model.loss(tokens, labels, begin, end, 8).backward();
    // Parameters without a gradient on one rank would make the ranks send different buckets: zeros.
    distributed::average_gradients(model.parameters(), {.bucket_bytes = 1024});  // several buckets
    optimizer.step();
    BOOST_TEST(same_everywhere(fingerprint(model.parameters())), "after step " << step);
  }
}

BOOST_AUTO_TEST_CASE(gradients_summed_by_rows_equal_the_dense_sum) {
  // Each rank's gradients of a (rows, 3) table: a few rows non-zero on one rank only, some on every
  // rank, the rest zero everywhere; on the last rank no gradient at all for the second table. Summed
  // by rows (any size qualifies) and as buckets (by rows off), the means must be identical.
  const int rank = distributed::rank(), world = distributed::world_size();
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (int64_t rows : {int64_t{40}, int64_t{5}}) {  // 40: few rows used, by rows; 5: most used, one message
      auto make = [&] {
        std::vector<Variable> params = {Variable(Tensor::zeros({rows, 3}, dtype), true),
                                        Variable(Tensor::zeros({rows, 3}, dtype), true)};
        for (size_t i = 0; i < params.size(); ++i) {
          if (i == 1 && rank == world - 1) continue;  // no gradient here: counts as zeros
          std::vector<double> g(static_cast<size_t>(rows * 3), 0.0);
          for (int64_t r = 0; r < rows; ++r) {
            const bool used = r % 13 == static_cast<int64_t>(rank) || r == 3 || (rows == 5 && r != 4);
            for (int64_t k = 0; k < 3; ++k)
              if (used) g[static_cast<size_t>(r * 3 + k)] = 0.25 * (rank + 1) + 0.125 * r - 0.5 * k + i;
          }
          params[i].set_grad(Tensor::from_vector(g, {rows, 3}).to(dtype));
        }
        return params;
      };
      const std::vector<Variable> by_rows = make(), dense = make();
      distributed::average_gradients(by_rows, {.row_sparse_bytes = 1});
      distributed::average_gradients(dense, {.row_sparse_bytes = 0});
      for (size_t i = 0; i < by_rows.size(); ++i) {
        BOOST_REQUIRE(by_rows[i].grad().defined());
        const std::vector<double> a = by_rows[i].grad().to_vector(), b = dense[i].grad().to_vector();
        BOOST_TEST(a == b, dtype_name(dtype) << " rows " << rows << " parameter " << i);
        // Row 3 is used on every rank: its mean is the mean of the ranks' values.
        double expected = 0;
        for (int r = 0; r < world; ++r) expected += 0.25 * (r + 1) + 0.125 * 3 + static_cast<double>(i);
        if (i == 1) expected -= 0.25 * world + 0.125 * 3 + 1;  // the last rank sent zeros
        BOOST_TEST(a[9] == expected / world, dtype_name(dtype) << " row 3 of parameter " << i);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(row_sparse_gradients_averaged_equal_the_dense_average) {
  // Each rank looks up rows of its own and rows every rank looks up, in a table with row-sparse gradients
  // and in the same table with dense ones; a second table gets no lookup on the last rank (no gradient
  // there). Averaged, the row-sparse gradients are the dense average, row for row, on every rank.
  const int rank = distributed::rank(), world = distributed::world_size();
  for (DType dtype : {DType::Float64, DType::Float32}) {
    auto table = [&] { return Variable(Tensor::zeros({30, 4}, dtype), true); };
    const Variable sparse_a = table(), sparse_b = table(), dense_a = table(), dense_b = table();
    const Tensor ids = Tensor::from_vector<int64_t>({rank, 7, 10 + 3 * rank, 7, 29}, {5});
    std::vector<double> upstream(20);
    for (size_t n = 0; n < upstream.size(); ++n) upstream[n] = 0.25 * (rank + 1) + 0.125 * double(n);
    const Tensor g = Tensor::from_vector(upstream, {5, 4}).to(dtype);
    embedding(sparse_a, ids, {.sparse = true}).backward(g);
    embedding(dense_a, ids).backward(g);
    if (rank != world - 1) {
      embedding(sparse_b, ids.slice(0, 0, 2), {.sparse = true}).backward(g.slice(0, 0, 2));
      embedding(dense_b, ids.slice(0, 0, 2)).backward(g.slice(0, 0, 2));
    }
    distributed::average_gradients({sparse_a, sparse_b});
    distributed::average_gradients({dense_a, dense_b}, {.row_sparse_bytes = 0});
    for (const auto& [sparse, dense] : {std::pair{sparse_a, dense_a}, std::pair{sparse_b, dense_b}}) {
      BOOST_REQUIRE(sparse.grad().is_row_sparse());  // also on the rank that had none
      BOOST_TEST(sparse.grad().to_dense().to_vector<double>() == dense.grad().to_vector<double>(),
                 dtype_name(dtype));
    }
    // The union of every rank's rows: 7 and 29 from all, rank r's own r and 10 + 3r.
    BOOST_TEST(sparse_a.grad().row_indices().numel() == 2 + 2 * world);
    BOOST_TEST(sparse_b.grad().row_indices().numel() == world);  // 7, and r from every rank r but the last
    // Row 7, looked up twice on every rank: the mean of the ranks' sums.
    double expected = 0;
    for (int r = 0; r < world; ++r) expected += 2 * 0.25 * (r + 1) + 0.125 * (4 + 12);
    BOOST_TEST(dense_a.grad().at({7, 0}) == expected / world);
    BOOST_TEST(same_everywhere(fingerprint({Variable(sparse_a.grad().to_dense())})));
  }
}

BOOST_AUTO_TEST_CASE(a_gradient_dense_on_one_rank_is_averaged_dense_everywhere) {
  // Row-sparse on rank 0, dense elsewhere: every rank ends with the dense mean.
  const int rank = distributed::rank(), world = distributed::world_size();
  Variable table(Tensor::zeros({6, 2}, DType::Float64), true);
  if (rank == 0) {
    sum(embedding(table, Tensor::from_vector<int64_t>({4}, {1}), {.sparse = true})).backward();
  } else {
    sum(table * 2.0).backward();
  }
  distributed::average_gradients({table});
  BOOST_TEST(!table.grad().is_row_sparse());
  const double others = 2.0 * (world - 1);
  expect_equal(table.grad(), {others / world, others / world, others / world, others / world, others / world,
                              others / world, others / world, others / world, (others + 1) / world,
                              (others + 1) / world, others / world, others / world});
}

BOOST_AUTO_TEST_CASE(every_rank_gets_every_ranks_values) {
  const uint64_t r = static_cast<uint64_t>(distributed::rank());
  const std::vector<uint64_t> mine = {r, ~r};
  const std::vector<uint64_t> all = distributed::all_gather(mine);
  BOOST_REQUIRE(all.size() == 2 * static_cast<size_t>(distributed::world_size()));
  for (size_t k = 0; k < all.size() / 2; ++k) {
    BOOST_TEST(all[2 * k] == k);
    BOOST_TEST(all[2 * k + 1] == ~uint64_t{k});  // all 64 bits arrive
  }
}

BOOST_AUTO_TEST_CASE(sums_of_counts_reach_every_rank) {
  std::array<double, 2> counts = {1.0, static_cast<double>(distributed::rank())};
  distributed::all_reduce_sum(counts);
  const int n = distributed::world_size();
  BOOST_TEST(counts[0] == n);
  BOOST_TEST(counts[1] == n * (n - 1) / 2);
}

BOOST_AUTO_TEST_SUITE_END()
