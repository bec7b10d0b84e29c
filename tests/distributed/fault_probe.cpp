// A distributed job in which one rank fails, for tests/distributed/test_faults.sh:
//   fault_probe throw DIR   rank 1 throws an exception after rank 0 saved a checkpoint into DIR
//   fault_probe kill DIR    rank 1 is killed by SIGKILL at the same point
// Rank 0 is then waiting in a collective operation that can never complete: the job must still end.
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "minigrad/minigrad.h"

using namespace minigrad;

int main(int argc, char** argv) {
  distributed::Context context(argc, argv);
  try {
    if (argc != 3) throw std::invalid_argument("usage: fault_probe throw|kill DIR");
    const std::string mode = argv[1], dir = argv[2];
    if (context.is_root()) write_folder_atomically(dir, {{"weights", "complete"}, {"config", "complete"}});
    std::array<double, 1> ready = {1};
    distributed::all_reduce_sum(ready);  // everyone knows the checkpoint is written
    if (context.rank() == 1) {
      if (mode == "kill") std::raise(SIGKILL);
      throw std::runtime_error("the data folder is missing on this machine");
    }
    // Rank 0 goes on to the next step's gradient sum, which rank 1 never joins.
    distributed::all_reduce_sum(ready);
    std::printf("rank %d: unreachable\n", context.rank());
    return 0;
  } catch (const std::exception& e) {
    context.abort(std::string("error: ") + e.what());
  }
}
