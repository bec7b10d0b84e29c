#include "minigrad/distributed/context.h"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "minigrad/tensor/error.h"

namespace minigrad::distributed {

namespace {

const Context* current_context = nullptr;

// Whether an MPI launcher started this process: each sets its own variables in the ranks' environment
// (Open MPI's mpirun, PMIx-based launchers, MPICH's Hydra).
bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

}  // namespace

Context::Context(int& argc, char**& argv) {
  init(&argc, &argv);
}

Context::Context() {
  init(nullptr, nullptr);
}

void Context::init(int* argc, char*** argv) {
  if (current_context != nullptr)
    throw Error("distributed::Context", "a Context exists already in this process");
  if (launched_by_mpi()) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      // FUNNELED: only the thread that created the Context calls MPI; minigrad's pool workers never do.
      int provided = 0;
      MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    }
    // A failing MPI call ends the whole job with MPI's message (the default, made explicit): a rank
    // that returned an error code would leave the others waiting in the collective.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size_);
    uses_mpi_ = true;
  }
  current_context = this;
}

Context::~Context() {
  if (uses_mpi_) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
  current_context = nullptr;
}

void Context::abort(std::string_view message, int exit_code) const {
  std::fprintf(stderr, "rank %d of %d: %.*s\n", rank_, world_size_, static_cast<int>(message.size()),
               message.data());
  std::fflush(stderr);
  if (uses_mpi_) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

const Context& Context::current() {
  if (current_context == nullptr) {
    throw Error("distributed",
                "there is no distributed::Context: create one (it initialises MPI) before using the "
                "distributed layer");
  }
  return *current_context;
}

int rank() {
  return Context::current().rank();
}

int world_size() {
  return Context::current().world_size();
}

}  // namespace minigrad::distributed
