// Column sums over many rows, split between threads by blocks of rows: what tensor/reduce.cpp's sum and
// layer norm's weight and bias gradients (tensor/layer_norm.cpp) share. Private to tensor/: not installed.
//
// A sum down the columns of a (rows, cols) tensor cuts its rows into blocks of rows_per_sum_block(cols).
// Each block is summed whole on one thread, reading its rows in order, into float64 sums of its own; then
// the blocks' sums are added in block order (add_block_sums). The blocks depend on the row's length alone,
// never on the thread count, so a sum comes out the same on any number of threads. Split by columns
// instead, each thread walks every row for its share of the columns, and on the tall, narrow gradients
// of a Transformer step's biases two threads then took more CPU time than one (measured:
// docs/history/performance.md, "A step's kernels").
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "minigrad/tensor/threads.h"

namespace minigrad::detail {

// About 128K elements a block, and at least 64 rows, so that the blocks' float64 sums take at most a
// 32nd of a float32 input's memory.
inline int64_t rows_per_sum_block(int64_t cols) {
  return std::max<int64_t>(64, 4 * kParallelGrain / std::max<int64_t>(cols, 1));
}

// Float64 sums whose blocks each start on a 64-byte boundary, so that no vector load or store of them
// straddles two cache lines: the first version, 8 bytes off, was slower on wide rows than the kernel it
// replaced (docs/history/performance.md, "A step's kernels"). Zeroed. Block b holds `cols` sums at
// block(b); no blocks, no allocation (a small sum, summed straight into its output, needs none).
class BlockSums {
 public:
  BlockSums(int64_t blocks, int64_t cols)
      : stride_((cols + 7) / 8 * 8), storage_(blocks == 0 ? 0 : static_cast<size_t>(blocks * stride_ + 8)) {
    const auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
    first_ = storage_.data() + (64 - address % 64) % 64 / sizeof(double);
  }
  BlockSums(const BlockSums&) = delete;
  BlockSums& operator=(const BlockSums&) = delete;

  double* block(int64_t b) { return first_ + b * stride_; }
  const double* block(int64_t b) const { return first_ + b * stride_; }

 private:
  int64_t stride_;  // cols rounded up to 8 doubles, 64 bytes
  std::vector<double> storage_;
  double* first_;
};

// out (outer, cols) = the blocks' sums added in block order, in float64, then rounded to T once; block b
// of output row o is sums.block(o · blocks + b). Zeros when there are no blocks (nothing was summed). On
// the calling thread: a step's largest (C's feed-forward bias, 64 blocks of 1024 columns) is 64K additions.
template <typename T>
void add_block_sums(const BlockSums& sums, T* out, int64_t outer, int64_t blocks, int64_t cols) {
  for (int64_t o = 0; o < outer; ++o) {
    T* row = out + o * cols;
    if (blocks == 0) {
      std::fill_n(row, cols, T(0));
      continue;
    }
    const double* first = sums.block(o * blocks);
    std::vector<double> total(first, first + cols);  // block by block, each read in order
    for (int64_t b = 1; b < blocks; ++b) {
      const double* block = sums.block(o * blocks + b);
#pragma omp simd
      for (int64_t i = 0; i < cols; ++i) total[static_cast<size_t>(i)] += block[i];
    }
    for (int64_t i = 0; i < cols; ++i) row[i] = static_cast<T>(total[static_cast<size_t>(i)]);
  }
}

}  // namespace minigrad::detail
