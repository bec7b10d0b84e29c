#include "minigrad/distributed/data_parallel.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <functional>
#include <string>

#include "minigrad/tensor/ops.h"
#include "minigrad/tensor/row_sparse.h"

namespace minigrad::distributed {

namespace {

double collective_seconds = 0;

// Runs one MPI collective and adds its time to collective_seconds.
template <typename F>
void timed(F&& call) {
  const auto start = std::chrono::steady_clock::now();
  call();
  collective_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return MPI_FLOAT;
    case DType::Float64:
      return MPI_DOUBLE;
    default:
      throw DTypeError("average_gradients",
                       "gradients must be float32 or float64, got " + std::string(dtype_name(dtype)));
  }
}

// Where a tensor's elements start in its storage.
char* first_byte(const Tensor& t) {
  return static_cast<char*>(t.storage()->data()) + t.offset() * static_cast<int64_t>(element_size(t.dtype()));
}

// MPI counts are ints: a buffer larger than that goes in pieces.
constexpr int64_t kMaxCount = INT_MAX / 8 * 8;

void broadcast_bytes(void* data, int64_t bytes, int root) {
  auto* p = static_cast<char*>(data);
  for (int64_t at = 0; at < bytes; at += kMaxCount) {
    const int n = static_cast<int>(std::min(kMaxCount, bytes - at));
    timed([&] { MPI_Bcast(p + at, n, MPI_BYTE, root, MPI_COMM_WORLD); });
  }
}

// Sums a contiguous float buffer over the ranks, in place.
void sum_in_place(const Tensor& buffer) {
  const int64_t n = buffer.numel();
  const int64_t element = static_cast<int64_t>(element_size(buffer.dtype()));
  char* p = first_byte(buffer);
  for (int64_t at = 0; at < n; at += kMaxCount) {
    const int count = static_cast<int>(std::min(kMaxCount, n - at));
    timed([&] {
      MPI_Allreduce(MPI_IN_PLACE, p + at * element, count, mpi_type(buffer.dtype()), MPI_SUM, MPI_COMM_WORLD);
    });
  }
}

// Bit r of the result is set when row r of the contiguous gradient (rows × width elements of T, T the
// unsigned integer of the element's size) has a bit set: a non-zero value (or -0.0, which is harmless:
// the row is then summed like any other). An OR over the bits vectorises, a float comparison would not.
template <typename T>
std::vector<uint64_t> nonzero_rows(const void* data, int64_t rows, int64_t width) {
  const auto* values = static_cast<const T*>(data);
  std::vector<uint64_t> bits(static_cast<size_t>((rows + 63) / 64), 0);
  for (int64_t r = 0; r < rows; ++r) {
    T any = 0;
    for (int64_t k = 0; k < width; ++k) any |= values[r * width + k];
    if (any != 0) bits[static_cast<size_t>(r / 64)] |= uint64_t{1} << (r % 64);
  }
  return bits;
}

// Averages one large gradient over the ranks, by rows (see AllReduceOptions::row_sparse_bytes).
void average_by_rows(const Variable& p, double scale) {
  const int64_t rows = p.shape()[0], width = p.numel() / std::max<int64_t>(rows, 1);
  const int64_t row_bytes = width * static_cast<int64_t>(element_size(p.dtype()));
  if (!p.grad().defined()) {
    p.set_grad(Tensor::zeros(p.shape(), p.dtype()));
  } else if (!p.grad().is_contiguous()) {
    p.set_grad(p.grad().contiguous());
  }
  const Tensor& g = p.grad();
  char* data = first_byte(g);
  // The rows that are non-zero on any rank: every rank gets the same set, so all take the same path.
  std::vector<uint64_t> bits = g.dtype() == DType::Float32 ? nonzero_rows<uint32_t>(data, rows, width)
                                                           : nonzero_rows<uint64_t>(data, rows, width);
  timed([&] {
    MPI_Allreduce(MPI_IN_PLACE, bits.data(), static_cast<int>(bits.size()), MPI_UINT64_T, MPI_BOR,
                  MPI_COMM_WORLD);
  });
  std::vector<int64_t> used;
  for (int64_t r = 0; r < rows; ++r) {
    if (bits[static_cast<size_t>(r / 64)] >> (r % 64) & 1) used.push_back(r);
  }
  if (2 * static_cast<int64_t>(used.size()) > rows) {  // mostly non-zero: one dense message is cheaper
    sum_in_place(g);
    g.mul_(scale);
    return;
  }
  if (used.empty()) return;  // zero everywhere, and its mean is zero
  const Tensor packed = Tensor::empty({static_cast<int64_t>(used.size()), width}, g.dtype());
  char* rows_out = static_cast<char*>(packed.storage()->data());
  for (size_t i = 0; i < used.size(); ++i)
    std::memcpy(rows_out + static_cast<int64_t>(i) * row_bytes, data + used[i] * row_bytes, row_bytes);
  sum_in_place(packed);
  packed.mul_(scale);
  for (size_t i = 0; i < used.size(); ++i)
    std::memcpy(data + used[i] * row_bytes, rows_out + static_cast<int64_t>(i) * row_bytes, row_bytes);
  g.storage()->bump_version();  // written in place, as copy_ would
}

// An MPI count (an int) for n elements; the gathers below take no more.
int mpi_count(int64_t n) {
  if (n > INT_MAX) {
    throw ValueError("average_gradients", "a row-sparse gradient of " + std::to_string(n) +
                                              " elements is more than one MPI call takes");
  }
  return static_cast<int>(n);
}

// Which parameters' gradients are row-sparse on some rank and dense on none: one MPI_Allreduce of a byte
// per parameter (the largest kind wins: 0 none, 1 row-sparse, 2 dense). A rank whose batch missed a table
// has no gradient for it, so no rank can tell alone; where one rank holds a dense gradient, the others'
// row-sparse ones are made dense (average_gradients) and take the dense path.
std::vector<bool> row_sparse_everywhere(const std::vector<Variable>& parameters) {
  std::vector<unsigned char> kind(parameters.size());
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Variable& p = parameters[i];
    kind[i] = !p.grad().defined() ? 0 : p.grad().is_row_sparse() ? 1 : 2;
  }
  timed([&] {
    MPI_Allreduce(MPI_IN_PLACE, kind.data(), static_cast<int>(kind.size()), MPI_UNSIGNED_CHAR, MPI_MAX,
                  MPI_COMM_WORLD);
  });
  std::vector<bool> sparse(parameters.size());
  for (size_t i = 0; i < parameters.size(); ++i) sparse[i] = kind[i] == 1;
  return sparse;
}

// Averages a row-sparse gradient: every rank's (row index, row) pairs are gathered on every rank and
// coalesced, so that a row present on several ranks is their sum (in rank order), then scaled. A rank
// without a gradient sends no rows and gets the average too. The result is the dense sum's, row for row.
void average_row_sparse(const Variable& p, double scale) {
  const int64_t width = p.shape()[1];
  const Tensor mine = p.grad().defined()
                          ? p.grad()
                          : Tensor::row_sparse(Tensor::empty({0}, DType::Int64),
                                               Tensor::empty({0, width}, p.dtype()), p.shape());
  const int world = Context::current().world_size();
  const int64_t k = mine.row_indices().numel();
  std::vector<int64_t> rows_of(static_cast<size_t>(world));  // how many rows each rank sends
  timed([&] { MPI_Allgather(&k, 1, MPI_INT64_T, rows_of.data(), 1, MPI_INT64_T, MPI_COMM_WORLD); });
  std::vector<int> index_counts, index_offsets, value_counts, value_offsets;
  int64_t total = 0;
  for (int64_t n : rows_of) {
    index_counts.push_back(mpi_count(n));
    index_offsets.push_back(mpi_count(total));
    value_counts.push_back(mpi_count(n * width));
    value_offsets.push_back(mpi_count(total * width));
    total += n;
  }
  const Tensor indices = Tensor::empty({total}, DType::Int64);     // (N), every rank's rows in rank order
  const Tensor values = Tensor::empty({total, width}, p.dtype());  // (N, D)
  timed([&] {
    MPI_Allgatherv(first_byte(mine.row_indices()), mpi_count(k), MPI_INT64_T, first_byte(indices),
                   index_counts.data(), index_offsets.data(), MPI_INT64_T, MPI_COMM_WORLD);
  });
  timed([&] {
    MPI_Allgatherv(first_byte(mine.row_values()), mpi_count(k * width), mpi_type(p.dtype()),
                   first_byte(values), value_counts.data(), value_offsets.data(), mpi_type(p.dtype()),
                   MPI_COMM_WORLD);
  });
  Tensor mean = coalesce_rows(indices, values, p.shape());
  mean.mul_(scale);
  p.set_grad(std::move(mean));
}

}  // namespace

void broadcast_parameters(const nn::Module& module, int root) {
  const Context& context = Context::current();
  if (!context.uses_mpi()) return;
  if (root < 0 || root >= context.world_size()) {
    throw ValueError("broadcast_parameters", "root " + std::to_string(root) +
                                                 " is not a rank of a world of " +
                                                 std::to_string(context.world_size()));
  }
  std::vector<std::pair<std::string, Variable>> tensors = module.named_parameters();
  for (auto& buffer : module.named_buffers()) tensors.push_back(std::move(buffer));
  // The same layout everywhere, or the byte streams below would be misread: compare a fingerprint.
  std::string layout;
  for (const auto& [name, v] : tensors)
    layout += name + " " + std::string(dtype_name(v.dtype())) + " " + v.shape().str() + ";";
  unsigned long long mine = std::hash<std::string>{}(layout), roots = mine;
  timed([&] { MPI_Bcast(&roots, 1, MPI_UNSIGNED_LONG_LONG, root, MPI_COMM_WORLD); });
  if (mine != roots) {
    context.abort("broadcast_parameters: this rank's " + module.name() +
                  " has other parameters or shapes than rank " + std::to_string(root) + "'s (" +
                  std::to_string(tensors.size()) + " tensors here)");
  }
  for (const auto& [name, v] : tensors) {
    const Tensor& t = v.data();
    if (!t.is_contiguous()) throw ValueError("broadcast_parameters", name + " is not contiguous");
    broadcast_bytes(first_byte(t), t.numel() * static_cast<int64_t>(element_size(t.dtype())), root);
    if (context.rank() != root) t.storage()->bump_version();  // written in place, as copy_ would
  }
}

void average_gradients(const std::vector<Variable>& parameters, const AllReduceOptions& options) {
  const Context& context = Context::current();
  if (!context.uses_mpi() || context.world_size() == 1) return;
  if (options.bucket_bytes < 1024)
    throw ValueError("average_gradients", "bucket_bytes must be at least 1024");
  if (options.row_sparse_bytes < 0)
    throw ValueError("average_gradients", "row_sparse_bytes must be 0 (off) or positive");
  const double scale = 1.0 / context.world_size();
  // Row-sparse gradients first, gathered by rows; the dense ones below.
  const std::vector<bool> sparse = row_sparse_everywhere(parameters);
  std::vector<Variable> dense;
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (!sparse[i]) {
      const Tensor& g = parameters[i].grad();  // row-sparse here, dense on another rank: made dense
      if (g.defined() && g.is_row_sparse()) parameters[i].set_grad(g.to_dense());
      dense.push_back(parameters[i]);
      continue;
    }
    mpi_type(parameters[i].dtype());  // float32 or float64, or a named error
    average_row_sparse(parameters[i], scale);
  }
  // Chosen by shape and dtype alone, which every rank shares, so the ranks make the same calls.
  auto by_rows = [&](const Variable& p) {
    return options.row_sparse_bytes > 0 && p.rank() >= 2 &&
           p.numel() * static_cast<int64_t>(element_size(p.dtype())) >= options.row_sparse_bytes;
  };
  for (const Variable& p : dense) {
    if (by_rows(p)) {
      mpi_type(p.dtype());  // float32 or float64, or a named error
      average_by_rows(p, scale);
    }
  }
  for (DType dtype : {DType::Float32, DType::Float64}) {
    // The other parameters of this dtype, packed in order into buckets: [first, last) of `group` at a time.
    std::vector<const Variable*> group;
    for (const Variable& p : dense) {
      if (p.dtype() == dtype && !by_rows(p)) group.push_back(&p);
    }
    const int64_t capacity =
        std::max<int64_t>(1, options.bucket_bytes / static_cast<int64_t>(element_size(dtype)));
    size_t first = 0;
    while (first < group.size()) {
      size_t last = first;
      int64_t elements = 0;
      // A parameter larger than a bucket gets a bucket of its own.
      while (last < group.size() && (last == first || elements + group[last]->numel() <= capacity)) {
        elements += group[last]->numel();
        ++last;
      }
      const Tensor bucket = Tensor::empty({elements}, dtype);
      int64_t at = 0;
      for (size_t i = first; i < last; ++i) {
        const Variable& p = *group[i];
        const Tensor slot = bucket.slice(0, at, at + p.numel());
        if (p.grad().defined()) {
          slot.copy_(p.grad().reshape({-1}));
        } else {
          slot.zero_();
        }
        at += p.numel();
      }
      sum_in_place(bucket);
      bucket.mul_(scale);
      at = 0;
      for (size_t i = first; i < last; ++i) {
        const Variable& p = *group[i];
        const Tensor mean = bucket.slice(0, at, at + p.numel()).view(p.shape());
        if (p.grad().defined()) {
          p.grad().copy_(mean);
        } else {
          p.set_grad(mean.clone());
        }
        at += p.numel();
      }
      first = last;
    }
  }
}

void all_reduce_sum(std::span<double> values) {
  const Context& context = Context::current();
  if (!context.uses_mpi() || values.empty()) return;
  timed([&] {
    MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
  });
}

std::vector<uint64_t> all_gather(std::span<const uint64_t> values) {
  const Context& context = Context::current();
  if (!context.uses_mpi()) return {values.begin(), values.end()};
  std::vector<uint64_t> out(values.size() * static_cast<size_t>(context.world_size()));
  timed([&] {
    MPI_Allgather(values.data(), static_cast<int>(values.size()), MPI_UINT64_T, out.data(),
                  static_cast<int>(values.size()), MPI_UINT64_T, MPI_COMM_WORLD);
  });
  return out;
}

std::pair<int64_t, int64_t> shard(int64_t count, int rank, int world_size) {
  if (world_size < 1 || rank < 0 || rank >= world_size || count < 0) {
    throw ValueError("shard", "rank " + std::to_string(rank) + " of " + std::to_string(world_size) + " for " +
                                  std::to_string(count) + " items");
  }
  const int64_t base = count / world_size, extra = count % world_size;
  const int64_t begin = rank * base + std::min<int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

double seconds_in_collectives() {
  return collective_seconds;
}

}  // namespace minigrad::distributed
