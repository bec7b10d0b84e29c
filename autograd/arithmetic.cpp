// Arithmetic. A broadcast input's gradient is the output gradient summed back to the input's shape.
// Every backward here is one generic lambda: the same formula serves the Tensor (first-order) pass and
// the Variable (create_graph) pass, where its ops are recorded and can be differentiated again.
#include <cmath>

#include "autograd/functions.h"
#include "tensor/ops.h"

namespace minigrad {

Variable add(const Variable& a, const Variable& b) {
  return record("add", add(a.data(), b.data()), {a, b},
                [sa = a.shape(), sb = b.shape()]<typename G>(const G& g, NeedsGrad needs) {
                  // d(a + b)/da = d(a + b)/db = 1
                  return GradsOf<G>{needs[0] ? sum_to(g, sa) : G(), needs[1] ? sum_to(g, sb) : G()};
                });
}

Variable sub(const Variable& a, const Variable& b) {
  return record("sub", sub(a.data(), b.data()), {a, b},
                [sa = a.shape(), sb = b.shape()]<typename G>(const G& g, NeedsGrad needs) {
                  return GradsOf<G>{needs[0] ? sum_to(g, sa) : G(), needs[1] ? sum_to(neg(g), sb) : G()};
                });
}

Variable mul(const Variable& a, const Variable& b) {
  // d(a·b)/da = b, d(a·b)/db = a: each operand is kept only if the other needs its gradient.
  return record("mul", mul(a.data(), b.data()), {a, b},
                [sa = save_if(a, b.requires_grad()), sb = save_if(b, a.requires_grad()), shape_a = a.shape(),
                 shape_b = b.shape()]<typename G>(const G& g, NeedsGrad needs) {
                  return GradsOf<G>{needs[0] ? sum_to(mul(g, sb.as<G>()), shape_a) : G(),
                                    needs[1] ? sum_to(mul(g, sa.as<G>()), shape_b) : G()};
                });
}

Variable div(const Variable& a, const Variable& b) {
  // d(a/b)/da = 1/b, d(a/b)/db = -a/b²: b is always needed, a only for b's gradient.
  return record("div", div(a.data(), b.data()), {a, b},
                [sa = save_if(a, b.requires_grad()), sb = SavedTensor(b), shape_a = a.shape()]<typename G>(
                    const G& g, NeedsGrad needs) {
                  const G b = sb.as<G>();
                  const G g_over_b = div(g, b);
                  return GradsOf<G>{
                      needs[0] ? sum_to(g_over_b, shape_a) : G(),
                      needs[1] ? sum_to(neg(mul(g_over_b, div(sa.as<G>(), b))), b.shape()) : G()};
                });
}

Variable neg(const Variable& x) {
  return record("neg", neg(x.data()), {x},
                []<typename G>(const G& g, NeedsGrad) { return GradsOf<G>{neg(g)}; });
}

Variable add(const Variable& x, double s) {
  return record("add_scalar", add(x.data(), s), {x},
                []<typename G>(const G& g, NeedsGrad) { return GradsOf<G>{g}; });
}

Variable mul(const Variable& x, double s) {
  return record("mul_scalar", mul(x.data(), s), {x},
                [s]<typename G>(const G& g, NeedsGrad) { return GradsOf<G>{mul(g, s)}; });
}

Variable div(const Variable& x, double s) {
  return record("div_scalar", div(x.data(), s), {x},
                [s]<typename G>(const G& g, NeedsGrad) { return GradsOf<G>{div(g, s)}; });
}

Variable rsub(double s, const Variable& x) {
  return record("rsub_scalar", rsub(s, x.data()), {x},
                []<typename G>(const G& g, NeedsGrad) { return GradsOf<G>{neg(g)}; });
}

Variable rdiv(double s, const Variable& x) {
  Tensor y = rdiv(s, x.data());
  // d(s/x)/dx = -s/x² = -y/x
  return record("rdiv_scalar", y, {x},
                Backward{[sx = SavedTensor(x), sy = SavedTensor(y)](const Tensor& g, NeedsGrad) -> Grads {
                           return {zip_float("rdiv_backward", mul(g, sy.get()), sx.get(),
                                             [](auto gy, auto x) { return -gy / x; })};
                         },
                         [sx = SavedTensor(x), sy = SavedTensor(y)](const Variable& g,
                                                                    NeedsGrad needs) -> VariableGrads {
                           return {neg(div(mul(g, sy.output_variable(needs)), sx.variable()))};
                         }});
}

Variable pow(const Variable& x, double exponent) {
  // d(x^p)/dx = p·x^(p-1)
  return record("pow", pow(x.data(), exponent), {x},
                Backward{[sx = SavedTensor(x), exponent](const Tensor& g, NeedsGrad) -> Grads {
                           return {zip_float("pow_backward", g, sx.get(), [exponent](auto g, auto x) {
                             using T = decltype(x);
                             return g * T(exponent) * std::pow(x, T(exponent - 1));
                           })};
                         },
                         [sx = SavedTensor(x), exponent](const Variable& g, NeedsGrad) -> VariableGrads {
                           return {mul(g, mul(pow(sx.variable(), exponent - 1), exponent))};
                         }});
}

}  // namespace minigrad
