// Positional encoding as in Vaswani et al. (2017) and d2l's "Self-Attention and Positional Encoding":
//
//   P[i, 2j]   = sin(i / 10000^(2j/d))
//   P[i, 2j+1] = cos(i / 10000^(2j/d))
//
// for position i and column pair j of a d-wide embedding. forward(X) adds P's first T rows to X (B, T, d)
// and applies dropout. P is a buffer: saved with the model, not trained. With `learnable = true` (the
// chapter's exercise) P is instead a parameter, initialised N(0, 0.02²), learned like an embedding.
//
// Why it works for relative positions: for every offset δ, the pair (P[i+δ, 2j], P[i+δ, 2j+1]) is the
// pair (P[i, 2j], P[i, 2j+1]) rotated by the angle δ·ω_j, ω_j = 1/10000^(2j/d), whatever i is.
#pragma once

#include "minigrad/nn/dropout.h"
#include "minigrad/nn/module.h"

namespace minigrad::nn {

struct PositionalEncodingOptions {
  int64_t num_hiddens = 0;
  double dropout = 0;
  int64_t max_len = 1000;
  bool learnable = false;
  // Draws dropout masks and the learnable table's initial values; nullptr: this thread's default. Not owned.
  Generator* generator = nullptr;
};

class PositionalEncoding : public Layer<PositionalEncoding> {
 public:
  explicit PositionalEncoding(const PositionalEncodingOptions& options);
  PositionalEncoding(int64_t num_hiddens, double dropout, int64_t max_len = 1000)
      : PositionalEncoding(PositionalEncodingOptions{num_hiddens, dropout, max_len, false}) {}
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<PositionalEncoding,
                              ConstructorLines<void(const PositionalEncodingOptions&), void(int64_t, double),
                                               void(int64_t, double, int64_t)>,
                              A...>
  explicit PositionalEncoding(A&&...) : PositionalEncoding(PositionalEncodingOptions{}) {
    static_assert(
        wrong_arguments<A...>,
        "nn::PositionalEncoding takes (num_hiddens, dropout), then max_len; or (PositionalEncodingOptions)");
  }

  // X: (B, T, num_hiddens) -> same shape, adding the rows of positions start .. start + T - 1, which must
  // be below max_len. start > 0 is for incremental decoding, which feeds a sequence a few steps at a time.
  Variable forward(const Variable& x, int64_t start = 0) const;

  // The sinusoidal table (max_len, num_hiddens) of the formula above, in `dtype`.
  static Tensor sinusoids(int64_t max_len, int64_t num_hiddens, DType dtype = DType::Float64);

  std::string name() const override { return "PositionalEncoding"; }
  std::string extra_repr() const override;

  std::shared_ptr<Dropout> dropout;

 protected:
  // The sinusoid table is rebuilt in the new dtype: widening a float32 table would be off by ~3e-8.
  void after_conversion(DType dtype) override;

 public:
  Variable P;  // (1, max_len, num_hiddens): a buffer, or a parameter when learnable
  PositionalEncodingOptions options;
};

}  // namespace minigrad::nn
