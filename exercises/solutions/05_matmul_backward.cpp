// Task 5's answer.
#include "exercises/05_matmul_backward.h"

namespace minigrad::exercises {

Variable my_matmul(const Variable& a, const Variable& b) {
  // a (M, K), b (K, N) -> y (M, N)
  return record("my_matmul", matmul(a.data(), b.data()), {a, b},
                [sa = save_if(a, b.requires_grad()), sb = save_if(b, a.requires_grad())](
                    const Variable& g, NeedsGrad needs) -> VariableGrads {
                  // y[m][n] = Σ_k a[m][k]·b[k][n], so d loss / d a[m][k] = Σ_n g[m][n]·b[k][n] = (g·bᵀ)[m][k]
                  // and d loss / d b[k][n] = Σ_m a[m][k]·g[m][n] = (aᵀ·g)[k][n].
                  return {needs[0] ? matmul(g, transpose(sb.variable(), 0, 1)) : Variable(),
                          needs[1] ? matmul(transpose(sa.variable(), 0, 1), g) : Variable()};
                });
}

}  // namespace minigrad::exercises
