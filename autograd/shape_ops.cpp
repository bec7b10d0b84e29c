// Ops that move elements without changing them. Their backward moves the gradient back: the inverse
// view, or a zero tensor with the gradient written into the part that was taken.
#include "autograd/functions.h"
#include "tensor/ops.h"

namespace minigrad {

Variable reshape(const Variable& x, const Shape& shape) {
  return record("reshape", x.data().reshape(shape), {x},
                [from = x.shape()](const Tensor& g, NeedsGrad) -> Grads { return {g.reshape(from)}; });
}

Variable transpose(const Variable& x, int64_t dim0, int64_t dim1) {
  return record("transpose", x.data().transpose(dim0, dim1), {x},
                [dim0, dim1](const Tensor& g, NeedsGrad) -> Grads { return {g.transpose(dim0, dim1)}; });
}

Variable permute(const Variable& x, const Shape& dims) {
  Tensor y = x.data().permute(dims);
  // Output dim i is input dim dims[i], so the inverse sends output dim i back to position dims[i].
  Shape inverse = Shape::filled(x.rank(), 0);
  for (int i = 0; i < x.rank(); ++i) inverse[normalize_dim("permute", dims[i], x.rank())] = i;
  return record("permute", y, {x},
                [inverse](const Tensor& g, NeedsGrad) -> Grads { return {g.permute(inverse)}; });
}

Variable slice(const Variable& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return record(
      "slice", x.data().slice(dim, start, end, step), {x},
      [from = x.shape(), dtype = x.dtype(), dim, start, end, step](const Tensor& g, NeedsGrad) -> Grads {
        Tensor gx = Tensor::zeros(from, dtype);
        gx.slice(dim, start, end, step).copy_(g);
        return {gx};
      });
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
  return record("concat", y, std::span<const Variable>(xs),
                [d, sizes](const Tensor& g, NeedsGrad needs) -> Grads {
                  // Each input's gradient is its own stretch of the output gradient.
                  Grads grads(sizes.size());
                  int64_t at = 0;
                  for (size_t i = 0; i < sizes.size(); ++i) {
                    if (needs[i]) grads[i] = g.slice(d, at, at + sizes[i]);
                    at += sizes[i];
                  }
                  return grads;
                });
}

Variable unsqueeze(const Variable& x, int64_t dim) {
  return record("unsqueeze", x.data().unsqueeze(dim), {x},
                [from = x.shape()](const Tensor& g, NeedsGrad) -> Grads { return {g.reshape(from)}; });
}

Variable squeeze(const Variable& x, int64_t dim) {
  return record("squeeze", x.data().squeeze(dim), {x},
                [from = x.shape()](const Tensor& g, NeedsGrad) -> Grads { return {g.reshape(from)}; });
}

}  // namespace minigrad
