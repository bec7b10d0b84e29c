// Matrix product. For C = A·B and upstream gradient G = dL/dC:
//   dL/dA = G·Bᵀ    dL/dB = Aᵀ·G
// (each entry C[i,j] = Σ_k A[i,k]·B[k,j], so A[i,k] meets G[i,j] through B[k,j], and B[k,j] through A[i,k]).
// The transposes are views; the tensor layer hands them to BLAS as transpose flags, not copies.
#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

Variable matmul(const Variable& a, const Variable& b) {
  // Each operand is kept only if the other needs its gradient (dL/dA uses only B, dL/dB only A).
  return record(
      "matmul", matmul(a.data(), b.data()), {a, b},
      [sa = save_if(a, b.requires_grad()), sb = save_if(b, a.requires_grad()), shape_a = a.shape(),
       shape_b = b.shape()](const Variable& g, NeedsGrad needs) -> VariableGrads {
        // g: [..., M, N]
        Variable ga, gb;
        // dL/dA = g·Bᵀ, B: [..., K, N]
        if (needs[0]) ga = sum_to(matmul(g, transpose(sb.variable(), -1, -2)), shape_a);
        if (needs[1]) {
          const Variable a = sa.variable();  // [..., M, K]
          if (shape_b.rank() == 2 && a.rank() > 2) {
            // A weight shared by every row of a batch: fold the batch into the rows, one
            // [K, B·M]·[B·M, N] product instead of a batched product summed afterwards.
            const int64_t k = a.shape().back(), n = g.shape().back();
            gb = matmul(transpose(reshape(a, {-1, k}), 0, 1), reshape(g, {-1, n}));
          } else {
            gb = sum_to(matmul(transpose(a, -1, -2), g), shape_b);
          }
        }
        return {ga, gb};
      },
      // (AB)˙ = ȦB + AḂ
      [&](const Tangents& t) {
        return t.sum({t.has(0) ? matmul(t[0], b) : Variable(), t.has(1) ? matmul(a, t[1]) : Variable()});
      });
}

Variable linear(const Variable& x, const Variable& weight, const Variable& bias) {
  if (!x.defined() || !weight.defined()) throw ValueError("linear", "an operand is undefined");
  if (!bias.defined()) return matmul(x, transpose(weight, 0, 1));
  // dL/dx needs W, dL/dW needs x; the bias's gradient needs neither.
  return record(
      "linear", linear(x.data(), weight.data(), bias.data()), {x, weight, bias},
      [sx = save_if(x, weight.requires_grad()), sw = save_if(weight, x.requires_grad()), shape_x = x.shape()](
          const Variable& g, NeedsGrad needs) -> VariableGrads {  // g: (..., out)
        const int64_t out = g.shape().back(), in = shape_x.back();
        const int64_t rows = rows_of("linear", shape_x);  // with in or out 0, reshape cannot infer them
        VariableGrads grads(3);
        if (needs[0]) grads[0] = matmul(g, sw.variable());  // g·W: (..., in)
        if (needs[1]) {                                     // gᵀ·x over all rows at once: (out, in)
          grads[1] = matmul(transpose(reshape(g, {rows, out}), 0, 1), reshape(sx.variable(), {rows, in}));
        }
        if (needs[2]) grads[2] = sum_to(g, Shape{out});  // each output's bias gets the sum over its rows
        return grads;
      },
      [&](const Tangents& t) {  // ẋ·Wᵀ + x·Ẇᵀ + ḃ
        return t.sum({t.has(0) ? matmul(t[0], transpose(weight, 0, 1)) : Variable(),
                      t.has(1) ? matmul(x, transpose(t[1], 0, 1)) : Variable(),
                      t.has(2) ? t[2] : Variable()});
      });
}

}  // namespace minigrad
