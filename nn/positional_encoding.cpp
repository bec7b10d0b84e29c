#include "minigrad/nn/positional_encoding.h"

#include <cmath>

#include "minigrad/autograd/functions.h"

namespace minigrad::nn {

Tensor PositionalEncoding::sinusoids(int64_t max_len, int64_t d, DType dtype) {
  if (max_len <= 0 || d <= 0)
    throw ValueError("PositionalEncoding", "max_len and num_hiddens must be positive");
  Tensor table = Tensor::empty({max_len, d}, DType::Float64);
  double* p = table.data_ptr<double>();
  for (int64_t i = 0; i < max_len; ++i) {
    for (int64_t col = 0; col < d; col += 2) {
      // Columns 2j and 2j+1 share the frequency 1 / 10000^(2j/d); `col` is 2j.
      const double angle =
          static_cast<double>(i) / std::pow(10000.0, static_cast<double>(col) / static_cast<double>(d));
      p[i * d + col] = std::sin(angle);
      if (col + 1 < d) p[i * d + col + 1] = std::cos(angle);
    }
  }
  return table.to(dtype);
}

PositionalEncoding::PositionalEncoding(const PositionalEncodingOptions& opts) : options(opts) {
  dropout = register_module("dropout", std::make_shared<Dropout>(opts.dropout, opts.generator));
  if (opts.learnable) {
    P = register_parameter(
        "P", Tensor::normal({1, opts.max_len, opts.num_hiddens}, 0, 0.02, DType::Float32, opts.generator));
  } else {
    P = register_buffer("P", sinusoids(opts.max_len, opts.num_hiddens, DType::Float32).unsqueeze(0));
  }
}

Variable PositionalEncoding::forward(const Variable& x, int64_t start) const {
  if (x.rank() != 3 || x.shape()[2] != options.num_hiddens || x.shape()[1] > options.max_len) {
    throw ShapeError("PositionalEncoding", "expects (batch, steps <= " + std::to_string(options.max_len) +
                                               ", " + std::to_string(options.num_hiddens) + "), got " +
                                               x.shape().str());
  }
  if (start < 0 || start + x.shape()[1] > options.max_len) {
    throw ShapeError("PositionalEncoding", "positions " + std::to_string(start) + " to " +
                                               std::to_string(start + x.shape()[1] - 1) +
                                               " go past the maximum length " +
                                               std::to_string(options.max_len));
  }
  // P[:, start:start+T, :] broadcast over the batch
  return (*dropout)(x + slice(P, 1, start, start + x.shape()[1]));
}

void PositionalEncoding::after_conversion(DType dtype) {
  if (!options.learnable && is_floating(dtype)) {
    P.set_data(sinusoids(options.max_len, options.num_hiddens, dtype).unsqueeze(0));
  }
}

std::string PositionalEncoding::extra_repr() const {
  return "num_hiddens=" + std::to_string(options.num_hiddens) +
         ", max_len=" + std::to_string(options.max_len) + (options.learnable ? ", learnable=True" : "");
}

}  // namespace minigrad::nn
