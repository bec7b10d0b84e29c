// The distributed context: one process per rank, started by MPI's launcher, talking through MPI.
//
// minigrad does not invent a distributed engine: it uses MPI (Open MPI from Debian), which people who
// train on several machines already run. Data-parallel training (distributed/data_parallel.h) needs
// only a few collective operations: broadcast the initial weights, sum the gradients, sum counts.
//
//   int main(int argc, char** argv) {
//     distributed::Context context(argc, argv);       // MPI_Init; MPI_Finalize at the end
//     ... context.rank(), context.world_size() ...
//   }
//
//   mpirun -np 2 ./train          # two ranks (as root add --allow-run-as-root)
//   ./train                       # one process, world size 1, no launcher needed
//
// A process started without an MPI launcher runs as a world of one and never initialises MPI, so a
// program built with the distributed layer needs neither mpirun nor an MPI daemon to run alone.
#pragma once

#include <string>
#include <string_view>

namespace minigrad::distributed {

class Context {
 public:
  // Initialises MPI when this process was started by an MPI launcher (mpirun, mpiexec, srun), and as a
  // world of one otherwise. At most one Context exists at a time.
  Context(int& argc, char**& argv);
  Context();
  // Finalises MPI. A rank that leaves with an exception in flight should call abort() instead, or the
  // other ranks wait for it forever.
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  bool is_root() const { return rank_ == 0; }
  // Whether MPI is in use (false in a world of one started without a launcher).
  bool uses_mpi() const { return uses_mpi_; }

  // Ends the whole job: prints "rank R of N: MESSAGE" to stderr and calls MPI_Abort, which makes the
  // launcher kill every other rank. Use it when one rank cannot go on (an exception, bad input that only
  // it saw): the others would otherwise wait in their next collective operation forever.
  [[noreturn]] void abort(std::string_view message, int exit_code = 1) const;

  // The current context; throws minigrad::Error ("... no distributed::Context ...") if none exists.
  static const Context& current();

 private:
  void init(int* argc, char*** argv);

  int rank_ = 0;
  int world_size_ = 1;
  bool uses_mpi_ = false;
};

// rank() and world_size() of the current context (errors as Context::current()).
int rank();
int world_size();

}  // namespace minigrad::distributed
