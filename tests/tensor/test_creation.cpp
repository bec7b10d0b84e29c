#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

BOOST_AUTO_TEST_SUITE(creation)

BOOST_AUTO_TEST_CASE(zeros_ones_full_have_shape_dtype_and_values) {
  const Tensor z = Tensor::zeros({2, 3}, DType::Float64);
  BOOST_TEST(z.shape() == (Shape{2, 3}));
  BOOST_TEST(z.dtype() == DType::Float64);
  BOOST_TEST(z.is_contiguous());
  expect_equal(z, {0, 0, 0, 0, 0, 0});
  expect_equal(Tensor::ones({3}), {1, 1, 1});
  expect_equal(Tensor::full({2}, -2.5), {-2.5, -2.5});
  expect_equal(Tensor::full({2}, 7, DType::Int64), {7, 7});
  expect_equal(Tensor::full({2}, 1, DType::Bool), {1, 1});
}

BOOST_AUTO_TEST_CASE(a_freed_large_buffer_serves_a_smaller_request) {
  // The sentiment model's attention weights are (batch, T, T) for a T that changes at every step: the
  // buffer freed at one step must serve the next step's smaller one, whose pages it has mapped already,
  // or every step faults in and zeroes fresh pages (tensor/storage.cpp's BufferCache).
  const float* freed = nullptr;
  {
    const Tensor big = Tensor::empty({96, 1024, 1024});  // 384 MB: larger than anything else this test leaves
    freed = big.data_ptr<float>();
  }
  const Tensor smaller = Tensor::empty({40, 1024, 1024});  // 160 MB, less than half of it
  BOOST_TEST(smaller.data_ptr<float>() == freed);
  // Two buffers alive at once never share.
  const Tensor other = Tensor::empty({40, 1024, 1024});
  BOOST_TEST(other.data_ptr<float>() != smaller.data_ptr<float>());
}

BOOST_AUTO_TEST_CASE(arange_counts_like_numpy) {
  expect_equal(Tensor::arange(0, 5, 1, DType::Float32), {0, 1, 2, 3, 4});
  expect_equal(Tensor::arange(1, 2, 0.25, DType::Float64), {1, 1.25, 1.5, 1.75});
  expect_equal(Tensor::arange(3, 0, -1, DType::Int64), {3, 2, 1});
  BOOST_TEST(Tensor::arange(4).dtype() == DType::Int64);
  BOOST_TEST(Tensor::arange(0, 0, 1).numel() == 0);
  expect_error<ValueError>([] { Tensor::arange(0, 1, 0); },
                           "arange: start, end and step must be finite and step non-zero");
}

BOOST_AUTO_TEST_CASE(from_values_and_from_vector) {
  const Tensor a = Tensor::from_values({1, 2, 3, 4, 5, 6}, {2, 3});
  BOOST_TEST(a.at({1, 2}) == 6);
  BOOST_TEST(a.at({0, 1}) == 2);
  const Tensor ids = Tensor::from_vector<int64_t>({5, 7}, {2});
  BOOST_TEST(ids.dtype() == DType::Int64);
  expect_equal(ids, {5, 7});
  expect_error<ShapeError>(
      [] {
        Tensor::from_values({1, 2, 3, 4, 5}, {2, 3});
      },
      "from_values: 5 values do not fill shape [2,3]");
  expect_error<ShapeError>(
      [] {
        Tensor::from_vector<float>({1, 2}, {3});
      },
      "from_vector: 2 values do not fill shape [3]");
}

BOOST_AUTO_TEST_CASE(scalar_item_and_at) {
  const Tensor s = Tensor::scalar(3.5, DType::Float64);
  BOOST_TEST(s.rank() == 0);
  BOOST_TEST(s.numel() == 1);
  BOOST_TEST(s.item() == 3.5);
  expect_error<ValueError>(
      [] {
        Tensor::zeros({2, 3}).item();
      },
      "item: a tensor of shape [2,3] has 6 elements, not 1");
  expect_error<IndexError>(
      [] {
        Tensor::zeros({2, 3}).at({1, 3});
      },
      "at: index 3 is out of range for dimension 1 of shape [2,3]");
  expect_error<IndexError>(
      [] {
        Tensor::zeros({2, 3}).at({1});
      },
      "at: 1 indices for a tensor of shape [2,3]");
}

BOOST_AUTO_TEST_CASE(data_ptr_checks_the_dtype) {
  const Tensor x = Tensor::zeros({2});
  BOOST_TEST(x.data_ptr<float>() != nullptr);
  expect_error<DTypeError>([&] { x.data_ptr<double>(); },
                           "data_ptr: asked for float64 elements of a float32 tensor");
}

BOOST_AUTO_TEST_CASE(conversions_between_dtypes) {
  const Tensor x = Tensor::from_values({-1.7, 0, 2.9}, {3}, DType::Float64);
  expect_equal(x.to(DType::Int64), {-1, 0, 2});  // truncation toward zero, as a C++ cast
  expect_equal(x.to(DType::Bool), {1, 0, 1});
  expect_close(x.to(DType::Float32), {-1.7, 0, 2.9}, 1e-6);
  BOOST_TEST(x.to(DType::Float64).shares_storage_with(x));  // same dtype: no copy
}

BOOST_AUTO_TEST_CASE(rows_of_counts_every_dimension_but_the_last) {
  BOOST_TEST(rows_of("t", Shape{2, 3, 4}) == 6);
  BOOST_TEST(rows_of("t", Shape{2, 3, 0}) == 6);  // no features, still six rows
  BOOST_TEST(rows_of("t", Shape{2, 0, 4}) == 0);
  BOOST_TEST(rows_of("t", Shape{5}) == 1);
  BOOST_TEST(rows_of("t", Shape{}) == 1);
  expect_error<ShapeError>(
      [] {
        rows_of("linear", Shape{int64_t{1} << 62, 4, 3});
      },
      "linear: shape [4611686018427387904,4] is too large: its element count overflows 64 bits");
}

BOOST_AUTO_TEST_CASE(bad_shapes_are_refused) {
  expect_error<ShapeError>([] { Tensor::empty({2, -1}); }, "tensor: negative size in shape [2,-1]");
  expect_error<ShapeError>(
      [] {
        Tensor::zeros({1, 1, 1, 1, 1, 1, 1, 1, 1});
      },
      "shape: tensors have at most 8 dimensions, got 9");
  // Sizes whose product overflows 64 bits: refused, not a tensor with 0 bytes of storage that segfaults
  // when read. [0, 2^62, 2^62] has no element, but its strides would be 2^124.
  expect_error<ShapeError>(
      [] {
        Tensor::zeros({int64_t{1} << 62, 4});
      },
      "tensor: shape [4611686018427387904,4] is too large: its element count overflows 64 bits");
  expect_error<ShapeError>(
      [] {
        Tensor::empty({0, int64_t{1} << 62, int64_t{1} << 62});
      },
      "tensor: shape [0,4611686018427387904,4611686018427387904] is too large: its element "
      "count overflows 64 bits");
  // The count fits but the bytes (8 each) do not.
  expect_error_containing<ShapeError>([] { Tensor::ones({int64_t{1} << 61}, DType::Float64); },
                                      "is too large");
  expect_error_containing<ShapeError>(
      [] {
        Tensor::zeros({1}).expand({int64_t{1} << 62, 4});
      },
      "expand: shape [4611686018427387904,4] is too large");
  expect_error_containing<ShapeError>(
      [] {
        Tensor::zeros({0}).reshape({0, int64_t{1} << 62, int64_t{1} << 62});
      },
      "reshape: shape [0,4611686018427387904,4611686018427387904] is too large");
  expect_error<ShapeError>(
      [] {
        Tensor::from_values({1, 2}, {int64_t{1} << 62, 4});
      },
      "shape: the element count of [4611686018427387904,4] overflows 64 bits");
  // Large but possible sizes that the machine cannot hold: a named error, not std::bad_alloc.
  expect_error_containing<Error>([] { Tensor::empty({int64_t{1} << 50}); }, "tensor: cannot allocate");
}

BOOST_AUTO_TEST_CASE(undefined_tensors_are_reported) {
  const Tensor none;
  BOOST_TEST(!none.defined());
  expect_error<ValueError>([&] { none.reshape({1}); },
                           "reshape: the tensor is undefined (default-constructed, or a missing gradient)");
  expect_error<ValueError>([&] { exp(none); },
                           "exp: the tensor is undefined (default-constructed, or a missing gradient)");
}

BOOST_AUTO_TEST_CASE(constants_survive_the_compiler) {
  // GCC 12.2 with AVX-512 and SLP vectorization stores {a, a, 0, 0} as {a, a, a, a} (see CMakeLists.txt).
  // Every test with literal expectations relies on this holding.
  const std::vector<int64_t> ints{2, 2, 0, 0};
  const std::vector<double> doubles{2, 2, 0, 0};
  BOOST_TEST(ints[2] == 0);
  BOOST_TEST(ints[3] == 0);
  BOOST_TEST(doubles[2] == 0.0);
  const Shape shape{2, 2, 0, 0};
  BOOST_TEST(shape[3] == 0);
  expect_equal(Tensor::from_values({2, 2, 0, 0}, {4}), doubles);
}

BOOST_AUTO_TEST_SUITE_END()
