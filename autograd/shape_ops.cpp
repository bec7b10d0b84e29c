// Ops that move elements without changing them. Their backward moves the gradient back: the inverse
// view, or a zero tensor with the gradient written into the part that was taken (slice_backward,
// select_backward).
#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

Variable reshape(const Variable& x, const Shape& shape) {
  return record(
      "reshape", x.data().reshape(shape), {x},
      [from = x.shape()](const Variable& g, NeedsGrad) -> VariableGrads { return {reshape(g, from)}; },
      [&](const Tangents& t) { return reshape(t[0], shape); });  // a linear op's tangent: the op of ẋ
}

Variable transpose(const Variable& x, int64_t dim0, int64_t dim1) {
  return record(
      "transpose", x.data().transpose(dim0, dim1), {x},
      [dim0, dim1](const Variable& g, NeedsGrad) -> VariableGrads { return {transpose(g, dim0, dim1)}; },
      [&](const Tangents& t) { return transpose(t[0], dim0, dim1); });
}

Variable permute(const Variable& x, const Shape& dims) {
  Tensor y = x.data().permute(dims);
  // Output dim i is input dim dims[i], so the inverse sends output dim i back to position dims[i].
  Shape inverse = Shape::filled(x.rank(), 0);
  for (int i = 0; i < x.rank(); ++i) inverse[normalize_dim("permute", dims[i], x.rank())] = i;
  return record(
      "permute", y, {x},
      [inverse](const Variable& g, NeedsGrad) -> VariableGrads { return {permute(g, inverse)}; },
      [&](const Tangents& t) { return permute(t[0], dims); });
}

Variable expand(const Variable& x, const Shape& shape) {
  // Every output element that repeats an input element sends its gradient back to it: a sum.
  return record(
      "expand", x.data().expand(shape), {x},
      [from = x.shape()](const Variable& g, NeedsGrad) -> VariableGrads { return {sum_to(g, from)}; },
      [&](const Tangents& t) { return expand(t[0], shape); });
}

Variable sum_to(const Variable& x, const Shape& shape) {
  if (!x.defined()) throw ValueError("sum_to", "the Variable is undefined");
  if (x.shape() == shape) return x;
  return record(
      "sum_to", sum_to(x.data(), shape), {x},
      [from = x.shape()](const Variable& g, NeedsGrad) -> VariableGrads { return {expand(g, from)}; },
      [&](const Tangents& t) { return sum_to(t[0], shape); });
}

namespace {

Variable slice_backward(const Variable& g, const Shape& from, int64_t dim, int64_t start, int64_t end,
                        int64_t step) {
  return record(
      "slice_backward", slice_backward(g.data(), from, dim, start, end, step), {g},
      [dim, start, end, step](const Variable& gg, NeedsGrad) -> VariableGrads {
        return {slice(gg, dim, start, end, step)};
      },
      [&](const Tangents& t) { return slice_backward(t[0], from, dim, start, end, step); });
}

}  // namespace

Variable slice(const Variable& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return record(
      "slice", x.data().slice(dim, start, end, step), {x},
      [from = x.shape(), dim, start, end, step](const Variable& g, NeedsGrad) -> VariableGrads {
        return {slice_backward(g, from, dim, start, end, step)};
      },
      [&](const Tangents& t) { return slice(t[0], dim, start, end, step); });
}

Variable select_backward(const Variable& g, const Shape& from, int64_t dim, int64_t index) {
  Tensor gx = Tensor::zeros(from, g.dtype());
  gx.select(dim, index).copy_(g.data());
  return record(
      "select_backward", gx, {g},
      [dim, index](const Variable& gg, NeedsGrad) -> VariableGrads { return {select(gg, dim, index)}; },
      [&](const Tangents& t) { return select_backward(t[0], from, dim, index); });
}

Variable select(const Variable& x, int64_t dim, int64_t index) {
  return record(
      "select", x.data().select(dim, index), {x},
      [from = x.shape(), dim, index](const Variable& g, NeedsGrad) -> VariableGrads {
        return {select_backward(g, from, dim, index)};
      },
      [&](const Tangents& t) { return select(t[0], dim, index); });
}

std::vector<Variable> unbind(const Variable& x, int64_t dim) {
  if (!x.defined()) throw ValueError("unbind", "the Variable is undefined");
  const int d = normalize_dim("unbind", dim, x.rank());
  // One node whose output is x itself; each piece is a part of that output (OutputPart), so the engine
  // adds the pieces' gradients into one buffer of x's shape, and this node passes it on unchanged.
  const Variable whole = record(
      "unbind", x.data(), {x}, [](const Variable& g, NeedsGrad) -> VariableGrads { return {g}; },
      [](const Tangents& t) { return t[0]; });
  std::vector<Variable> pieces;
  pieces.reserve(static_cast<size_t>(x.shape()[d]));
  for (int64_t i = 0; i < x.shape()[d]; ++i) {
    Variable piece(whole.data().select(d, i));
    if (whole.requires_grad()) {
      piece.impl()->requires_grad = true;
      piece.impl()->grad_fn = whole.grad_fn();
      piece.impl()->part = {d, i};
    }
    if (detail::dual_level_active) [[unlikely]]
      detail::add_part_tangent(piece, whole, d, i);  // forward mode: autograd/forward_ad.h
    pieces.push_back(std::move(piece));
  }
  return pieces;
}

Variable concat(const std::vector<Variable>& xs, int64_t dim) {
  std::vector<Tensor> data;
  std::vector<int64_t> sizes;
  for (const Variable& x : xs) {
    if (!x.defined()) throw ValueError("concat", "an input Variable is undefined");
    data.push_back(x.data());
  }
  Tensor y = concat(data, dim);  // validates shapes and dim
  const int d = normalize_dim("concat", dim, y.rank());
  for (const Tensor& t : data) sizes.push_back(t.shape()[d]);
  return record(
      "concat", y, std::span<const Variable>(xs),
      [d, sizes](const Variable& g, NeedsGrad needs) -> VariableGrads {
        // Each input's gradient is its own stretch of the output gradient.
        VariableGrads grads(sizes.size());
        int64_t at = 0;
        for (size_t i = 0; i < sizes.size(); ++i) {
          if (needs[i]) grads[i] = slice(g, d, at, at + sizes[i]);
          at += sizes[i];
        }
        return grads;
      },
      [&](const Tangents& t) { return concat(t.all(), d); });
}

Variable stack(const std::vector<Variable>& xs, int64_t dim) {
  if (xs.empty()) throw ValueError("stack", "needs at least one Variable");
  std::vector<Tensor> data;
  for (const Variable& x : xs) {
    if (!x.defined()) throw ValueError("stack", "an input Variable is undefined");
    if (x.shape() != xs[0].shape()) {
      throw ShapeError(
          "stack", "expects Variables of one shape, got " + xs[0].shape().str() + " and " + x.shape().str());
    }
  }
  const int d = normalize_dim("stack", dim, xs[0].rank() + 1);
  for (const Variable& x : xs) data.push_back(x.data().unsqueeze(d));
  // The adjoint of stacking is splitting: input i's gradient is the slice at i along d.
  return record(
      "stack", concat(data, d), std::span<const Variable>(xs),
      [d](const Variable& g, NeedsGrad) -> VariableGrads { return unbind(g, d); },
      [&](const Tangents& t) { return stack(t.all(), d); });
}

Variable unsqueeze(const Variable& x, int64_t dim) {
  return record(
      "unsqueeze", x.data().unsqueeze(dim), {x},
      [from = x.shape()](const Variable& g, NeedsGrad) -> VariableGrads { return {reshape(g, from)}; },
      [&](const Tangents& t) { return unsqueeze(t[0], dim); });
}

Variable squeeze(const Variable& x, int64_t dim) {
  return record(
      "squeeze", x.data().squeeze(dim), {x},
      [from = x.shape()](const Variable& g, NeedsGrad) -> VariableGrads { return {reshape(g, from)}; },
      [&](const Tangents& t) { return squeeze(t[0], dim); });
}

Variable flatten(const Variable& x, int64_t start_dim, int64_t end_dim) {
  if (!x.defined()) throw ValueError("flatten", "the Variable is undefined");
  return reshape(x, flattened_shape("flatten", x.shape(), start_dim, end_dim));
}

Variable to(const Variable& x, DType dtype) {
  if (!x.defined()) throw ValueError("to", "the Variable is undefined");
  if (x.dtype() == dtype) return x;  // as PyTorch's .to(): the same value, no new node
  // To int64 or bool there is no derivative (PyTorch's result does not require grad either).
  if (!is_floating(dtype)) return Variable(x.data().to(dtype));
  return record(
      "to", x.data().to(dtype), {x},
      [from = x.dtype()](const Variable& g, NeedsGrad) -> VariableGrads {
        return {to(g, from)};  // the gradient converted back: a cast is the identity on values
      },
      [dtype](const Tangents& t) { return to(t[0], dtype); });
}

}  // namespace minigrad
