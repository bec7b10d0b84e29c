// What the exercises' tests share: comparing a learner's tensors with minigrad's own.
#pragma once

#include <boost/test/unit_test.hpp>
#include <string>

#include "minigrad/minigrad.h"

namespace minigrad::exercises {

// Whether a and b are defined, of one shape, and nowhere more than `tol` apart.
inline bool close(const Tensor& a, const Tensor& b, double tol = 1e-12) {
  if (!a.defined() || !b.defined() || a.shape() != b.shape()) return false;
  return a.numel() == 0 || max(abs(sub(a, b))).item() <= tol;
}

// "[3,4] float64", or "undefined", for a hint.
inline std::string describe(const Tensor& t) {
  return t.defined() ? minigrad::describe(t.shape(), t.dtype()) : "undefined";
}

// A float64 leaf that requires grad, drawn from N(0, stddev²).
inline Variable random_leaf(const Shape& shape, Generator& gen, double stddev = 1.0) {
  return Variable(Tensor::normal(shape, 0, stddev, DType::Float64, &gen), true);
}

// A second leaf with the same values, for running minigrad's own op next to the learner's.
inline Variable copy_of(const Variable& leaf) {
  return Variable(leaf.data().clone(), true);
}

// Runs f, which runs the learner's backward, and turns a minigrad error thrown there (a product of
// unaligned shapes, a gradient of the wrong shape, a saved tensor modified in place) into a failed check
// that says `hint` and then the error, where Boost.Test alone reports the bare error at "unknown
// location". Whether f ran to its end.
template <typename F>
bool runs_without_error(const std::string& hint, const F& f) {
  try {
    f();
    return true;
  } catch (const Error& error) {
    BOOST_ERROR(hint << " (it threw " << error.what() << ")");
    return false;
  }
}

}  // namespace minigrad::exercises
