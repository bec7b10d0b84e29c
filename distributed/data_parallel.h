// Data-parallel training: every rank holds the whole model, takes its own share of each global batch,
// and after backward() the ranks average their gradients, so every rank takes the same optimizer step
// and the weights stay identical everywhere. With N ranks and B/N examples each, a step computes what one
// process computes on the whole batch B (up to the order of float additions).
//
//   distributed::Context context(argc, argv);
//   distributed::broadcast_parameters(model);            // everyone starts from rank 0's weights
//   for (...) {
//     auto [begin, end] = distributed::shard(batch_size, context.rank(), context.world_size());
//     ... forward and backward on examples [begin, end) of the global batch ...
//     distributed::average_gradients(model.parameters());  // the mean over all B examples
//     optimizer.step();
//   }
//
// Every function here is a collective operation: every rank must call it, in the same order, with
// parameters of the same shapes. In a world of one (no launcher) they do nothing.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "minigrad/distributed/context.h"
#include "minigrad/nn/module.h"

namespace minigrad::distributed {

// Copies rank `root`'s parameters and buffers into every other rank's module. The ranks first compare
// the modules' layouts (names, shapes, dtypes); a rank whose module differs ends the job, naming itself.
void broadcast_parameters(const nn::Module& module, int root = 0);

struct AllReduceOptions {
  // Gradients are packed into contiguous buckets of at most this many bytes (one per dtype at a time),
  // each summed with one MPI_Allreduce in place: a few large messages instead of one per tensor.
  int64_t bucket_bytes = int64_t{8} << 20;
  // A parameter of at least this many bytes with two or more dimensions is summed by rows instead: the
  // ranks first agree on which rows of its gradient are non-zero anywhere (a bit per row, one small
  // MPI_Allreduce with MPI_BOR) and then sum only those, packed together. An embedding's gradient is
  // zero outside the rows its batch looked up: the sentiment model's 65,536-row n-gram table sends a
  // small share of its 16 MB a step. Where more than half the rows are non-zero, the whole gradient is
  // summed as one message instead. 0: every gradient goes into the buckets.
  int64_t row_sparse_bytes = int64_t{1} << 20;
};

// Replaces each parameter's gradient by its mean over the ranks, in float32 or float64 as the
// parameter. A parameter without a gradient on this rank counts as zeros and gets a gradient, so that
// every rank sends the same buckets. The result does not depend on the options: rows left out of a
// row-sparse sum are zero on every rank, and their mean is zero.
//
// Row-sparse gradients (an embedding with sparse = true; tensor/row_sparse.h) stay row-sparse: every
// rank's rows are gathered on every rank and coalesced, which is the dense mean in the rows present
// anywhere. The ranks first agree on which gradients are row-sparse (one small MPI_Allreduce per call):
// those that are row-sparse or absent on every rank. Where one rank's gradient is dense, the others' are
// made dense for the dense sum.
void average_gradients(const std::vector<Variable>& parameters, const AllReduceOptions& options = {});

// Sums `values` over the ranks, in place (losses, counts of correct predictions, token counts).
void all_reduce_sum(std::span<double> values);

// Every rank's `values` (the same count on each), concatenated in rank order, on every rank: e.g. each
// rank's random-generator state, for a checkpoint that rank 0 writes.
std::vector<uint64_t> all_gather(std::span<const uint64_t> values);

// Rank `rank`'s share [begin, end) of `count` items split into `world_size` contiguous shares as equal as
// possible (the first count % world_size ranks take one more).
std::pair<int64_t, int64_t> shard(int64_t count, int rank, int world_size);

// Seconds this process has spent inside MPI collective calls since it started (for measurements).
double seconds_in_collectives();

}  // namespace minigrad::distributed
