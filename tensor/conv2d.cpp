// conv2d's kernels (tensor/conv2d.h): a chunk of images at a time, unfolded into columns that stay in
// cache, or Winograd's F(2×2, 3×3) where it applies (tensor/winograd.h).
#include "minigrad/tensor/conv2d.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "minigrad/tensor/map.h"
#include "minigrad/tensor/matmul.h"
#include "minigrad/tensor/threads.h"
#include "minigrad/tensor/window_rows.h"
#include "minigrad/tensor/winograd.h"

namespace minigrad {

using detail::window_row;
using detail::WindowRow;

namespace {

// The sizes of one convolution: x (N, C_in, H, W), weight (C_out, C_in/G, KH, KW), y (N, C_out, H_out,
// W_out).
struct ConvSizes {
  int64_t n, c_in, height, width, c_out, groups, kernel, out_h, out_w;  // kernel: KH·KW
  int64_t rows() const { return c_in / groups * kernel; }               // column rows per group
  int64_t all_rows() const { return c_in * kernel; }
  int64_t pixels() const { return out_h * out_w; }  // L = H_out·W_out
};

// The convolution's product for a chunk of B images is, per group, weight_g (C_out/G, rows) times the
// chunk's columns (rows, B·L): one product as wide as B images, where one per image would be 196 columns
// wide in a 14×14 layer, too narrow for BLAS's peak. The columns are laid out with the batch inside, row
// r holding image 0's L pixels, then image 1's, ...; B is chosen so that they fill about 1 MB of float32
// (about the cache a core has to itself) and every thread has a chunk. Each thread works on its own
// chunks (t, t + threads, ...) with its own scratch; inside a task the products run single-threaded
// (tensor/matmul.h).
struct ChunkPlan {
  int threads;
  int64_t images, count;  // images per chunk, chunks

  explicit ChunkPlan(const ConvSizes& s) {
    constexpr int64_t kColumnsEntries = int64_t{1} << 18;
    threads = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(num_threads(), s.n)));
    const int64_t fitting =
        std::max<int64_t>(1, kColumnsEntries / std::max<int64_t>(1, s.all_rows() * s.pixels()));
    images = std::max<int64_t>(1, std::min(fitting, (s.n + threads - 1) / threads));
    count = (s.n + images - 1) / images;
  }
  // Calls work(t, first image, images) for every chunk of [0, N).
  template <typename Work>
  void run(int64_t n, Work work) const {
    parallel_run(threads, [&](int t) {
      for (int64_t i = t; i < count; i += threads) work(t, i * images, std::min(images, n - i * images));
    });
  }
};

// Each thread's scratch: `fixed` entries, then `per_image` for each image of a chunk.
template <typename T>
class ChunkScratch {
 public:
  ChunkScratch(const ChunkPlan& plan, int64_t fixed, int64_t per_image)
      : stride_(fixed + per_image * plan.images),
        data_(std::make_unique_for_overwrite<T[]>(static_cast<size_t>(plan.threads * stride_))) {}
  T* of(int t) const { return data_.get() + t * stride_; }

 private:
  int64_t stride_;
  std::unique_ptr<T[]> data_;
};

// Every column row's WindowRow, worked out once per call for all the chunks that share them.
std::vector<WindowRow> window_rows(const ConvSizes& s, const Conv2dGeometry& g) {
  std::vector<WindowRow> windows;
  windows.reserve(static_cast<size_t>(s.all_rows()));
  for (int64_t r = 0; r < s.all_rows(); ++r) windows.push_back(window_row(r, s.height, s.width, g));
  return windows;
}

// x's images [first, first + b) -> cols (G·rows, b·L), the batch inside each row. The padding's zeros
// are written only when b differs from the previous chunk's (`zeros_for`, initially 0): the entries they
// occupy depend on b alone.
template <typename T>
void unfold_chunk(const T* x, const ConvSizes& s, const std::vector<WindowRow>& windows, int64_t first,
                  int64_t b, T* cols, int64_t& zeros_for) {
  const int64_t pixels = s.pixels();
  if (zeros_for != b) std::fill_n(cols, s.all_rows() * b * pixels, T(0));
  zeros_for = b;
  for (int64_t r = 0; r < s.all_rows(); ++r) {
    for (int64_t i = 0; i < b; ++i) {
      unfold_row(x + (first + i) * s.c_in * s.height * s.width, windows[static_cast<size_t>(r)],
                 cols + (r * b + i) * pixels, /*zeros_in_place=*/true);
    }
  }
}

// Between images (b, C, L) and the chunk layout (C, b·L), C being C_out here.
template <typename T>
void to_chunk_layout(const T* images, int64_t b, int64_t channels, int64_t pixels, T* chunk) {
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t i = 0; i < b; ++i) {
      std::copy_n(images + (i * channels + c) * pixels, pixels, chunk + (c * b + i) * pixels);
    }
  }
}
template <typename T>
void from_chunk_layout(const T* chunk, int64_t b, int64_t channels, int64_t pixels, T* images) {
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t i = 0; i < b; ++i) {
      std::copy_n(chunk + (c * b + i) * pixels, pixels, images + (i * channels + c) * pixels);
    }
  }
}

ConvSizes conv_sizes(std::string_view op, const Shape& x, const Shape& weight, const Conv2dGeometry& g,
                     int64_t groups) {
  if (x.rank() != 4 || weight.rank() != 4 || groups < 1 || x[1] % groups != 0 || weight[0] % groups != 0 ||
      weight[1] * groups != x[1] || weight[2] != g.height.kernel || weight[3] != g.width.kernel) {
    throw ShapeError(op, "input " + x.str() + " and weight " + weight.str() +
                             " do not make a convolution in " + std::to_string(groups) + " groups with a " +
                             std::to_string(g.height.kernel) + "×" + std::to_string(g.width.kernel) +
                             " kernel");
  }
  check_window(op, g.height, x[2]);
  check_window(op, g.width, x[3]);
  return {.n = x[0],
          .c_in = x[1],
          .height = x[2],
          .width = x[3],
          .c_out = weight[0],
          .groups = groups,
          .kernel = weight[2] * weight[3],
          .out_h = g.height.out_length(x[2]),
          .out_w = g.width.out_length(x[3])};
}

void check_output_grad(std::string_view op, const Tensor& gy, const ConvSizes& s) {
  const Shape expected{s.n, s.c_out, s.out_h, s.out_w};
  if (gy.shape() != expected) {
    throw ShapeError(
        op, "the output's gradient has shape " + gy.shape().str() + ", the output " + expected.str());
  }
}

// The sizes of the Winograd convolution that computes conv2d's forward, or with
// WinogradFilters::input_grad its input's gradient, if it applies to the geometry (tensor/winograd.h).
std::optional<detail::WinogradSizes> winograd_sizes(const ConvSizes& s, const Conv2dGeometry& g,
                                                    detail::WinogradFilters filters) {
  const int64_t c_in_g = s.c_in / s.groups, c_out_g = s.c_out / s.groups;
  const bool forward = filters == detail::WinogradFilters::forward;
  if (forward ? !detail::winograd_applies(g, c_in_g)
              : !detail::winograd_applies_to_input_grad(g, c_in_g, c_out_g)) {
    return std::nullopt;
  }
  // The forward convolves x (N, C_in, H, W), padded by p, into y (N, C_out, H_out, W_out); the input's
  // gradient convolves gy, padded by 2 - p, into the gradient (N, C_in, H, W).
  return detail::WinogradSizes{.c_in = forward ? s.c_in : s.c_out,
                               .height = forward ? s.height : s.out_h,
                               .width = forward ? s.width : s.out_w,
                               .c_out = forward ? s.c_out : s.c_in,
                               .groups = s.groups,
                               .pad_top = forward ? g.height.pad_left : 2 - g.height.pad_left,
                               .pad_left = forward ? g.width.pad_left : 2 - g.width.pad_left,
                               .out_h = forward ? s.out_h : s.height,
                               .out_w = forward ? s.out_w : s.width};
}

// Winograd's F(2×2, 3×3) for this convolution's forward or its input's gradient (`filters`), if it applies
// to the geometry (a 3×3 kernel at stride 1 and dilation 1, with kWinogradMinChannels (32) or more
// channels a group; padding of at most 2 for the gradient) and the weights hold no value it refuses (a
// non-finite one, or one large enough for its sums to overflow); otherwise none: the columns' path.
template <typename T>
std::optional<detail::WinogradConv<T>> winograd_for(const ConvSizes& s, const Conv2dGeometry& g,
                                                    const T* weight, detail::WinogradFilters filters) {
  std::optional<detail::WinogradConv<T>> winograd;
  if (const auto sizes = winograd_sizes(s, g, filters)) {
    winograd.emplace(weight, *sizes, filters);
    if (!winograd->usable()) winograd.reset();
  }
  return winograd;
}

// Runs `winograd` on every chunk, from the images at `in` into those at `out`; false if a chunk's
// images hold a value it refuses (tensor/winograd.h): then the whole call is to run on the columns, so
// that every image takes the same path whatever its chunk, and so whatever the thread count.
template <typename T>
bool run_winograd(const detail::WinogradConv<T>& winograd, const ChunkPlan& plan, int64_t n, const T* in,
                  int64_t in_image, const ChunkScratch<T>& scratch, T* out, int64_t out_image) {
  std::atomic<bool> refused = false;
  plan.run(n, [&](int t, int64_t first, int64_t b) {
    if (refused.load(std::memory_order_relaxed)) return;
    if (!winograd.run_chunk(in + first * in_image, b, scratch.of(t), out + first * out_image)) {
      refused.store(true, std::memory_order_relaxed);
    }
  });
  return !refused.load(std::memory_order_relaxed);
}

}  // namespace

Tensor conv2d_forward(const Tensor& x, const Tensor& weight, const Conv2dGeometry& g, int64_t groups) {
  const ConvSizes s = conv_sizes("conv2d", x.shape(), weight.shape(), g, groups);
  Tensor y = Tensor::empty({s.n, s.c_out, s.out_h, s.out_w}, x.dtype());
  if (y.numel() == 0) return y;
  const Tensor xc = x.contiguous(), wc = weight.contiguous();
  dispatch_float(x.dtype(), "conv2d", [&]<typename T>() {
    const T* px = xc.data_ptr<const T>();
    const T* pw = wc.data_ptr<const T>();
    T* py = y.data_ptr<T>();
    const int64_t rows = s.rows(), c_out_g = s.c_out / s.groups, pixels = s.pixels();
    const ChunkPlan plan(s);
    const std::vector<WindowRow> windows = window_rows(s, g);
    // Winograd's, unless it does not apply or the images hold a value it refuses (run_winograd).
    const auto winograd = winograd_for(s, g, pw, detail::WinogradFilters::forward);
    // Per thread: Winograd's scratch, or the chunk's columns (G·rows, B·L) and its output (C_out, B·L).
    const ChunkScratch<T> scratch(
        plan, 0, std::max(winograd ? winograd->scratch_per_image() : 0, (s.all_rows() + s.c_out) * pixels));
    if (winograd &&
        run_winograd(*winograd, plan, s.n, px, s.c_in * s.height * s.width, scratch, py, s.c_out * pixels)) {
      return;
    }
    std::vector<int64_t> zeros_for(static_cast<size_t>(plan.threads), 0);
    plan.run(s.n, [&](int t, int64_t first, int64_t b) {
      T* cols = scratch.of(t);
      T* out = cols + s.all_rows() * b * pixels;
      unfold_chunk(px, s, windows, first, b, cols, zeros_for[t]);
      for (int64_t gr = 0; gr < s.groups; ++gr) {  // out_g (C_out/G, B·L) = weight_g · cols_g
        gemm(false, false, c_out_g, b * pixels, rows, T(1), pw + gr * c_out_g * rows, rows,
             cols + gr * rows * b * pixels, b * pixels, T(0), out + gr * c_out_g * b * pixels, b * pixels);
      }
      from_chunk_layout(out, b, s.c_out, pixels, py + first * s.c_out * pixels);
    });
  });
  return y;
}

Tensor conv2d_input_grad(const Tensor& gy, const Tensor& weight, int64_t height, int64_t width,
                         const Conv2dGeometry& g, int64_t groups) {
  const Shape x_shape{gy.rank() == 4 ? gy.shape()[0] : 0, weight.rank() == 4 ? weight.shape()[1] * groups : 0,
                      height, width};
  const ConvSizes s = conv_sizes("conv2d_input_grad", x_shape, weight.shape(), g, groups);
  check_output_grad("conv2d_input_grad", gy, s);
  if (x_shape.numel() == 0 || gy.numel() == 0) return Tensor::zeros(x_shape, gy.dtype());
  // Every entry written: by Winograd's output transform, or zeroed chunk by chunk just before its col2im.
  Tensor gx = Tensor::empty(x_shape, gy.dtype());
  const Tensor gc = gy.contiguous(), wc = weight.contiguous();
  dispatch_float(gy.dtype(), "conv2d_input_grad", [&]<typename T>() {
    const T* pg = gc.data_ptr<const T>();
    const T* pw = wc.data_ptr<const T>();
    T* px = gx.data_ptr<T>();
    const int64_t rows = s.rows(), c_out_g = s.c_out / s.groups, pixels = s.pixels();
    const ChunkPlan plan(s);
    const std::vector<WindowRow> windows = window_rows(s, g);
    // Winograd's convolution of gy, unless it does not apply or gy holds a value it refuses.
    const auto winograd = winograd_for(s, g, pw, detail::WinogradFilters::input_grad);
    // Per thread: Winograd's scratch, or the chunk's output gradient (C_out, B·L) and then its columns'
    // gradient (G·rows, B·L).
    const ChunkScratch<T> scratch(
        plan, 0, std::max(winograd ? winograd->scratch_per_image() : 0, (s.c_out + s.all_rows()) * pixels));
    if (winograd &&
        run_winograd(*winograd, plan, s.n, pg, s.c_out * pixels, scratch, px, s.c_in * height * width)) {
      return;
    }
    plan.run(s.n, [&](int t, int64_t first, int64_t b) {
      T* g_chunk = scratch.of(t);
      T* cols = g_chunk + s.c_out * b * pixels;
      to_chunk_layout(pg + first * s.c_out * pixels, b, s.c_out, pixels, g_chunk);
      for (int64_t gr = 0; gr < s.groups; ++gr) {  // cols_g (rows, B·L) = weight_gᵀ · g_g
        gemm(true, false, rows, b * pixels, c_out_g, T(1), pw + gr * c_out_g * rows, rows,
             g_chunk + gr * c_out_g * b * pixels, b * pixels, T(0), cols + gr * rows * b * pixels,
             b * pixels);
      }
      // The chunk's images (b, C_in, H, W), zeroed here, where they are about to be read, rather than
      // the whole gradient in a cold pass first.
      T* images = px + first * s.c_in * height * width;
      std::fill_n(images, b * s.c_in * height * width, T(0));
      for (int64_t r = 0; r < s.all_rows(); ++r) {  // col2im
        for (int64_t i = 0; i < b; ++i) {
          fold_scratch_row(cols + (r * b + i) * pixels, windows[static_cast<size_t>(r)],
                           images + i * s.c_in * height * width);
        }
      }
    });
  });
  return gx;
}

Tensor conv2d_weight_grad(const Tensor& gy, const Tensor& x, const Conv2dGeometry& g, int64_t groups) {
  const Shape w_shape{gy.rank() == 4 ? gy.shape()[1] : 0,
                      x.rank() == 4 && groups > 0 ? x.shape()[1] / groups : 0, g.height.kernel,
                      g.width.kernel};
  const ConvSizes s = conv_sizes("conv2d_weight_grad", x.shape(), w_shape, g, groups);
  check_output_grad("conv2d_weight_grad", gy, s);
  Tensor gw = Tensor::zeros(w_shape, x.dtype());
  if (gw.numel() == 0 || gy.numel() == 0) return gw;
  const Tensor gc = gy.contiguous(), xc = x.contiguous();
  dispatch_float(x.dtype(), "conv2d_weight_grad", [&]<typename T>() {
    const T* pg = gc.data_ptr<const T>();
    const T* px = xc.data_ptr<const T>();
    const int64_t rows = s.rows(), c_out_g = s.c_out / s.groups, pixels = s.pixels();
    const int64_t size = gw.numel();
    const ChunkPlan plan(s);
    const std::vector<WindowRow> windows = window_rows(s, g);
    // Per thread: the sum of its chunks' products, transposed (per group, rows × C_out/G: BLAS runs
    // cols_g · g_gᵀ faster than g_g · cols_gᵀ at these shapes; docs/performance.md, "Image layers"), the
    // chunk's output gradient (C_out, B·L) and its columns (G·rows, B·L). The sums are added at the end, in
    // thread order.
    const ChunkScratch<T> scratch(plan, size, (s.c_out + s.all_rows()) * pixels);
    for (int t = 0; t < plan.threads; ++t) std::fill_n(scratch.of(t), size, T(0));
    std::vector<int64_t> zeros_for(static_cast<size_t>(plan.threads), 0);
    plan.run(s.n, [&](int t, int64_t first, int64_t b) {
      T* sum = scratch.of(t);
      T* g_chunk = sum + size;
      T* cols = g_chunk + s.c_out * b * pixels;
      to_chunk_layout(pg + first * s.c_out * pixels, b, s.c_out, pixels, g_chunk);
      unfold_chunk(px, s, windows, first, b, cols, zeros_for[t]);
      for (int64_t gr = 0; gr < s.groups; ++gr) {  // weight_gᵀ (rows, C_out/G) += cols_g · g_gᵀ
        gemm(false, true, rows, c_out_g, b * pixels, T(1), cols + gr * rows * b * pixels, b * pixels,
             g_chunk + gr * c_out_g * b * pixels, b * pixels, T(1), sum + gr * rows * c_out_g, c_out_g);
      }
    });
    T* out = gw.data_ptr<T>();  // (C_out, rows) = per group the transpose of the sums
    for (int t = 0; t < plan.threads; ++t) {
      const T* p = scratch.of(t);
      for (int64_t gr = 0; gr < s.groups; ++gr) {
        for (int64_t o = 0; o < c_out_g; ++o) {
          for (int64_t r = 0; r < rows; ++r) {
            out[(gr * c_out_g + o) * rows + r] += p[(gr * rows + r) * c_out_g + o];
          }
        }
      }
    }
  });
  return gw;
}

}  // namespace minigrad
