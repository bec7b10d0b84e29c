// Row-sparse gradients (tensor/row_sparse.h): coalescing, the sparse embedding's gradient against the
// dense one, accumulation into a leaf (sparse into sparse, sparse into dense, dense into sparse), and the
// fallbacks to the dense gradient (create_graph, a table computed by another op).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {

constexpr DType F64 = DType::Float64;

// An upstream gradient of whole numbers, so that every sum below is exact whatever its order.
Tensor whole_numbers(const Shape& shape) {
  std::vector<double> values(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i % 7) - 3;
  return Tensor::from_values(values, shape, F64);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sparse_grad)

BOOST_AUTO_TEST_CASE(coalesce_sums_repeated_rows_and_sorts_them) {
  // rows for table rows 4, 1, 4, 0 of a (5, 2) table: row 4 is the sum of positions 0 and 2
  const Tensor g = coalesce_rows(ids_of({4, 1, 4, 0}),
                                 Tensor::from_values({1, 2, 3, 4, 10, 20, 5, 6}, {4, 2}, F64), {5, 2});
  BOOST_REQUIRE(g.is_row_sparse());
  BOOST_TEST(g.shape() == Shape({5, 2}));
  expect_equal(g.row_indices(), {0, 1, 4});
  expect_equal(g.row_values(), {5, 6, 3, 4, 11, 22});
  expect_equal(g.to_dense(), {5, 6, 3, 4, 0, 0, 0, 0, 11, 22});

  // add: the union of the rows, those in both summed
  const Tensor h = coalesce_rows(ids_of({2, 4}), Tensor::from_values({1, 1, 2, 2}, {2, 2}, F64), {5, 2});
  const Tensor sum_of = add(g, h);
  BOOST_REQUIRE(sum_of.is_row_sparse());
  expect_equal(sum_of.row_indices(), {0, 1, 2, 4});
  expect_equal(sum_of.row_values(), {5, 6, 3, 4, 1, 1, 13, 24});

  // add_: into the rows of a dense tensor only; add with a dense tensor: dense, either order
  Tensor dense = Tensor::ones({5, 2}, F64);
  dense.add_(h);
  expect_equal(dense, {1, 1, 1, 1, 2, 2, 1, 1, 3, 3});
  expect_equal(add(h, Tensor::ones({5, 2}, F64)), {1, 1, 1, 1, 2, 2, 1, 1, 3, 3});
  expect_equal(add(Tensor::ones({5, 2}, F64), h), {1, 1, 1, 1, 2, 2, 1, 1, 3, 3});
  // mul_ scales the rows present; clone and to() keep the layout
  const Tensor scaled = h.clone();
  scaled.mul_(2.0);
  expect_equal(scaled.row_values(), {2, 2, 4, 4});
  expect_equal(h.row_values(), {1, 1, 2, 2});
  BOOST_TEST(h.to(DType::Float32).is_row_sparse());
}

BOOST_AUTO_TEST_CASE(coalesce_and_add_refuse_what_does_not_fit) {
  expect_error<IndexError>(
      [] {
        coalesce_rows(ids_of({5}), Tensor::zeros({1, 2}, F64), {5, 2});
      },
      "coalesce_rows: row 5 is outside a table of 5 rows");
  expect_error<ShapeError>(
      [] {
        coalesce_rows(ids_of({0, 1}), Tensor::zeros({1, 2}, F64), {5, 2});
      },
      "coalesce_rows: rows [1,2] for indices [2] of a table [5,2]: need (N, D), (N) and (V, D)");
  const Tensor a = coalesce_rows(ids_of({0}), Tensor::zeros({1, 2}, F64), {5, 2});
  const Tensor b = coalesce_rows(ids_of({0}), Tensor::zeros({1, 2}, F64), {6, 2});
  expect_error<ShapeError>(
      [&] { add(a, b); },
      "add: a row-sparse tensor [5,2] float64 and a tensor [6,2] float64: the shapes and "
      "dtypes must be the same");
  expect_error<ShapeError>(
      [&] {
        Tensor::zeros({6, 2}, F64).add_(a);
      },
      "add_: a row-sparse tensor [5,2] float64 added into [6,2] float64");
  expect_error<IndexError>(
      [] {
        Tensor::row_sparse(ids_of({1, 0}), Tensor::zeros({2, 2}, F64), {5, 2});
      },
      "row_sparse: the row indices must be sorted, each once, within a table of 5 rows (coalesce_rows() "
      "makes "
      "them so)");
}

BOOST_AUTO_TEST_CASE(dense_kernels_views_and_data_refuse_a_row_sparse_tensor_by_name) {
  const Tensor g = coalesce_rows(ids_of({1}), Tensor::ones({1, 2}, F64), {3, 2});
  const std::string why =
      ": the tensor is row-sparse (a sparse embedding's gradient) and has no dense buffer; call to_dense() "
      "first";
  expect_error<ValueError>([&] { exp(g); }, "exp" + why);
  expect_error<ValueError>([&] { mul(g, g); }, "mul" + why);
  expect_error<ValueError>([&] { g.reshape({6}); }, "reshape" + why);
  expect_error<ValueError>([&] { g.to_vector<double>(); }, "contiguous" + why);
  expect_error<ValueError>([&] { sum(g); }, why, /*whole=*/false);
  expect_error<ValueError>([&] { matmul(g, Tensor::ones({2, 2}, F64)); }, why, /*whole=*/false);
  expect_error<ValueError>([&] { g.row_indices().to_dense().row_values(); },
                           "row_values: the tensor is not row-sparse (ask is_row_sparse() first)");
  // Printed as its parts, as PyTorch prints a sparse tensor.
  std::ostringstream printed;
  printed << g;
  BOOST_TEST(printed.str().find("layout=row_sparse") != std::string::npos);
  BOOST_TEST(printed.str().find("shape=[3,2]") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_sparse_gradient_is_the_dense_one_bit_for_bit) {
  // float32, random rows and ids with many repeats: the same additions in the same order.
  Generator gen(5);
  const Tensor table = Tensor::normal({50, 8}, 0, 1, DType::Float32, &gen);
  std::vector<int64_t> ids(300);
  for (int64_t& id : ids) id = static_cast<int64_t>(gen.next_below(20)) * 2;  // even rows only
  const Tensor lookups = Tensor::from_vector(ids, {30, 10});
  const Tensor upstream = Tensor::normal({30, 10, 8}, 0, 1, DType::Float32, &gen);

  Variable dense(table.clone(), true), sparse(table.clone(), true);
  embedding(dense, lookups).backward(upstream);
  embedding(sparse, lookups, {.sparse = true}).backward(upstream);
  BOOST_TEST(!dense.grad().is_row_sparse());
  BOOST_REQUIRE(sparse.grad().is_row_sparse());
  const Tensor& rows = sparse.grad();
  BOOST_TEST(rows.row_indices().numel() <= 20);
  for (int64_t r : rows.row_indices().to_vector<int64_t>()) BOOST_TEST(r % 2 == 0);
  BOOST_TEST(rows.to_dense().to_vector<float>() == dense.grad().to_vector<float>());
}

BOOST_AUTO_TEST_CASE(large_tables_padding_and_nan_match_the_dense_gradient_bit_for_bit) {
  // Tables of 1 row (no pass of the rows' sort), 3,000 (two passes of 11 bits) and 2^17 (two), 20,000
  // positions (rows summed on two threads), the padding row left out, a NaN in one position's gradient:
  // the same sums as the dense gradient, bit for bit, NaN where it is, in both dtypes.
  const ThreadCount two(2);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (int64_t vocab : {int64_t{1}, int64_t{3000}, int64_t{1} << 17}) {
      BOOST_TEST_CONTEXT("vocab " << vocab << ", " << dtype_name(dtype)) {
        Generator gen(11);
        std::vector<int64_t> ids(20000);
        // a few rows often (as tokens come), the rest seldom
        for (int64_t& id : ids)
          id = static_cast<int64_t>(gen.next_below(4) == 0 ? gen.next_below(8)
                                                           : gen.next_below(static_cast<uint64_t>(vocab))) %
               vocab;
        const Tensor lookups = Tensor::from_vector(ids, {200, 100});
        Tensor upstream = Tensor::normal({200, 100, 8}, 0, 1, dtype, &gen);
        upstream.select(0, 3).select(0, 7).select(0, 2).fill_(std::nan(""));
        const Tensor table = Tensor::normal({vocab, 8}, 0, 1, dtype, &gen);
        const int64_t padding = vocab > 1 ? 5 : -1;
        Variable dense(table.clone(), true), sparse(table.clone(), true);
        embedding(dense, lookups, {.padding_idx = padding}).backward(upstream);
        embedding(sparse, lookups, {.padding_idx = padding, .sparse = true}).backward(upstream);
        BOOST_REQUIRE(sparse.grad().is_row_sparse());
        const std::vector<int64_t> rows = sparse.grad().row_indices().to_vector<int64_t>();
        BOOST_TEST(std::is_sorted(rows.begin(), rows.end()));
        BOOST_TEST((std::adjacent_find(rows.begin(), rows.end()) == rows.end()));
        BOOST_TEST((std::find(rows.begin(), rows.end(), padding) == rows.end()));
        // Compared as bits (float64 holds either dtype's values exactly): -0.0 and a NaN's bits count.
        const std::vector<double> got = sparse.grad().to_dense().to_vector<double>();
        const std::vector<double> want = dense.grad().to_vector<double>();
        BOOST_REQUIRE(got.size() == want.size());
        BOOST_TEST(std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) == 0);
        const auto nans = std::count_if(want.begin(), want.end(), [](double v) { return std::isnan(v); });
        BOOST_TEST(nans == (ids[3 * 100 + 7] == padding ? 0 : 1));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(coalescing_a_table_of_more_than_2_to_the_22_rows_and_no_rows) {
  // 2^22 + 1 rows: three passes of the sort. Rows far apart in every digit, positions in a known order.
  const int64_t vocab = (int64_t{1} << 22) + 1;
  const std::vector<int64_t> ids = {vocab - 1, 3, int64_t{1} << 11, vocab - 1, 0, int64_t{1} << 22, 3};
  const Tensor rows = Tensor::from_values({1, 2, 4, 8, 16, 32, 64}, {7, 1}, F64);
  const Tensor g = coalesce_rows(ids_of(ids), rows, {vocab, 1});
  expect_equal(g.row_indices(), {0, 3, 2048, 4194304});
  expect_equal(g.row_values(), {16, 2 + 64, 4, 1 + 8 + 32});
  // No positions: no rows.
  const Tensor none = coalesce_rows(ids_of({}), Tensor::zeros({0, 3}, F64), {5, 3});
  BOOST_TEST(none.row_indices().numel() == 0);
  BOOST_TEST(none.row_values().shape() == Shape({0, 3}));
  // -1 is no row of any table (it is also what coalesce_rows passes for "no padding row").
  expect_error<IndexError>(
      [] {
        coalesce_rows(ids_of({1, -1}), Tensor::zeros({2, 1}, F64), {5, 1});
      },
      "coalesce_rows: row -1 is outside a table of 5 rows");
}

BOOST_AUTO_TEST_CASE(sparse_gradients_accumulate_into_sparse_and_dense_ones) {
  // A (6, 2) table looked up twice sparsely and once densely in one backward, and again in a second
  // backward: the same gradient as the dense lookups give.
  const Tensor start = whole_numbers({6, 2});
  const Tensor a = ids_of({0, 2, 2}), b = ids_of({2, 5}), c = ids_of({1, 0});
  auto loss = [&](const Variable& table, bool sparse) {
    const Variable x = embedding(table, a, {.sparse = sparse}), y = embedding(table, b, {.sparse = sparse});
    const Variable z = embedding(table, c);  // always dense
    return sum(x * 2.0) + sum(y * y) + sum(z * 3.0);
  };
  Variable reference(start.clone(), true), table(start.clone(), true);
  loss(reference, false).backward();
  loss(table, true).backward();  // sparse + sparse + dense: dense
  BOOST_TEST(!table.grad().is_row_sparse());
  BOOST_TEST(table.grad().to_vector<double>() == reference.grad().to_vector<double>());

  // Sparse only: two lookups in one backward coalesce into one row-sparse gradient, and a second
  // backward coalesces with it.
  Variable only_sparse(start.clone(), true);
  for (int pass = 0; pass < 2; ++pass) {
    sum(embedding(only_sparse, a, {.sparse = true}) * 2.0 +
        embedding(only_sparse, ids_of({5, 3, 2}), {.sparse = true}))
        .backward();
  }
  BOOST_REQUIRE(only_sparse.grad().is_row_sparse());
  expect_equal(only_sparse.grad().row_indices(), {0, 2, 3, 5});
  // row 0: 2·2 passes; row 2: (2·2 + 1)·2 passes; rows 3 and 5: 1·2 passes
  expect_equal(only_sparse.grad().row_values(), {4, 4, 10, 10, 2, 2, 2, 2});

  // Into a dense gradient already there (set by hand): added into its rows, and it stays dense.
  Variable into_dense(start.clone(), true);
  into_dense.set_grad(Tensor::ones({6, 2}, F64));
  sum(embedding(into_dense, ids_of({4, 4}), {.sparse = true})).backward();
  BOOST_TEST(!into_dense.grad().is_row_sparse());
  expect_equal(into_dense.grad(), {1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 1, 1});
  // ... also when that dense gradient is a strided view (set_grad may be given one): the sum is new.
  Variable into_view(start.clone(), true);
  into_view.set_grad(Tensor::ones({2, 6}, F64).t());
  sum(embedding(into_view, ids_of({4, 4}), {.sparse = true})).backward();
  expect_equal(into_view.grad(), {1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 1, 1});

  // A dense gradient into a row-sparse one: the sum is dense.
  Variable dense_after(start.clone(), true);
  sum(embedding(dense_after, ids_of({1}), {.sparse = true})).backward();
  BOOST_TEST(dense_after.grad().is_row_sparse());
  sum(dense_after * 2.0).backward();
  BOOST_TEST(!dense_after.grad().is_row_sparse());
  expect_equal(dense_after.grad(), {2, 2, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2});
}

BOOST_AUTO_TEST_CASE(grad_is_row_sparse_reading_it_changes_nothing_and_zero_grad_drops_it) {
  Variable table(whole_numbers({4, 3}), true);
  sum(embedding(table, ids_of({3, 1, 3}), {.sparse = true})).backward();
  BOOST_REQUIRE(table.grad().is_row_sparse());
  expect_equal(table.grad().row_indices(), {1, 3});
  expect_equal(table.grad().to_dense(), {0, 0, 0, 1, 1, 1, 0, 0, 0, 2, 2, 2});
  BOOST_TEST(table.grad().is_row_sparse());  // reading it changed nothing
  BOOST_TEST(table.grad_variable().data().is_row_sparse());

  sum(embedding(table, ids_of({0}), {.sparse = true})).backward();  // coalesced with it
  expect_equal(table.grad().row_indices(), {0, 1, 3});
  expect_equal(table.grad().to_dense(), {1, 1, 1, 1, 1, 1, 0, 0, 0, 2, 2, 2});
  table.zero_grad();
  BOOST_TEST(!table.grad().defined());

  // set_grad checks the table's shape and takes either layout.
  expect_error<ShapeError>(
      [&] {
        table.set_grad(coalesce_rows(ids_of({0}), Tensor::zeros({1, 3}, F64), {5, 3}));
      },
      "set_grad: a gradient [5,3] float64 for a value [4,3] float64");
  table.set_grad(coalesce_rows(ids_of({0}), Tensor::ones({1, 3}, F64), {4, 3}));
  BOOST_TEST(table.grad().is_row_sparse());
  table.set_grad(Tensor::zeros({4, 3}, F64));
  BOOST_TEST(!table.grad().is_row_sparse());
}

BOOST_AUTO_TEST_CASE(the_padding_row_is_absent_from_the_rows) {
  Variable table(whole_numbers({4, 2}), true);
  sum(embedding(table, ids_of({0, 2, 0, 3}), {.padding_idx = 0, .sparse = true})).backward();
  expect_equal(table.grad().row_indices(), {2, 3});
  // Every position looked up the padding row: no row at all.
  table.zero_grad();
  sum(embedding(table, ids_of({0, 0}), {.padding_idx = 0, .sparse = true})).backward();
  BOOST_REQUIRE(table.grad().is_row_sparse());
  BOOST_TEST(table.grad().row_indices().numel() == 0);
  expect_equal(table.grad().to_dense(), std::vector<double>(8, 0.0));
}

BOOST_AUTO_TEST_CASE(the_fallbacks_give_the_dense_gradient) {
  const Tensor ids = ids_of({2, 0, 2});
  // grad(): the row-sparse gradient returned, as PyTorch's torch.autograd.grad; nothing in .grad.
  Variable table(whole_numbers({3, 2}), true);
  const Variable g = grad({sum(embedding(table, ids, {.sparse = true}))}, {table})[0];
  BOOST_TEST(g.data().is_row_sparse());
  expect_equal(g.data().to_dense(), {1, 1, 0, 0, 2, 2});
  BOOST_TEST(!table.grad().defined());

  // create_graph: the dense gradient, with a graph. d/dtable of sum(lookups²): row r gets 2·row r for
  // each time it was looked up.
  Variable t2(whole_numbers({3, 2}), true);
  sum(pow(embedding(t2, ids, {.sparse = true}), 2)).backward({.create_graph = true});
  BOOST_TEST(!t2.grad().is_row_sparse());
  BOOST_TEST(t2.grad_variable().grad_fn() != nullptr);
  // rows 0 = [-3, -2], 2 = [1, 2] (whole_numbers): 2·row·count, count 1 for row 0 and 2 for row 2
  expect_equal(t2.grad(), {-6, -4, 0, 0, 4, 8});
  t2.zero_grad();  // the gradient's graph holds t2: a cycle until the gradient goes, as in PyTorch

  // A table computed by another op: the gradient reaches the op's output dense, and the leaf's is dense.
  Variable t3(whole_numbers({3, 2}), true);
  sum(embedding(t3 * 2.0, ids, {.sparse = true})).backward();
  BOOST_TEST(!t3.grad().is_row_sparse());
  expect_equal(t3.grad(), {2, 2, 0, 0, 4, 4});
}

BOOST_AUTO_TEST_CASE(an_embedding_module_with_sparse_true) {
  nn::Embedding dense_layer(10, 4), sparse_layer({.num_embeddings = 10, .embedding_dim = 4, .sparse = true});
  BOOST_TEST(sparse_layer.repr() == "Embedding(10, 4, sparse=True)");
  sparse_layer.weight.data().copy_(dense_layer.weight.data());
  const Tensor ids = Tensor::from_vector<int64_t>({7, 1, 7, 3}, {2, 2});
  const Variable a = dense_layer(ids), b = sparse_layer(ids);
  BOOST_TEST(a.data().to_vector<float>() == b.data().to_vector<float>());
  sum(b).backward();
  BOOST_REQUIRE(sparse_layer.weight.grad().is_row_sparse());
  expect_equal(sparse_layer.weight.grad().row_indices(), {1, 3, 7});
  sparse_layer.zero_grad();
  BOOST_TEST(!sparse_layer.weight.grad().defined());
}

BOOST_AUTO_TEST_SUITE_END()
