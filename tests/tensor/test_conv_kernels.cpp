// conv2d's kernels (tensor/conv2d.h) against the textbook loops, in float64 (Winograd's in float32 too):
// the forward, the input's gradient and the weight's, on geometries that take each of their paths (the
// flat copy of a 'same' convolution, strides, dilations, groups, uneven padding, Winograd's forward and
// input gradient) and on a batch whose chunks differ in size, on one thread and on two.
#include <cstring>
#include <utility>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {

struct Case {
  const char* name;
  Shape x, weight;
  Conv2dGeometry g;
  int64_t groups = 1;
};

// y, gx and gw by the definition: y[n, o, oh, ow] = Σ_c Σ_kh Σ_kw w[o, c, kh, kw] · x[n, group·C_in/G + c,
// oh·stride + kh·dilation - pad, ...], and the two gradients of ⟨y, gy⟩ by the same loops.
struct Reference {
  std::vector<double> y, gx, gw;
};
Reference textbook(const Case& c, const Tensor& x, const Tensor& w, const Tensor& gy) {
  const int64_t n = c.x[0], c_in = c.x[1], h = c.x[2], wd = c.x[3], c_out = c.weight[0];
  const int64_t kh = c.weight[2], kw = c.weight[3], cg = c_in / c.groups, og = c_out / c.groups;
  const int64_t ho = c.g.height.out_length(h), wo = c.g.width.out_length(wd);
  const std::vector<double> xs = x.to_vector<double>(), ws = w.to_vector<double>(),
                            gs = gy.to_vector<double>();
  Reference r{std::vector<double>(static_cast<size_t>(n * c_out * ho * wo)), std::vector<double>(xs.size()),
              std::vector<double>(ws.size())};
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < c_out; ++o)
      for (int64_t i = 0; i < ho; ++i)
        for (int64_t j = 0; j < wo; ++j) {
          const size_t yi = static_cast<size_t>(((b * c_out + o) * ho + i) * wo + j);
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t p = 0; p < kh; ++p)
              for (int64_t q = 0; q < kw; ++q) {
                const int64_t ih = i * c.g.height.stride + p * c.g.height.dilation - c.g.height.pad_left;
                const int64_t iw = j * c.g.width.stride + q * c.g.width.dilation - c.g.width.pad_left;
                if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
                const size_t xi = static_cast<size_t>(((b * c_in + o / og * cg + ci) * h + ih) * wd + iw);
                const size_t wi = static_cast<size_t>(((o * cg + ci) * kh + p) * kw + q);
                r.y[yi] += ws[wi] * xs[xi];
                r.gx[xi] += ws[wi] * gs[yi];
                r.gw[wi] += xs[xi] * gs[yi];
              }
        }
  return r;
}

Conv2dGeometry same_3x3() {
  const Conv1dGeometry axis{.kernel = 3, .pad_left = 1, .pad_right = 1};
  return {.height = axis, .width = axis};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(conv_kernels)

BOOST_AUTO_TEST_CASE(conv2d_kernels_match_the_textbook_loops) {
  const std::vector<Case> cases{
      // 3 images of 2×80×80 fill about two chunks' worth of columns each: chunks of 2 and then 1 image.
      {"'same' 3x3, chunks of two sizes", {3, 2, 80, 80}, {4, 2, 3, 3}, same_3x3()},
      {"'same' 3x3, small images", {5, 3, 6, 7}, {4, 3, 3, 3}, same_3x3()},
      {"'same' 2x2: one padding row and column, after",
       {4, 3, 6, 6},
       {2, 3, 2, 2},
       {.height = {.kernel = 2, .pad_right = 1}, .width = {.kernel = 2, .pad_right = 1}}},
      {"stride (2, 1), dilation (1, 2), padding (1, 0), groups 2",
       {5, 4, 7, 9},
       {6, 2, 3, 2},
       {.height = {.kernel = 3, .stride = 2, .pad_left = 1, .pad_right = 1},
        .width = {.kernel = 2, .dilation = 2}},
       2},
      {"stride 1, no padding", {2, 2, 5, 6}, {3, 2, 3, 3}, {.height = {.kernel = 3}, .width = {.kernel = 3}}},
      // 32 input channels a group and more: the forward's Winograd path (tensor/winograd.h); 32 input and
      // 32 output channels and more: the input gradient's too, padded by 2 - p.
      {"Winograd both ways: 'same', odd height and width", {3, 32, 9, 7}, {32, 32, 3, 3}, same_3x3()},
      {"Winograd's forward: no padding, 6×5",
       {2, 32, 6, 5},
       {4, 32, 3, 3},
       {.height = {.kernel = 3}, .width = {.kernel = 3}}},
      {"Winograd both ways: no padding (the gradient's: 2), 6×5",
       {2, 32, 6, 5},
       {32, 32, 3, 3},
       {.height = {.kernel = 3}, .width = {.kernel = 3}}},
      {"Winograd both ways: 32 -> 48 channels", {2, 32, 5, 6}, {48, 32, 3, 3}, same_3x3()},
      {"Winograd both ways: one output pixel",
       {2, 32, 3, 3},
       {32, 32, 3, 3},
       {.height = {.kernel = 3}, .width = {.kernel = 3}}},
      {"Winograd both ways: padding (2, 0) and (1, 2)",
       {2, 32, 5, 6},
       {32, 32, 3, 3},
       {.height = {.kernel = 3, .pad_left = 2}, .width = {.kernel = 3, .pad_left = 1, .pad_right = 2}}},
      {"Winograd's forward, not its input gradient: padding 3 (the gradient's would be -1)",
       {2, 32, 4, 5},
       {32, 32, 3, 3},
       {.height = {.kernel = 3, .pad_left = 3, .pad_right = 3}, .width = {.kernel = 3, .pad_left = 1}}},
      {"Winograd's forward, not its input gradient: padding 3 after only",
       {2, 32, 5, 4},
       {32, 32, 3, 3},
       {.height = {.kernel = 3, .pad_right = 3}, .width = {.kernel = 3, .pad_left = 3}}},
      {"Winograd's forward: groups 2", {3, 64, 7, 8}, {6, 32, 3, 3}, same_3x3(), 2},
      {"Winograd both ways: groups 2, 32 -> 64 channels a group",
       {2, 64, 5, 6},
       {128, 32, 3, 3},
       same_3x3(),
       2},
      {"Winograd both ways: groups 2", {3, 64, 7, 8}, {64, 32, 3, 3}, same_3x3(), 2},
      // Columns of 2 images fill a chunk: chunks of 2, 2 and 1 image, on one thread and on two.
      {"Winograd both ways: chunks of two sizes", {5, 32, 20, 20}, {32, 32, 3, 3}, same_3x3()},
  };
  const int threads_before = num_threads();
  for (const int threads : {1, 2}) {
    set_num_threads(threads);
    for (const Case& c : cases) {
      BOOST_TEST_CONTEXT(c.name << ", " << threads << " thread(s)") {
        Generator gen(7);
        const Tensor x = Tensor::normal(c.x, 0, 1, DType::Float64, &gen);
        const Tensor w = Tensor::normal(c.weight, 0, 1, DType::Float64, &gen);
        const Shape y_shape{c.x[0], c.weight[0], c.g.height.out_length(c.x[2]), c.g.width.out_length(c.x[3])};
        const Tensor gy = Tensor::normal(y_shape, 0, 1, DType::Float64, &gen);
        const Reference r = textbook(c, x, w, gy);
        const Tensor y = conv2d_forward(x, w, c.g, c.groups);
        BOOST_TEST(y.shape() == y_shape);
        expect_close(y, r.y, 1e-10);
        expect_close(conv2d_input_grad(gy, w, c.x[2], c.x[3], c.g, c.groups), r.gx, 1e-10);
        expect_close(conv2d_weight_grad(gy, x, c.g, c.groups), r.gw, 1e-10);
      }
    }
  }
  set_num_threads(threads_before);
}

// Winograd's convolution mixes the pixels of a 4×4 tile: an inf that an output reads can come out NaN
// there, where the direct sum gives ±inf, and four pixels near the type's largest value can overflow. A
// call whose images (x for the forward, gy for the input's gradient) or weights hold such a value runs on
// the columns instead, so every output is what the direct sum gives (NaN, the same infinity, or the same
// number). 10 images of 20×20 make 5 chunks of 2 on one thread and on two; the odd values sit in images 0
// and 8 only, so the chunks between them would take Winograd's path if the decision were a chunk's:
// their bits would then be Winograd's, not those the columns give them when the odd value is in image 9.
BOOST_AUTO_TEST_CASE(conv2d_winograd_keeps_infinities_and_overflows_out) {
  const Case c{"Winograd with odd values", {10, 32, 20, 20}, {32, 32, 3, 3}, same_3x3()};
  auto at = [&](int64_t image, int64_t channel, int64_t row, int64_t col) {
    return static_cast<size_t>(((image * 32 + channel) * 20 + row) * 20 + col);
  };
  const int threads_before = num_threads();
  for (const bool input_grad : {false, true}) {
    // The kernel under test on `in` (x, or gy for the input's gradient), and the textbook's answer.
    auto run = [&](const Tensor& in, const Tensor& w) {
      return input_grad ? conv2d_input_grad(in, w, 20, 20, c.g, 1) : conv2d_forward(in, w, c.g, 1);
    };
    auto expected = [&](const Tensor& in, const Tensor& w) {
      const Tensor other = Tensor::zeros(c.x, DType::Float64);  // the same shape as y here
      return input_grad ? textbook(c, other, w, in).gx : textbook(c, in, w, other).y;
    };
    for (const DType dtype : {DType::Float64, DType::Float32}) {
      const double tol = dtype == DType::Float64 ? 1e-10 : 1e-4;
      Generator gen(11);
      const Tensor x = Tensor::normal(c.x, 0, 1, DType::Float64, &gen);
      const Tensor w = Tensor::normal(c.weight, 0, 1, DType::Float64, &gen);
      Tensor odd = x.clone();
      double* px = odd.data_ptr<double>();
      px[at(0, 3, 2, 3)] = INFINITY;
      px[at(0, 7, 0, 0)] = -INFINITY;  // a corner
      px[at(8, 9, 19, 19)] = NAN;      // the other corner
      Tensor huge = x.clone();
      for (const auto& [row, col] : {std::pair{6, 6}, {6, 7}, {7, 6}, {7, 7}}) {
        huge.data_ptr<double>()[at(8, 0, row, col)] = 1.5e38;  // near float32's largest, 3.4e38
      }
      Tensor inf_w = w.clone();
      inf_w.data_ptr<double>()[(1 * 32 + 4) * 9 + 4] = INFINITY;  // filter (1, 4)'s centre: reads every pixel
      const Tensor small_w = w * 0.01;  // so that the direct sums stay inside float32's range
      Tensor late_nan = x.clone();
      late_nan.data_ptr<double>()[at(9, 5, 10, 10)] = NAN;
      const std::vector<double> plain = expected(x, w), with_odd = expected(odd, w),
                                with_inf_w = expected(x, inf_w), with_huge = expected(huge, small_w);
      std::vector<float> on_one_thread;
      for (const int threads : {1, 2}) {
        set_num_threads(threads);
        BOOST_TEST_CONTEXT((input_grad ? "input gradient, " : "forward, ")
                           << dtype_name(dtype) << ", " << threads << " thread(s)") {
          const Tensor xd = x.to(dtype), wd = w.to(dtype);
          expect_close(run(xd, wd), plain, tol);
          const Tensor y_odd = run(odd.to(dtype), wd);
          expect_close(y_odd, with_odd, tol);
          expect_close(run(xd, inf_w.to(dtype)), with_inf_w, tol);
          if (dtype == DType::Float32) {
            const std::vector<double> got = run(huge.to(dtype), small_w.to(dtype)).to_vector<double>();
            for (size_t i = 0; i < got.size(); ++i) {
              BOOST_TEST(std::abs(got[i] - with_huge[i]) <= 1e-5 * std::max(1.0, std::abs(with_huge[i])),
                         "element " << i << ": " << got[i] << " vs " << with_huge[i]);
            }
            // Images 2 to 7 of a refused call, bit for bit as the columns give them, and not as Winograd.
            const std::vector<float> y_plain = run(xd, wd).to_vector<float>(),
                                     odd_bits = y_odd.to_vector<float>(),
                                     late_bits = run(late_nan.to(dtype), wd).to_vector<float>();
            const size_t image = y_plain.size() / 10, from = 2 * image, bytes = 6 * image * sizeof(float);
            BOOST_TEST(std::memcmp(odd_bits.data() + from, late_bits.data() + from, bytes) == 0);
            BOOST_TEST(std::memcmp(odd_bits.data() + from, y_plain.data() + from, bytes) != 0);
            // Bit for bit the same on one thread and on two, whose chunks are the same here.
            std::vector<float> bits = odd_bits;
            bits.insert(bits.end(), y_plain.begin(), y_plain.end());
            if (threads == 1) {
              on_one_thread = bits;
            } else {
              BOOST_REQUIRE_EQUAL(bits.size(), on_one_thread.size());
              BOOST_TEST(std::memcmp(bits.data(), on_one_thread.data(), bits.size() * sizeof(float)) == 0);
            }
          }
        }
      }
    }
  }
  set_num_threads(threads_before);
}

BOOST_AUTO_TEST_CASE(conv2d_kernels_name_shapes_that_do_not_fit) {
  const Tensor x = Tensor::zeros({2, 4, 5, 5}), w = Tensor::zeros({6, 3, 3, 3});
  expect_error<ShapeError>(
      [&] { conv2d_forward(x, w, same_3x3(), 1); },
      "conv2d: input [2,4,5,5] and weight [6,3,3,3] do not make a convolution in 1 groups "
      "with a 3×3 kernel");
  const Tensor w4 = Tensor::zeros({6, 4, 3, 3});
  expect_error<ShapeError>(
      [&] {
        conv2d_input_grad(Tensor::zeros({2, 6, 4, 5}), w4, 5, 5, same_3x3(), 1);
      },
      "conv2d_input_grad: the output's gradient has shape [2,6,4,5], the output [2,6,5,5]");
  expect_error<ShapeError>(
      [&] {
        conv2d_weight_grad(Tensor::zeros({2, 6, 5, 5}), Tensor::zeros({2, 4, 0, 5}), same_3x3(), 1);
      },
      "conv2d_weight_grad: the kernel spans 3 positions, more than the padded input's 2");
}

BOOST_AUTO_TEST_SUITE_END()
