// The differentiable ops. Each is defined in one .cpp file of this folder with its backward written
// directly under its forward:
//
//   arithmetic.cpp  add sub mul div neg, scalar forms, pow
//   unary.cpp       exp log log1p sqrt tanh sigmoid relu leaky_relu silu elu softplus gelu abs
//   matmul.cpp      matmul linear
//   shape_ops.cpp   reshape transpose permute slice select unbind concat stack unsqueeze squeeze flatten
//                   expand sum_to to
//   reduce_ops.cpp  sum mean max min
//   selection_ops.cpp clamp maximum minimum where
//   softmax_ops.cpp softmax log_softmax masked_fill
//   embedding.cpp   embedding          dropout.cpp  dropout
//   layer_norm.cpp  layer_norm
//   loss.cpp        cross_entropy binary_cross_entropy_with_logits mse_loss l1_loss smooth_l1_loss
//                   huber_loss nll_loss
//   attention.cpp   masked_softmax, scaled_dot_product_attention (fused, or composed from the above)
//   conv.cpp        conv1d, conv2d, and unfold1d/2d, fold1d/2d (im2col and its adjoint)
//   pooling.cpp     max_pool1d, avg_pool1d, max_over_time, mean_over_time, max_pool2d, avg_pool2d,
//                   adaptive_avg_pool2d
//   batch_norm.cpp  batch_norm
//   dropout.cpp     dropout, dropout2d
//
// Broadcasting follows NumPy; the gradient of a broadcast input is summed back to its shape (sum_to).
// Every op checks its operands and throws an exception naming itself and the shapes involved.
//
// The backward ops at the end are what the ops' backward functions call where a fused kernel pays: each
// is an op with a derivative of its own (so that gradients of gradients work) over a kernel in tensor/,
// as PyTorch's tanh_backward and friends are. Every kernel, forward or backward, lives in tensor/;
// this folder holds the ops' record() calls and their backwards (tests/layers/check_kernel_homes.py).
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "minigrad/autograd/grad.h"
#include "minigrad/autograd/graph.h"
#include "minigrad/tensor/attention.h"
#include "minigrad/tensor/loss.h"
#include "minigrad/tensor/unfold.h"

namespace minigrad {

// ---- arithmetic, with broadcasting ----
Variable add(const Variable& a, const Variable& b);
Variable sub(const Variable& a, const Variable& b);
Variable mul(const Variable& a, const Variable& b);
Variable div(const Variable& a, const Variable& b);
Variable neg(const Variable& x);
Variable add(const Variable& x, double s);
Variable mul(const Variable& x, double s);
Variable div(const Variable& x, double s);
Variable rsub(double s, const Variable& x);  // s - x
Variable rdiv(double s, const Variable& x);  // s / x
Variable pow(const Variable& x, double exponent);

// ---- elementwise functions ----
Variable exp(const Variable& x);
Variable log(const Variable& x);
Variable sqrt(const Variable& x);
Variable tanh(const Variable& x);
Variable sigmoid(const Variable& x);
Variable relu(const Variable& x);
Variable gelu(const Variable& x);   // exact: x·Φ(x)
Variable log1p(const Variable& x);  // log(1 + x), accurate for small x
// x where x > 0, else negative_slope·x, as torch.nn.functional.leaky_relu.
Variable leaky_relu(const Variable& x, double negative_slope = 0.01);
// x·σ(x), PyTorch's silu (swish).
Variable silu(const Variable& x);
// x where x > 0, else alpha·(e^x - 1).
Variable elu(const Variable& x, double alpha = 1.0);
// log(1 + e^(beta·x)) / beta, and x where beta·x > threshold, as torch.nn.functional.softplus.
Variable softplus(const Variable& x, double beta = 1.0, double threshold = 20.0);
Variable abs(const Variable& x);  // gradient sign(x), 0 at 0 as PyTorch

// ---- linear algebra ----
// [M,K] @ [K,N] -> [M,N]; batched for rank > 2, with batch dimensions broadcast.
Variable matmul(const Variable& a, const Variable& b);
// x·Wᵀ + b (PyTorch's F.linear) for x (..., in), weight (out, in), bias (out) or undefined (no bias).
Variable linear(const Variable& x, const Variable& weight, const Variable& bias);

// ---- shape ----
Variable reshape(const Variable& x, const Shape& shape);
Variable transpose(const Variable& x, int64_t dim0, int64_t dim1);
Variable permute(const Variable& x, const Shape& dims);
Variable slice(const Variable& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
// x's slice at `index` along `dim`, that dimension removed (x[index] for dim 0).
Variable select(const Variable& x, int64_t dim, int64_t index);
// Every slice of x along `dim`, as PyTorch's unbind: a (T, N, H) sequence as T steps of (N, H). The steps
// are parts of one node's output, so their gradients cost one buffer of x's shape, not T of them.
std::vector<Variable> unbind(const Variable& x, int64_t dim = 0);
// The gradient of select: zeros of shape `from` with g at `index` along `dim`.
Variable select_backward(const Variable& g, const Shape& from, int64_t dim, int64_t index);
Variable concat(const std::vector<Variable>& xs, int64_t dim = 0);
inline Variable cat(const std::vector<Variable>& xs, int64_t dim = 0) {
  return concat(xs, dim);
}  // torch.cat
// PyTorch's *_like of a Variable: constants of its shape and dtype (tensor/tensor.h).
inline Tensor zeros_like(const Variable& v) {
  return zeros_like(v.data());
}
inline Tensor ones_like(const Variable& v) {
  return ones_like(v.data());
}
inline Tensor full_like(const Variable& v, double value) {
  return full_like(v.data(), value);
}
inline Tensor rand_like(const Variable& v, Generator* generator = nullptr) {
  return rand_like(v.data(), generator);
}
inline Tensor randn_like(const Variable& v, Generator* generator = nullptr) {
  return randn_like(v.data(), generator);
}
// Variables of one shape joined along a new dimension `dim` (T steps of (N, H) as (T, N, H) for dim 0).
Variable stack(const std::vector<Variable>& xs, int64_t dim = 0);
Variable unsqueeze(const Variable& x, int64_t dim);
Variable squeeze(const Variable& x, int64_t dim);
// The same values in another dtype; between float32 and float64 differentiable (the gradient is converted
// back), to int64 or bool a constant, and the same Variable when the dtype is already `dtype`.
Variable to(const Variable& x, DType dtype);
// Dimensions start_dim..end_dim merged into one, as torch.flatten: (N, C, L) -> (N, C·L) with start_dim 1.
Variable flatten(const Variable& x, int64_t start_dim = 0, int64_t end_dim = -1);
// x repeated along broadcast dimensions to `shape` (NumPy rules); the gradient is summed back.
Variable expand(const Variable& x, const Shape& shape);
// x summed over the dimensions that broadcasting to x.shape() would repeat: the inverse of expand, and
// how a broadcast input's gradient returns to its shape.
Variable sum_to(const Variable& x, const Shape& shape);

// ---- reductions ----
Variable sum(const Variable& x, const Shape& dims, bool keepdim = false);
Variable sum(const Variable& x);
Variable mean(const Variable& x, const Shape& dims, bool keepdim = false);
Variable mean(const Variable& x);
// The maximum along `dim`; the gradient goes to the (first) position of the maximum. NaN wins, as in
// PyTorch: a NaN along dim gives NaN, and its gradient goes to the first NaN.
Variable max(const Variable& x, int64_t dim, bool keepdim = false);
// The minimum, the same way.
Variable min(const Variable& x, int64_t dim, bool keepdim = false);
// Over the whole tensor, a 0-dimensional value; the gradient is shared evenly by every element equal to
// it (the NaNs, if it is NaN), as PyTorch 1.13's.
Variable max(const Variable& x);
Variable min(const Variable& x);
// The p-norm of all elements, or along `dims` (tensor/reduce.h; autograd/norm.cpp): its gradient
// sign(x)·|x|^(p-1)/‖x‖^(p-1), x/‖x‖ for p = 2, and 0 where the norm is 0, as PyTorch's; for p = inf
// shared evenly by the elements of the largest |x|.
Variable norm(const Variable& x, double p = 2.0);
Variable norm(const Variable& x, double p, const Shape& dims, bool keepdim = false);

// ---- selection: the gradient goes to the value selected (autograd/selection_ops.cpp) ----
// min(max(x, min), max) for the bounds given, as torch.clamp; NaN stays NaN. The gradient passes where
// min <= x <= max and is 0 elsewhere (and at NaN, as PyTorch).
//   clamp(x, -1.0, 1.0);  clamp(x, 0.0, std::nullopt);  clamp_min(x, 0);  clamp_max(x, 1)
Variable clamp(const Variable& x, std::optional<double> min, std::optional<double> max);
Variable clamp_min(const Variable& x, double min);
Variable clamp_max(const Variable& x, double max);
// Elementwise max and min of a and b, broadcast; NaN in either gives NaN. The gradient goes to the operand
// chosen, half to each at a tie, and all of it to both where either is NaN (PyTorch 1.13's formula).
Variable maximum(const Variable& a, const Variable& b);
Variable minimum(const Variable& a, const Variable& b);
// cond ? a : b elementwise, cond a bool tensor; all three broadcast. The gradient goes to a where cond
// holds and to b elsewhere.
Variable where(const Tensor& cond, const Variable& a, const Variable& b);

// ---- softmax and masking ----
Variable softmax(const Variable& x, int64_t dim);
Variable log_softmax(const Variable& x, int64_t dim);
// x with `value` where mask (bool tensor, broadcast to x) is true; no gradient flows to those entries.
Variable masked_fill(const Variable& x, const Tensor& mask, double value);

// ---- attention ----
// softmax over the last dim of scores (B, …, n_q, n_k) with the keys the mask hides set to -inf first:
// their weights are exactly 0, and a query with every key hidden gets weights of 0 (tensor/softmax.h).
Variable masked_softmax(const Variable& scores, const AttentionMask& mask);

enum class AttentionKernel {
  Fused,     // one op, forward and backward written together (tensor/attention.h): the fast path
  Composed,  // matmul, masked_softmax, dropout, matmul: the readable reference, the same numbers
};

struct AttentionOptions {
  AttentionMask mask{};
  double scale = 0;    // multiplies Q·Kᵀ; 0 means 1/√d
  double dropout = 0;  // on the weights; pass 0 in evaluation
  uint64_t seed = 0;   // the dropout mask's (tensor/random.h's counter-based bits)
  AttentionKernel kernel = AttentionKernel::Fused;
};

struct AttentionResult {
  Variable output;  // (B, …, n_q, d_v)
  Tensor weights;   // (B, …, n_q, n_k), softmax of the masked scores, before dropout
};

// dropout(masked softmax(scale · Q·Kᵀ))·V for queries (B, …, n_q, d), keys (B, …, n_k, d) and values
// (B, …, n_k, d_v) with the same leading dimensions.
AttentionResult scaled_dot_product_attention(const Variable& queries, const Variable& keys,
                                             const Variable& values, const AttentionOptions& options = {});

// ---- convolution ----
struct Conv1dFuncOptions {  // the function's options; nn::Conv1dOptions are the layer's
  int64_t stride = 1;
  int64_t padding = 0;        // zeros on both sides
  bool padding_same = false;  // instead: the output as long as the input (PyTorch's padding='same', stride 1)
  int64_t dilation = 1;
  int64_t groups = 1;
};
// PyTorch's F.conv1d: x (N, C_in, L), weight (C_out, C_in/groups, K), bias (C_out) or undefined ->
// (N, C_out, L_out) with L_out = (L + 2·padding - dilation·(K-1) - 1) / stride + 1.
Variable conv1d(const Variable& x, const Variable& weight, const Variable& bias,
                const Conv1dFuncOptions& options = {});

// im2col, x (N, C, L) -> cols (N, C·K, L_out), and its adjoint col2im, cols -> (N, C, length): the
// windows a convolution reads (Conv1dGeometry and the kernels: tensor/unfold.h).
Variable unfold1d(const Variable& x, const Conv1dGeometry& geometry);
Variable fold1d(const Variable& cols, int64_t length, const Conv1dGeometry& geometry);

struct Conv2dFuncOptions {  // the function's options; nn::Conv2dOptions are the layer's
  Size2d stride = 1;
  Size2d padding = 0;  // zeros on both sides of each axis
  // Instead of padding: the output the size of the input (PyTorch's padding='same', stride 1).
  bool padding_same = false;
  Size2d dilation = 1;
  int64_t groups = 1;
};
// PyTorch's F.conv2d: x (N, C_in, H, W), weight (C_out, C_in/groups, KH, KW), bias (C_out) or undefined ->
// (N, C_out, H_out, W_out), each axis as conv1d's L_out.
Variable conv2d(const Variable& x, const Variable& weight, const Variable& bias,
                const Conv2dFuncOptions& options = {});
// im2col over images, x (N, C, H, W) -> cols (N, C·KH·KW, H_out·W_out), and its adjoint, cols -> (N, C,
// height, width) (tensor/unfold.h).
Variable unfold2d(const Variable& x, const Conv2dGeometry& geometry);
Variable fold2d(const Variable& cols, int64_t height, int64_t width, const Conv2dGeometry& geometry);

// ---- batch normalization (autograd/batch_norm.cpp) ----
struct BatchNormFuncOptions {
  bool training = false;  // the batch's statistics (and an update of the running ones), or the running ones
  double momentum = 0.1;  // the running statistics' step toward the batch's
  double eps = 1e-5;
};
// PyTorch's F.batch_norm: x (N, C, ...) normalised per channel; running_mean and running_var (C) or
// undefined (training only), updated in place when training; weight and bias (C) or both undefined.
Variable batch_norm(const Variable& x, const Tensor& running_mean, const Tensor& running_var,
                    const Variable& weight, const Variable& bias, const BatchNormFuncOptions& options = {});
// Its backward in training (the batch-statistics derivative): dx, and dweight and dbias where asked
// (needs), from the forward's per-channel mean and rstd. One fused kernel (tensor/batch_norm.h) when no
// graph is recorded; the same formulas composed of differentiable ops when one is (create_graph).
VariableGrads batch_norm_backward(const Variable& g, const Variable& x, const Variable& weight,
                                  const Tensor& mean, const Tensor& rstd, double eps,
                                  std::array<bool, 3> needs);

// ---- pooling over time, x (N, C, L) ----
struct MaxPool1dOptions {
  int64_t kernel_size = 1;
  int64_t stride = 0;   // 0: kernel_size, as PyTorch
  int64_t padding = 0;  // -inf on both sides, at most kernel_size / 2
  int64_t dilation = 1;
};
// PyTorch's F.max_pool1d: the maximum of each window -> (N, C, L_out).
Variable max_pool1d(const Variable& x, const MaxPool1dOptions& options);
struct AvgPool1dOptions {
  int64_t kernel_size = 1;
  int64_t stride = 0;             // 0: kernel_size, as PyTorch
  int64_t padding = 0;            // zeros on both sides, at most kernel_size / 2
  bool count_include_pad = true;  // divide by kernel_size (true) or by the input positions in the window
};
// PyTorch's F.avg_pool1d: the mean of each window -> (N, C, L_out).
Variable avg_pool1d(const Variable& x, const AvgPool1dOptions& options);
// The maximum (or mean) over each sequence's first valid_lens[n] positions, along the time axis `dim`:
//   x (N, C, L) with dim 2 (a convolution's output: d2l's textCNN pools it so), or
//   x (N, L, C) with dim 1 (a Transformer's: mean_over_time(h, lengths, /*dim=*/1))   -> (N, C)
// valid_lens (N) int64, each in 0..L, or undefined for all L positions. A sequence of length 0 pools to
// zeros, with no gradient.
Variable max_over_time(const Variable& x, const Tensor& valid_lens = {}, int64_t dim = 2);
Variable mean_over_time(const Variable& x, const Tensor& valid_lens = {}, int64_t dim = 2);

// ---- pooling over images, x (N, C, H, W) ----
struct MaxPool2dOptions {
  Size2d kernel_size = 1;
  Size2d stride = 0;   // 0: kernel_size, as PyTorch
  Size2d padding = 0;  // -inf on both sides of each axis, at most kernel_size / 2
  Size2d dilation = 1;
};
// PyTorch's F.max_pool2d: the maximum of each window -> (N, C, H_out, W_out); its gradient goes to the
// window's maximum.
Variable max_pool2d(const Variable& x, const MaxPool2dOptions& options);
struct AvgPool2dOptions {
  Size2d kernel_size = 1;
  Size2d stride = 0;              // 0: kernel_size, as PyTorch
  Size2d padding = 0;             // zeros on both sides of each axis, at most kernel_size / 2
  bool count_include_pad = true;  // divide by the window's size (true) or by the pixels of the input in it
};
// PyTorch's F.avg_pool2d: the mean of each window -> (N, C, H_out, W_out).
Variable avg_pool2d(const Variable& x, const AvgPool2dOptions& options);
// PyTorch's F.adaptive_avg_pool2d: the mean of each of output_size.h × output_size.w bins -> (N, C,
// output_size.h, output_size.w); along an axis of n positions, bin i covers [⌊i·n/out⌋, ⌈(i+1)·n/out⌉), so
// the bins are equal tiles when out divides n; otherwise their sizes differ by one and neighbours may
// share a position. {1, 1} is global average pooling.
Variable adaptive_avg_pool2d(const Variable& x, Size2d output_size);

// ---- neural-network functions ----
// Rows of weight [V, D] picked by int64 ids of any shape: result ids.shape + [D]. The gradient is added
// back into the picked rows (scatter-add). The row `padding_idx` (if >= 0) gets no gradient.
Variable embedding(const Variable& weight, const Tensor& ids, int64_t padding_idx = -1);
struct EmbeddingFuncOptions {  // the function's options; nn::EmbeddingOptions are the layer's
  int64_t padding_idx = -1;    // none
  // The weight's gradient is row-sparse (the rows looked up; tensor/row_sparse.h) in an ordinary
  // backward; dense with create_graph, and in what grad() returns. PyTorch's sparse=True.
  bool sparse = false;
};
//   Variable rows = embedding(table, ids, {.sparse = true});
Variable embedding(const Variable& weight, const Tensor& ids, const EmbeddingFuncOptions& options);
// In training, zeroes each element with probability p and scales the rest by 1/(1-p) (inverted dropout),
// drawing from `generator` (default: the global one); otherwise returns x unchanged.
Variable dropout(const Variable& x, double p, bool training, Generator* generator = nullptr);
// PyTorch's F.dropout2d: each channel of each example, x (N, C, H, W), zeroed whole with probability p,
// the rest scaled by 1/(1-p); x itself outside training.
Variable dropout2d(const Variable& x, double p, bool training, Generator* generator = nullptr);
// The same with the mask given by a seed (counter-based bits, tensor/random.h): the same seed drops the
// same elements.
Variable dropout_with_seed(const Variable& x, double p, uint64_t seed);
// Normalizes over the last dimension: (x - mean) / sqrt(var + eps) * weight + bias, with the biased
// variance. weight and bias have shape [D] (the last dimension), or are both undefined for no affine.
Variable layer_norm(const Variable& x, const Variable& weight, const Variable& bias, double eps = 1e-5);

// CrossEntropyOptions and Reduction: tensor/loss.h.
// The negative log-likelihood of int64 class targets (N) under logits (N, C) (or the cross-entropy with
// the smoothed targets), as PyTorch's cross_entropy: class weights, ignore_index, reduction (the mean
// divides by the counted rows' weights), label smoothing; logits (C) with a target (), or (N, C, d1, ...)
// with targets (N, d1, ...), as PyTorch takes them. A fused log-softmax and NLL that stays finite for any
// finite logits. If every target is ignored the mean is 0 (PyTorch: NaN).
//   cross_entropy(logits, labels, {.weight = class_weights, .reduction = Reduction::Sum})
Variable cross_entropy(const Variable& logits, const Tensor& targets, CrossEntropyOptions options = {});
// Class indices held in a Variable (a model's input passed along, say): its data, which has no gradient.
inline Variable cross_entropy(const Variable& logits, const Variable& targets,
                              CrossEntropyOptions options = {}) {
  return cross_entropy(logits, targets.data(), std::move(options));
}
struct BCEWithLogitsOptions {
  Tensor weight{};  // each element's weight, broadcast to the logits' shape; undefined: 1
  Reduction reduction = Reduction::Mean;
  // The positive examples' weight p, broadcast to the logits' shape (a class's, (C), for (N, C) logits):
  // p > 1 counts the positives more, as PyTorch's pos_weight. Undefined: 1.
  Tensor pos_weight{};
};
// Binary cross-entropy between sigmoid(logits) and targets in [0, 1] of the same shape, computed from
// the logits so that it is stable for large |logits| (the formula: tensor/loss.h), as PyTorch's
// binary_cross_entropy_with_logits.
Variable binary_cross_entropy_with_logits(const Variable& logits, const Variable& targets,
                                          const BCEWithLogitsOptions& options = {});

// Options of mse_loss and l1_loss.
struct LossOptions {
  Reduction reduction = Reduction::Mean;
};
struct SmoothL1LossOptions {
  Reduction reduction = Reduction::Mean;
  double beta = 1.0;  // where the quadratic part ends; 0 gives l1_loss
};
struct HuberLossOptions {
  Reduction reduction = Reduction::Mean;
  double delta = 1.0;  // where the quadratic part ends
};
struct NLLLossOptions {
  Tensor weight{};              // (C): each class's weight in the loss and in the mean; undefined: all 1
  int64_t ignore_index = -100;  // targets equal to this count neither in the loss nor in the mean
  Reduction reduction = Reduction::Mean;
};
// The regression losses of input and target of one shape (a different shape is an error, where PyTorch
// broadcasts with a warning), each differentiable in both, as PyTorch's of the same names:
//   mse_loss        (x - t)²
//   l1_loss         |x - t|, with gradient sign(x - t), 0 at 0
//   smooth_l1_loss  0.5·d²/beta where |d| < beta, else |d| - 0.5·beta (d = x - t)
//   huber_loss      0.5·d² where |d| < delta, else delta·(|d| - 0.5·delta)
//   auto loss = mse_loss(model(x), y);  mse_loss(out, y, {.reduction = Reduction::Sum});
Variable mse_loss(const Variable& input, const Variable& target, LossOptions options = {});
Variable l1_loss(const Variable& input, const Variable& target, LossOptions options = {});
Variable smooth_l1_loss(const Variable& input, const Variable& target, SmoothL1LossOptions options = {});
Variable huber_loss(const Variable& input, const Variable& target, HuberLossOptions options = {});
// The negative log-likelihood of int64 class targets (N) under log-probabilities (N, C) (log_softmax's
// output): -weight[t]·input[n, t], t = target[n], so nll_loss(log_softmax(x, 1), t) is cross_entropy(x, t);
// the mean divides by the counted rows' weights. (C) and (N, C, d1, ...) inputs as cross_entropy's.
// Ignored rows count in neither the loss nor the mean; if every row is ignored the mean is 0, as
// cross_entropy's (PyTorch: NaN).
Variable nll_loss(const Variable& input, const Tensor& target, NLLLossOptions options = {});
inline Variable nll_loss(const Variable& input, const Variable& target, NLLLossOptions options = {}) {
  return nll_loss(input, target.data(), std::move(options));
}

// ---- queries: not differentiable, so they return plain tensors (PyTorch's have no graph either) ----
// The index of the largest (smallest) entry along dim, or of the whole tensor flattened (the first of ties),
// int64; whether every or any element is true: a Variable's data asked as a Tensor is (tensor/reduce.h).
Tensor argmax(const Variable& x, int64_t dim, bool keepdim = false);
Tensor argmin(const Variable& x, int64_t dim, bool keepdim = false);
Tensor argmax(const Variable& x);
Tensor argmin(const Variable& x);
bool all(const Variable& x);
bool any(const Variable& x);
// Elementwise comparisons, bool; b broadcasts.
Tensor eq(const Variable& a, const Variable& b);
Tensor eq(const Variable& a, const Tensor& b);
Tensor ne(const Variable& a, const Tensor& b);
Tensor gt(const Variable& a, double s);
Tensor lt(const Variable& a, double s);
// The fraction of rows whose largest logit is at the label: logits (N, C), labels (N) int64 in [0, C).
//   double acc = accuracy(model(x), y);  // instead of mean(eq(argmax(out.data(), 1), y)...)
double accuracy(const Variable& logits, const Tensor& labels);

// ---- backward ops: each an op's gradient, g being the gradient of the op's output; a named op with a
// derivative of its own, over its kernel in tensor/ ----
// relu: g where x > 0, else 0 (x enters only through its sign, a constant).
Variable relu_backward(const Variable& g, const Tensor& x);
// gelu: g·(Φ(x) + x·φ(x)).
Variable gelu_backward(const Variable& g, const Variable& x);
// pow: g·p·x^(p-1).
Variable pow_backward(const Variable& g, const Variable& x, double exponent);
// leaky_relu: g where x > 0, else negative_slope·g.
Variable leaky_relu_backward(const Variable& g, const Tensor& x, double negative_slope);
// clamp: g where min <= x <= max, else 0.
Variable clamp_backward(const Variable& g, const Tensor& x, std::optional<double> min,
                        std::optional<double> max);
// softmax along dim: y·(g - Σ g·y), from the output y.
Variable softmax_backward(const Variable& g, const Variable& y, int64_t dim);
// log_softmax along dim: g - exp(z)·Σg, from the output z.
Variable log_softmax_backward(const Variable& g, const Variable& z, int64_t dim);
// max along dim: g routed to the positions of the maxima (indices: argmax with keepdim), 0 elsewhere;
// the input's shape is `from`.
Variable max_backward(const Variable& g, const Tensor& indices, const Shape& from, int64_t dim);
// embedding: the table's gradient [V, D], each row the sum of g's rows that looked it up (a scatter-add).
Variable embedding_backward(const Variable& g, const Tensor& ids, int64_t vocab, int64_t padding_idx);
// cross_entropy: (softmax(logits) - smoothed targets)·g/count on counted rows (tensor/loss.h).
Variable cross_entropy_backward(const Variable& g, const Variable& logits, const Tensor& row_max,
                                const Tensor& log_total, const Tensor& targets,
                                const CrossEntropyOptions& options);
// layer_norm: the gradients of x, weight and bias from the forward's per-row mean and rstd: the fused
// kernel (tensor/layer_norm.h) when nothing records; when the gradient is recorded
// (create_graph), the same formulas composed from differentiable ops, which a three-output kernel cannot
// be in a graph of one-output nodes.
VariableGrads layer_norm_backward(const Variable& g, const Variable& x, const Variable& weight,
                                  const Tensor& mean, const Tensor& rstd, double eps,
                                  std::array<bool, 3> needs);
// scaled_dot_product_attention: dQ, dK, dV from dO and the forward's weights; the fused kernel
// (tensor/attention.h) when nothing records, composed from differentiable ops when the gradient is
// recorded. q and k may be undefined when neither needs a gradient.
VariableGrads scaled_dot_product_attention_backward(const Variable& g, const Variable& q, const Variable& k,
                                                    const Variable& v, const Tensor& weights,
                                                    const AttentionMask& mask, double scale, double p,
                                                    uint64_t seed, std::array<bool, 3> needs);

// conv2d, for the geometry conv2d worked out from its options: the gradient of x (N, C_in, height,
// width), the transposed convolution of the output's gradient gy, and the weight's. Their derivatives
// are made of the two and conv2d (autograd/conv.cpp says why), so no graph needs a composed form.
Variable conv2d_input_grad(const Variable& gy, const Variable& weight, int64_t height, int64_t width,
                           const Conv2dGeometry& geometry, int64_t groups);
Variable conv2d_weight_grad(const Variable& gy, const Variable& x, const Conv2dGeometry& geometry,
                            int64_t groups);

// ---- operators ----
inline Variable operator+(const Variable& a, const Variable& b) {
  return add(a, b);
}
inline Variable operator-(const Variable& a, const Variable& b) {
  return sub(a, b);
}
inline Variable operator*(const Variable& a, const Variable& b) {
  return mul(a, b);
}
inline Variable operator/(const Variable& a, const Variable& b) {
  return div(a, b);
}
inline Variable operator+(const Variable& x, double s) {
  return add(x, s);
}
inline Variable operator+(double s, const Variable& x) {
  return add(x, s);
}
inline Variable operator-(const Variable& x, double s) {
  return add(x, -s);
}
inline Variable operator-(double s, const Variable& x) {
  return rsub(s, x);
}
inline Variable operator*(const Variable& x, double s) {
  return mul(x, s);
}
inline Variable operator*(double s, const Variable& x) {
  return mul(x, s);
}
inline Variable operator/(const Variable& x, double s) {
  return div(x, s);
}
inline Variable operator/(double s, const Variable& x) {
  return rdiv(s, x);
}
inline Variable operator-(const Variable& x) {
  return neg(x);
}

}  // namespace minigrad
