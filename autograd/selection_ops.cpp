// Ops that select among their inputs' values: clamp, maximum, minimum, where. Each backward sends the
// upstream gradient to whichever value was selected, through a constant mask or share, so each is linear
// in g and its second derivative comes from the same op (clamp_backward) or from mul and masked_fill.
// NaN behaves as in PyTorch: a NaN input is selected (its output is NaN) and the gradient says so.
#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

// ---- clamp: the gradient passes where min <= x <= max, else 0 (0 at NaN, as PyTorch) ----

Variable clamp_backward(const Variable& g, const Tensor& x, std::optional<double> min,
                        std::optional<double> max) {
  // Linear in g with a constant mask: d/dg is this op again, and x gets no gradient (clamp'' = 0).
  return record(
      "clamp_backward", clamp_backward(g.data(), x, min, max), {g},
      [sx = SavedTensor(x), min, max](const Variable& gg, NeedsGrad) -> VariableGrads {
        return {clamp_backward(gg, sx.get(), min, max)};
      },
      [&](const Tangents& t) { return clamp_backward(t[0], x, min, max); });
}

Variable clamp(const Variable& x, std::optional<double> min, std::optional<double> max) {
  return record(
      "clamp", clamp(x.data(), min, max), {x},
      [sx = SavedTensor(x), min, max](const Variable& g, NeedsGrad) -> VariableGrads {
        return {clamp_backward(g, sx.get(), min, max)};
      },
      [&](const Tangents& t) { return clamp_backward(t[0], x.data(), min, max); });
}

Variable clamp_min(const Variable& x, double min) {
  return clamp(x, min, std::nullopt);
}

Variable clamp_max(const Variable& x, double max) {
  return clamp(x, std::nullopt, max);
}

// ---- maximum, minimum: g to the operand chosen, halved at a tie (tensor/elementwise.h) ----

namespace {

using GradientParts = SelectionGradient (*)(const Tensor&, const Tensor&);

Variable select_between(const char* op, const Variable& a, const Variable& b, const Tensor& value,
                        GradientParts gradient_parts) {
  return record(
      op, value, {a, b},
      [sa = SavedTensor(a), sb = SavedTensor(b), a_shape = a.shape(), b_shape = b.shape(), gradient_parts](
          const Variable& g, NeedsGrad needs) -> VariableGrads {
        const auto [a_lost, b_lost, tie_scale] = gradient_parts(sa.get(), sb.get());
        const Variable scaled = mul(g, Variable(tie_scale));
        return {needs[0] ? sum_to(masked_fill(scaled, a_lost, 0.0), a_shape) : Variable(),
                needs[1] ? sum_to(masked_fill(scaled, b_lost, 0.0), b_shape) : Variable()};
      },
      [&](const Tangents& t) {  // the chosen operand's tangent, the mean of both at a tie
        const auto [a_lost, b_lost, tie_scale] = gradient_parts(a.data(), b.data());
        const Variable scale(tie_scale);
        return t.sum({t.has(0) ? masked_fill(t[0] * scale, a_lost, 0.0) : Variable(),
                      t.has(1) ? masked_fill(t[1] * scale, b_lost, 0.0) : Variable()});
      });
}

}  // namespace

Variable maximum(const Variable& a, const Variable& b) {
  if (!a.defined() || !b.defined()) throw ValueError("maximum", "an operand is undefined");
  return select_between("maximum", a, b, maximum(a.data(), b.data()), maximum_gradient_parts);
}

Variable minimum(const Variable& a, const Variable& b) {
  if (!a.defined() || !b.defined()) throw ValueError("minimum", "an operand is undefined");
  return select_between("minimum", a, b, minimum(a.data(), b.data()), minimum_gradient_parts);
}

// ---- where: g to a where cond holds, to b elsewhere ----

Variable where(const Tensor& cond, const Variable& a, const Variable& b) {
  if (!a.defined() || !b.defined()) throw ValueError("where", "an operand is undefined");
  return record(
      "where", where(cond, a.data(), b.data()), {a, b},
      [sc = SavedTensor(cond), a_shape = a.shape(), b_shape = b.shape()](const Variable& g,
                                                                         NeedsGrad needs) -> VariableGrads {
        // masked_fill, not a product with the mask: an infinite or NaN g where the other operand
        // was chosen gives that operand 0, not NaN.
        return {needs[0] ? sum_to(masked_fill(g, logical_not(sc.get()), 0.0), a_shape) : Variable(),
                needs[1] ? sum_to(masked_fill(g, sc.get(), 0.0), b_shape) : Variable()};
      },
      [&](const Tangents& t) { return where(cond, t[0], t[1]); });
}

}  // namespace minigrad
