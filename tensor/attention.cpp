#include "minigrad/tensor/attention.h"

#include <unistd.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "minigrad/tensor/elementwise.h"
#include "minigrad/tensor/matmul.h"
#include "minigrad/tensor/random.h"
#include "minigrad/tensor/softmax.h"
#include "minigrad/tensor/threads.h"

namespace minigrad {

void AttentionMask::check(std::string_view op, int64_t batch, int64_t n_q, int64_t n_k) const {
  if (valid_lens.defined()) {
    check_dtype(op, "valid_lens", valid_lens, DType::Int64);
    if (valid_lens.shape() != Shape{batch} && valid_lens.shape() != Shape{batch, n_q}) {
      throw ShapeError(op, "valid_lens must be (" + std::to_string(batch) + ") or (" + std::to_string(batch) +
                               ", " + std::to_string(n_q) + "), got " + valid_lens.shape().str());
    }
    // A length past the keys would mask nothing and hide a batch built for longer sequences.
    const std::vector<int64_t> lens = valid_lens.to_vector<int64_t>();
    for (size_t i = 0; i < lens.size(); ++i) {
      if (lens[i] < 0 || lens[i] > n_k) {
        throw ValueError(op, "valid_lens[" + std::to_string(i) + "] = " + std::to_string(lens[i]) +
                                 " is not in 0.." + std::to_string(n_k) + ", the number of keys");
      }
    }
  }
  if (key_padding_mask.defined() &&
      (key_padding_mask.dtype() != DType::Bool || key_padding_mask.shape() != Shape{batch, n_k})) {
    throw ShapeError(op, "key_padding_mask must be bool (" + std::to_string(batch) + ", " +
                             std::to_string(n_k) + "), got " +
                             describe(key_padding_mask.shape(), key_padding_mask.dtype()));
  }
}

Tensor AttentionMask::to_tensor(int64_t batch, int64_t n_q, int64_t n_k) const {
  check("attention mask", batch, n_q, n_k);
  Tensor hidden;  // bool, broadcastable to (B, n_q, n_k)
  auto hide = [&](const Tensor& more) { hidden = hidden.defined() ? logical_or(hidden, more) : more; };
  const Tensor key_index = Tensor::arange(n_k);  // (n_k)
  if (valid_lens.defined()) {
    hide(valid_lens.rank() == 1 ? ge(key_index, valid_lens.reshape({batch, 1, 1}))  // (B, 1, n_k)
                                : ge(key_index, valid_lens.unsqueeze(-1)));         // (B, n_q, n_k)
  }
  if (key_padding_mask.defined()) hide(key_padding_mask.unsqueeze(1));  // (B, 1, n_k)
  if (causal)
    hide(gt(key_index, Tensor::arange(n_q).unsqueeze(1)).unsqueeze(0));  // (1, n_q, n_k): key > query
  return hidden;
}

namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

// The shapes of one call, checked: G groups (the leading dimensions, B of them for the mask) of n_q
// queries and n_k keys, d wide, values d_v wide.
struct Sizes {
  int64_t groups, per_batch, n_q, n_k, d, d_v;
  Shape leading;
};

Sizes check_sizes(const Tensor& q, const Tensor& k, const Tensor& v) {
  if (!q.defined() || !k.defined() || !v.defined()) throw ValueError(kOp, "an operand is undefined");
  const int r = q.rank();
  auto leading = [](const Tensor& t) {
    return Shape(std::span<const int64_t>(t.shape().begin(), t.rank() - 2));
  };
  if (r < 3 || k.rank() != r || v.rank() != r || leading(k) != leading(q) || leading(v) != leading(q) ||
      q.shape()[r - 1] != k.shape()[r - 1] || k.shape()[r - 2] != v.shape()[r - 2]) {
    throw ShapeError(kOp,
                     "expects queries (B, …, n_q, d), keys (B, …, n_k, d), values (B, …, n_k, d_v), got " +
                         q.shape().str() + ", " + k.shape().str() + ", " + v.shape().str());
  }
  if (!is_floating(q.dtype()) || k.dtype() != q.dtype() || v.dtype() != q.dtype()) {
    throw DTypeError(kOp, "expects three float32 or three float64 tensors, got " +
                              std::string(dtype_name(q.dtype())) + ", " + std::string(dtype_name(k.dtype())) +
                              ", " + std::string(dtype_name(v.dtype())) +
                              conversion_hint({q.dtype(), k.dtype(), v.dtype()}));
  }
  const Shape lead = leading(q);
  return {lead.numel(),
          lead.numel() / q.shape()[0],
          q.shape()[r - 2],
          k.shape()[r - 2],
          q.shape()[r - 1],
          v.shape()[r - 1],
          lead};
}

Shape with_last_two(Shape shape, int64_t rows, int64_t cols) {
  shape.push_back(rows);
  shape.push_back(cols);
  return shape;
}

}  // namespace

int64_t attention_rows_per_block(int64_t n_q, int64_t n_k, size_t element_size) {
  // Half the L2 cache (256 KB where the system does not say), within [128 KB, 1 MB].
  static const int64_t block_bytes = [] {
    long l2 = 0;
#ifdef _SC_LEVEL2_CACHE_SIZE
    l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return l2 > 0 ? std::clamp<int64_t>(l2 / 2, int64_t{128} << 10, int64_t{1} << 20) : int64_t{256} << 10;
  }();
  return std::clamp<int64_t>(block_bytes / std::max<int64_t>(1, n_k * static_cast<int64_t>(element_size)), 1,
                             std::max<int64_t>(n_q, 1));
}

namespace {

// An operand as BLAS reads (or writes) it: group g's matrix starts at base + offset(g), its rows row_stride
// apart, each row contiguous. Multi-head attention's queries, keys and values are (B, h, n, head) views of
// (B, n, h·head) projections; read in place, with the row stride h·head, they need no copy. T is const for
// an input; an output must already have contiguous rows (laid_out_like makes it so).
template <typename T>
class Matrices {
 public:
  explicit Matrices(const Tensor& t) : tensor_(t.strides().back() == 1 ? t : t.contiguous()) {
    const int r = tensor_.rank();
    lead_shape_ = Shape(std::span<const int64_t>(tensor_.shape().begin(), r - 2));
    lead_strides_ = Shape(std::span<const int64_t>(tensor_.strides().begin(), r - 2));
    row_stride = tensor_.strides()[r - 2];
    if (row_stride < tensor_.shape().back()) {  // rows overlap (an expanded operand): copy
      tensor_ = tensor_.contiguous();
      lead_strides_ = Shape(std::span<const int64_t>(tensor_.strides().begin(), r - 2));
      row_stride = tensor_.strides()[r - 2];
    }
    base_ = tensor_.data_ptr<std::remove_const_t<T>>();
  }

  T* group(int64_t g) const {
    int64_t offset = 0;
    for (int d = lead_shape_.rank() - 1; d >= 0; --d) {
      offset += (g % lead_shape_[d]) * lead_strides_[d];
      g /= lead_shape_[d];
    }
    return base_ + offset;
  }

  int64_t row_stride = 0;

 private:
  Tensor tensor_;
  Shape lead_shape_, lead_strides_;
  T* base_ = nullptr;
};

// An uninitialised tensor of `shape` whose dimensions lie in memory in the order of `like`'s (by stride),
// its last dimension innermost. The output and gradients of multi-head attention thus come out in the
// (B, n, h, head) order of the projections, so that merging the heads back is a view, not a copy.
Tensor laid_out_like(const Tensor& like, const Shape& shape, DType dtype) {
  const int r = like.rank();
  std::vector<int> order(r);  // dimensions from outermost to innermost in memory
  for (int d = 0; d < r; ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return like.strides()[a] > like.strides()[b]; });
  if (order.back() != r - 1) return Tensor::empty(shape, dtype);  // an unusual layout: plain row-major
  Shape physical, inverse = Shape::filled(r, 0);
  for (int i = 0; i < r; ++i) {
    physical.push_back(shape[order[i]]);
    inverse[order[i]] = i;
  }
  return Tensor::empty(physical, dtype).permute(inverse);
}

// Sets the hidden scores of query i's row (of batch element b) to -inf, from the mask's description.
template <typename T>
class RowMask {
 public:
  RowMask(const AttentionMask& mask, int64_t n_q, int64_t n_k)
      : n_q_(n_q),
        n_k_(n_k),
        causal_(mask.causal),
        per_query_(mask.valid_lens.defined() && mask.valid_lens.rank() == 2) {
    if (mask.valid_lens.defined()) valid_ = mask.valid_lens.contiguous();
    if (mask.key_padding_mask.defined()) padding_ = mask.key_padding_mask.contiguous();
  }

  void apply(T* row, int64_t b, int64_t i) const {
    constexpr T kHidden = -std::numeric_limits<T>::infinity();
    int64_t visible = n_k_;  // keys [visible, n_k) are hidden
    if (valid_.defined())
      visible = std::min(visible, valid_.data_ptr<const int64_t>()[per_query_ ? b * n_q_ + i : b]);
    if (causal_) visible = std::min(visible, i + 1);
    for (int64_t j = std::max<int64_t>(visible, 0); j < n_k_; ++j) row[j] = kHidden;
    if (padding_.defined()) {
      const bool* pad = padding_.data_ptr<const bool>() + b * n_k_;
      for (int64_t j = 0; j < std::min(visible, n_k_); ++j) {
        if (pad[j]) row[j] = kHidden;
      }
    }
  }

 private:
  int64_t n_q_, n_k_;
  bool causal_, per_query_;
  Tensor valid_, padding_;
};

}  // namespace

AttentionForward attention_forward(const Tensor& q, const Tensor& k, const Tensor& v,
                                   const AttentionMask& mask, double scale, double dropout, uint64_t seed) {
  const Sizes s = check_sizes(q, k, v);
  mask.check("attention mask", q.shape()[0], s.n_q, s.n_k);
  if (!(dropout >= 0 && dropout <= 1))
    throw ValueError(kOp, "dropout must be in [0, 1], got " + std::to_string(dropout));
  const Shape output_shape = with_last_two(s.leading, s.n_q, s.d_v);
  const Shape weights_shape = with_last_two(s.leading, s.n_q, s.n_k);
  if (s.groups == 0 || s.n_q == 0 || s.n_k == 0) {
    return {Tensor::zeros(output_shape, q.dtype()), Tensor::zeros(weights_shape, q.dtype())};
  }
  // Every element of both is written below.
  AttentionForward result{laid_out_like(q, output_shape, q.dtype()), Tensor::empty(weights_shape, q.dtype())};
  const DropoutMask drop(dropout, seed);
  dispatch_float(q.dtype(), kOp, [&]<typename T>() {
    const RowMask<T> row_mask(mask, s.n_q, s.n_k);
    const Matrices<const T> Q(q), K(k), V(v);
    const Matrices<T> O(result.output);
    T* W = result.weights.data_ptr<T>();
    const int64_t block = attention_rows_per_block(s.n_q, s.n_k, sizeof(T));
    parallel_for(s.groups, s.n_q * s.n_k * (s.d + s.d_v), [&](int64_t begin, int64_t end) {
      std::vector<T> dropped(dropout > 0 ? block * s.n_k : 0);  // this block's weights after dropout
      for (int64_t g = begin; g < end; ++g) {
        const int64_t b = g / s.per_batch;
        const T* Qg = Q.group(g);
        const T* Kg = K.group(g);
        const T* Vg = V.group(g);
        for (int64_t i0 = 0; i0 < s.n_q; i0 += block) {
          const int64_t rows = std::min(block, s.n_q - i0);
          const int64_t first = (g * s.n_q + i0) * s.n_k;  // the block's first weight, in the whole tensor
          T* P = W + first;
          gemm(false, true, rows, s.n_k, s.d, T(scale), Qg + i0 * Q.row_stride, Q.row_stride, Kg,
               K.row_stride, T(0), P, s.n_k);
          for (int64_t r = 0; r < rows; ++r) {
            row_mask.apply(P + r * s.n_k, b, i0 + r);
            softmax_row_in_place(P + r * s.n_k, s.n_k);
          }
          const T* Pd = P;
          if (dropout > 0) {
            drop.apply(P, dropped.data(), first, rows * s.n_k);
            Pd = dropped.data();
          }
          gemm(false, false, rows, s.d_v, s.n_k, T(1), Pd, s.n_k, Vg, V.row_stride, T(0),
               O.group(g) + i0 * O.row_stride, O.row_stride);
        }
      }
    });
  });
  return result;
}

namespace {

// softmax's backward, row by row: weights P (rows, n), dP (rows, n) -> dS = P ⊙ (dP - Σ dP ⊙ P) in place.
template <typename T>
void softmax_backward_rows(const T* P, int64_t rows, int64_t n, T* D) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* p = P + r * n;
    T* d = D + r * n;
    T dot = 0;
#pragma omp simd reduction(+ : dot)  // (a sum in any order: lets the compiler vectorize it)
    for (int64_t j = 0; j < n; ++j) dot += d[j] * p[j];
      // A key with weight 0 (masked) gets 0, as masked_fill's backward gives it in the composed form and in
      // PyTorch, even when a NaN in its value made dP and the dot NaN.
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) d[j] = p[j] == T(0) ? T(0) : p[j] * (d[j] - dot);
  }
}

}  // namespace

AttentionGradients attention_backward(const Tensor& grad_output, const Tensor& q, const Tensor& k,
                                      const Tensor& v, const Tensor& weights, double scale, double dropout,
                                      uint64_t seed, std::array<bool, 3> needs) {
  const Sizes s = check_sizes(q, k, v);
  if (grad_output.shape() != with_last_two(s.leading, s.n_q, s.d_v) ||
      weights.shape() != with_last_two(s.leading, s.n_q, s.n_k)) {
    throw ShapeError(kOp, "backward expects the gradient " + with_last_two(s.leading, s.n_q, s.d_v).str() +
                              " and the weights " + with_last_two(s.leading, s.n_q, s.n_k).str() + ", got " +
                              grad_output.shape().str() + " and " + weights.shape().str());
  }
  // Every element is written below (dK and dV by their first block of queries), unless a size is 0.
  const bool empty_sizes = s.groups == 0 || s.n_q == 0 || s.n_k == 0;
  auto gradient_like = [&](const Tensor& t) {
    return empty_sizes ? Tensor::zeros(t.shape(), t.dtype()) : laid_out_like(t, t.shape(), t.dtype());
  };
  AttentionGradients grads;
  if (needs[0]) grads.q = gradient_like(q);  // laid out like the input
  if (needs[1]) grads.k = gradient_like(k);
  if (needs[2]) grads.v = gradient_like(v);
  if (empty_sizes) return grads;
  const Tensor wc = weights.contiguous();
  const DropoutMask drop(dropout, seed);
  const bool scores_needed = needs[0] || needs[1];
  dispatch_float(q.dtype(), kOp, [&]<typename T>() {
    const Matrices<const T> Q(q), K(k), V(v), dO(grad_output);
    const T* W = wc.data_ptr<const T>();
    const std::optional<Matrices<T>> dQ = needs[0] ? std::optional(Matrices<T>(grads.q)) : std::nullopt;
    const std::optional<Matrices<T>> dK = needs[1] ? std::optional(Matrices<T>(grads.k)) : std::nullopt;
    const std::optional<Matrices<T>> dV = needs[2] ? std::optional(Matrices<T>(grads.v)) : std::nullopt;
    const int64_t block = attention_rows_per_block(s.n_q, s.n_k, sizeof(T));
    parallel_for(s.groups, 2 * s.n_q * s.n_k * (s.d + s.d_v), [&](int64_t begin, int64_t end) {
      // This block's dropout factors, generated once for both their uses (Pd and dP), and Pd.
      std::vector<T> factors(dropout > 0 ? block * s.n_k : 0);
      std::vector<T> dropped(needs[2] && dropout > 0 ? block * s.n_k : 0);
      std::vector<T> dS(scores_needed ? block * s.n_k : 0);  // dPd, then dP, then dS
      const T* F = factors.data();
      for (int64_t g = begin; g < end; ++g) {
        for (int64_t i0 = 0; i0 < s.n_q; i0 += block) {
          const int64_t rows = std::min(block, s.n_q - i0);
          const int64_t first = (g * s.n_q + i0) * s.n_k;
          const T* P = W + first;
          const T* dO_block = dO.group(g) + i0 * dO.row_stride;
          const T* Q_block = Q.group(g) + i0 * Q.row_stride;
          const T accumulate = i0 == 0 ? T(0) : T(1);  // dK and dV sum over the blocks of queries
          if (dropout > 0) drop.factors(factors.data(), first, rows * s.n_k);
          if (needs[2]) {  // dV += Pdᵀ·dO
            const T* Pd = P;
            if (dropout > 0) {
              T* pd = dropped.data();
#pragma omp simd
              for (int64_t j = 0; j < rows * s.n_k; ++j) pd[j] = P[j] * F[j];
              Pd = pd;
            }
            gemm(true, false, s.n_k, s.d_v, rows, T(1), Pd, s.n_k, dO_block, dO.row_stride, accumulate,
                 dV->group(g), dV->row_stride);
          }
          if (!scores_needed) continue;
          T* D = dS.data();
          // dPd = dO·Vᵀ, then dP = dropout(dPd) with the forward's mask
          gemm(false, true, rows, s.n_k, s.d_v, T(1), dO_block, dO.row_stride, V.group(g), V.row_stride, T(0),
               D, s.n_k);
          if (dropout > 0) {
#pragma omp simd
            for (int64_t j = 0; j < rows * s.n_k; ++j) D[j] *= F[j];
          }
          softmax_backward_rows(P, rows, s.n_k, D);  // dP -> dS
          if (needs[0]) {                            // dQ = scale · dS·K
            gemm(false, false, rows, s.d, s.n_k, T(scale), D, s.n_k, K.group(g), K.row_stride, T(0),
                 dQ->group(g) + i0 * dQ->row_stride, dQ->row_stride);
          }
          if (needs[1]) {  // dK += scale · dSᵀ·Q
            gemm(true, false, s.n_k, s.d, rows, T(scale), D, s.n_k, Q_block, Q.row_stride, accumulate,
                 dK->group(g), dK->row_stride);
          }
        }
      }
    });
  });
  return grads;
}

}  // namespace minigrad
