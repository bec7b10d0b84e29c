#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

BOOST_AUTO_TEST_SUITE(views)

BOOST_AUTO_TEST_CASE(reshape_of_a_contiguous_tensor_is_a_view) {
  const Tensor x = Tensor::arange(0, 6, 1, DType::Float32);
  const Tensor y = x.reshape({2, -1});
  BOOST_TEST(y.shape() == (Shape{2, 3}));
  BOOST_TEST(y.shares_storage_with(x));
  y.fill_(1);  // writes through the view
  expect_equal(x, {1, 1, 1, 1, 1, 1});
  expect_error<ShapeError>(
      [&] {
        x.reshape({4, -1});
      },
      "reshape: shape [4,-1] is invalid for input of shape [6]");
  expect_error<ShapeError>(
      [&] {
        x.reshape({-1, -1});
      },
      "reshape: only one dimension can be -1, got [-1,-1]");
  expect_error<ShapeError>([&] { x.reshape({5}); },
                           "reshape: shape [5] is invalid for input of shape [6] (5 != 6 elements)");
}

BOOST_AUTO_TEST_CASE(view_refuses_what_needs_a_copy_and_reshape_copies) {
  const Tensor x = Tensor::arange(0, 6, 1, DType::Float32).reshape({2, 3}).t();  // [3,2], strides [1,3]
  expect_error<ShapeError>(
      [&] { x.view({6}); },
      "view: a tensor of shape [3,2] with strides [1,3] cannot be viewed as [6] without a copy; "
      "use reshape()");
  const Tensor flat = x.reshape({6});
  BOOST_TEST(!flat.shares_storage_with(x));
  expect_equal(flat, {0, 3, 1, 4, 2, 5});
}

BOOST_AUTO_TEST_CASE(view_splits_and_merges_dimensions_without_copying_when_strides_allow) {
  // [2,3,4] with dims 0 and 1 swapped: dims 1 and 2 cannot merge, but the last one can be split.
  const Tensor base = Tensor::arange(0, 24, 1, DType::Float32).reshape({2, 3, 4});
  const Tensor x = base.transpose(0, 1);  // [3,2,4], strides [4,12,1]
  const Tensor split = x.view({3, 2, 2, 2});
  BOOST_TEST(split.shares_storage_with(base));
  BOOST_TEST(split.strides() == (Shape{4, 12, 2, 1}));
  BOOST_TEST(split.to_vector() == x.contiguous().reshape({3, 2, 2, 2}).to_vector());
  // A column slice keeps rows contiguous: [4,6] -> columns 0..3 viewed as [4,1,3].
  const Tensor cols = Tensor::arange(0, 24, 1, DType::Float32).reshape({4, 6}).slice(1, 0, 3);
  BOOST_TEST(cols.view({4, 1, 3}).shares_storage_with(cols));
}

BOOST_AUTO_TEST_CASE(transpose_and_permute_reorder_dimensions) {
  const Tensor x = Tensor::arange(0, 24, 1, DType::Float32).reshape({2, 3, 4});
  const Tensor p = x.permute({2, 0, 1});
  BOOST_TEST(p.shape() == (Shape{4, 2, 3}));
  BOOST_TEST(p.strides() == (Shape{1, 12, 4}));
  BOOST_TEST(p.at({3, 1, 2}) == x.at({1, 2, 3}));
  BOOST_TEST(!p.is_contiguous());
  BOOST_TEST(x.transpose(-1, 0).at({3, 2, 1}) == x.at({1, 2, 3}));
  expect_error<ShapeError>([&] { x.permute({0, 0, 1}); }, "permute: dims [0,0,1] repeat dimension 0");
  expect_error<ShapeError>(
      [&] {
        x.permute({0, 1});
      },
      "permute: dims [0,1] do not match a tensor of shape [2,3,4]");
  expect_error<ShapeError>([&] { x.transpose(0, 3); },
                           "transpose: dim 3 is out of range for a tensor of rank 3");
  expect_error<ShapeError>([&] { x.t(); }, "t: expects a 2-D tensor, got shape [2,3,4]");
}

BOOST_AUTO_TEST_CASE(slice_follows_python_rules) {
  const Tensor x = Tensor::arange(0, 10, 1, DType::Float32);
  expect_equal(x.slice(0, 2, 5), {2, 3, 4});
  expect_equal(x.slice(0, -3, 100), {7, 8, 9});
  expect_equal(x.slice(0, 1, 9, 3), {1, 4, 7});
  expect_equal(x.slice(0, 5, 2), {});
  const Tensor m = Tensor::arange(0, 12, 1, DType::Float32).reshape({3, 4});
  expect_equal(m.slice(1, 1, 3), {1, 2, 5, 6, 9, 10});
  BOOST_TEST(m.slice(1, 1, 3).shares_storage_with(m));
  expect_error<ValueError>([&] { x.slice(0, 0, 5, 0); }, "slice: step must be positive, got 0");
}

BOOST_AUTO_TEST_CASE(select_unsqueeze_squeeze_expand) {
  const Tensor m = Tensor::arange(0, 6, 1, DType::Float32).reshape({2, 3});
  expect_equal(m.select(1, -1), {2, 5});
  BOOST_TEST(m.unsqueeze(1).shape() == (Shape{2, 1, 3}));
  BOOST_TEST(m.unsqueeze(-1).shape() == (Shape{2, 3, 1}));
  BOOST_TEST(m.unsqueeze(0).squeeze(0).shape() == (Shape{2, 3}));
  expect_error<ShapeError>([&] { m.squeeze(0); }, "squeeze: dimension 0 of shape [2,3] is not 1");
  expect_error<IndexError>([&] { m.select(0, 2); },
                           "select: index 2 is out of range for dimension 0 of shape [2,3]");
  const Tensor row = Tensor::from_values({1, 2, 3}, {1, 3});
  const Tensor e = row.expand({2, 2, 3});
  BOOST_TEST(e.strides() == (Shape{0, 0, 1}));
  expect_equal(e, {1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3});
  expect_error<ShapeError>([&] { m.expand({4, 3}); }, "expand: cannot expand shape [2,3] to [4,3]");
}

BOOST_AUTO_TEST_CASE(contiguous_and_clone) {
  const Tensor m = Tensor::arange(0, 6, 1, DType::Float32).reshape({2, 3});
  BOOST_TEST(m.contiguous().shares_storage_with(m));
  BOOST_TEST(!m.clone().shares_storage_with(m));
  const Tensor t = m.t().contiguous();
  BOOST_TEST(t.is_contiguous());
  expect_equal(t, {0, 3, 1, 4, 2, 5});
}

BOOST_AUTO_TEST_CASE(concat_joins_along_a_dimension) {
  const Tensor a = Tensor::from_values({1, 2, 3, 4}, {2, 2}), b = Tensor::from_values({5, 6}, {2, 1});
  expect_equal(concat({a, b}, 1), {1, 2, 5, 3, 4, 6});
  expect_equal(concat({a, a.slice(0, 0, 1)}, 0), {1, 2, 3, 4, 1, 2});
  expect_error<ShapeError>(
      [&] {
        concat({a, b}, 0);
      },
      "concat: shapes [2,2] and [2,1] differ outside dimension 0");
  expect_error<DTypeError>(
      [&] {
        concat({a, a.to(DType::Float64)}, 0);
      },
      "concat: tensor 1 is float64, tensor 0 is float32");
  expect_error<ValueError>([] { concat(std::vector<Tensor>{}, 0); }, "concat: needs at least one tensor");
}

BOOST_AUTO_TEST_CASE(in_place_ops_write_through_views_and_bump_the_version) {
  const Tensor x = Tensor::zeros({2, 3});
  const uint64_t v0 = x.version();
  const Tensor row = x.select(0, 1);
  row.fill_(2);
  BOOST_TEST(x.version() == v0 + 1);  // one storage, one counter
  expect_equal(x, {0, 0, 0, 2, 2, 2});
  x.add_(Tensor::from_values({1, 2, 3}, {3}), 10);  // broadcast, alpha
  expect_equal(x, {10, 20, 30, 12, 22, 32});
  x.mul_(0.5);
  expect_equal(x, {5, 10, 15, 6, 11, 16});
  x.masked_fill_(Tensor::from_values({1, 0, 1}, {3}, DType::Bool), -1);
  expect_equal(x, {-1, 10, -1, -1, 11, -1});
  x.copy_(Tensor::scalar(4, DType::Int64));  // converts and broadcasts
  expect_equal(x, {4, 4, 4, 4, 4, 4});
  BOOST_TEST(x.version() == v0 + 5);
  expect_error<ShapeError>([&] { x.copy_(Tensor::zeros({4})); },
                           "copy_: shapes [4] and [2,3] cannot be broadcast together (4 vs 3 at dim -1)");
  expect_error<ShapeError>(
      [&] {
        x.add_(Tensor::zeros({3, 2, 3}));
      },
      "add_: shape [3,2,3] does not broadcast to [2,3]");
}

BOOST_AUTO_TEST_SUITE_END()
