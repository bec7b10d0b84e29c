// Exceptions thrown by minigrad. Every message starts with the name of the op that refused its input,
// then says what was wrong in the op's own terms, e.g.
//   "matmul: shapes [2,3] and [4,5] are not aligned (3 != 4)".
// Nothing in minigrad asserts or aborts on bad input: it throws one of these.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace minigrad {

class Error : public std::runtime_error {
 public:
  Error(std::string_view op, std::string_view detail)
      : std::runtime_error(std::string(op) + ": " + std::string(detail)), op_(op), detail_(detail) {}
  // The op's name and what it said, the two halves of what().
  const std::string& op() const { return op_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string op_, detail_;
};

// Shapes that do not fit together: broadcasting, matmul alignment, reshape sizes, dims out of range.
class ShapeError : public Error {
  using Error::Error;
};

// A dtype the op does not support, or two operands whose dtypes differ.
class DTypeError : public Error {
  using Error::Error;
};

// An index (into a dimension, a vocabulary, a class list) outside its range.
class IndexError : public Error {
  using Error::Error;
};

// A value outside what the op accepts: a probability of 1.5, a negative step, a non-positive count.
class ValueError : public Error {
  using Error::Error;
};

}  // namespace minigrad
