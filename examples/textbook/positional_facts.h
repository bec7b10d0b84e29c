// The numbers the textbooks print about sinusoidal positional encoding, computed: shared by the
// positional-encoding program and the tests that assert them.
//
// The standard table (Vaswani et al.; d2l; nn::PositionalEncoding::sinusoids) for position p and column
// pair j of a d-wide encoding:
//   P[p, 2j] = sin(p / 10000^(2j/d)),   P[p, 2j+1] = cos(p / 10000^(2j/d)).
#pragma once

#include <cstdint>
#include <string>

#include "minigrad/tensor/tensor.h"

namespace textbook {

// The table as some book code computes it: looping over the even columns i = 0, 2, 4, ... and using
// 10000^(2i/d), i.e. doubling an index that is already 2j. Its frequencies fall twice as fast across the
// columns, so distant positions look more alike: the cosine similarity of positions 2 and 10 at d = 512
// comes out 0.8600013 instead of the standard 0.7225.
minigrad::Tensor book_positional_encoding(int64_t positions, int64_t d);

// a·b / (|a| |b|) of two 1-D tensors.
double cosine_similarity(const minigrad::Tensor& a, const minigrad::Tensor& b);

// "101" for (5, 3 bits): the binary code whose bits alternate faster in the lower places, as the
// encoding's columns do.
std::string binary(int64_t value, int bits);

// The relative-position property, checked: for offset δ and each column pair j, rotating
// (P[i,2j], P[i,2j+1]) by the angle δ·ω_j (ω_j = 1/10000^(2j/d)) should give (P[i+δ,2j], P[i+δ,2j+1]) for
// every i. Returns the largest deviation over all i and j of the standard table P (positions, d).
double max_rotation_error(const minigrad::Tensor& P, int64_t delta);

}  // namespace textbook
