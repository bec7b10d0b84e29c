// Matrix product. For C = A·B and upstream gradient G = dL/dC:
//   dL/dA = G·Bᵀ    dL/dB = Aᵀ·G
// (each entry C[i,j] = Σ_k A[i,k]·B[k,j], so A[i,k] meets G[i,j] through B[k,j], and B[k,j] through A[i,k]).
// The transposes are views; the tensor layer hands them to BLAS as transpose flags, not copies.
#include "autograd/functions.h"
#include "tensor/ops.h"

namespace minigrad {

Variable matmul(const Variable& a, const Variable& b) {
  return record(
      "matmul", matmul(a.data(), b.data()), {a, b},
      [sa = SavedTensor(a.data()), sb = SavedTensor(b.data())](const Tensor& g, NeedsGrad needs) -> Grads {
        const Tensor& a = sa.get();  // [..., M, K]
        const Tensor& b = sb.get();  // [..., K, N]
        // g: [..., M, N]
        Tensor ga, gb;
        if (needs[0]) ga = sum_to(matmul(g, b.transpose(-1, -2)), a.shape());
        if (needs[1]) {
          if (b.rank() == 2 && a.rank() > 2) {
            // A weight shared by every row of a batch: fold the batch into the rows, one [K, B·M]·[B·M, N]
            // product instead of a batched product summed afterwards.
            const int64_t k = a.shape().back(), n = g.shape().back();
            gb = matmul(a.reshape({-1, k}).t(), g.reshape({-1, n}));
          } else {
            gb = sum_to(matmul(a.transpose(-1, -2), g), b.shape());
          }
        }
        return {ga, gb};
      });
}

}  // namespace minigrad
