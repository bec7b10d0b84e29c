// The other processes of a data-parallel run (mpirun -np N minigrad-sentiment train ...), when the
// program is built with the distributed layer; otherwise, and when started without mpirun, a world of one.
// Only the program includes this (it links distributed/ where MPI is found); the library's code sees the
// ranks through Ranks (ranks.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include "examples/sentiment/extras/data_parallel.h"
#include "examples/sentiment/ranks.h"
#include "minigrad/minigrad.h"  // with distributed/ where the program links it

namespace sentiment {

class Parallel {
 public:
#ifdef MINIGRAD_HAS_DISTRIBUTED
  Parallel(int& argc, char**& argv) : context_(argc, argv) {}
  int world() const {
    return context_.world_size();
  }
  // The ranks of a run of `config`, whose batches are cut by balanced_part.
  Ranks ranks(const Config& config) const {
    const int rank = context_.rank(), world = context_.world_size();
    return {
        .rank = rank,
        .world = world,
        .average_gradients =
            [](const std::vector<minigrad::Variable>& p) { minigrad::distributed::average_gradients(p); },
        .sum = [](std::span<double> values) { minigrad::distributed::all_reduce_sum(values); },
        .gather =
            [](const minigrad::Generator::State& state) {
              const std::vector<uint64_t> words = minigrad::distributed::all_gather(state);
              std::vector<minigrad::Generator::State> out(words.size() / 4);
              for (size_t r = 0; r < out.size(); ++r) std::copy_n(words.begin() + 4 * r, 4, out[r].begin());
              return out;
            },
        .part_of_batch =
            [config, rank, world](const std::vector<size_t>& batch, const std::vector<Example>& examples) {
              return balanced_part(batch, examples, config, rank, world);
            }};
  }
  void broadcast(const minigrad::nn::Module& module) const {
    minigrad::distributed::broadcast_parameters(module);
  }
  double collective_seconds() const {
    return minigrad::distributed::seconds_in_collectives();
  }
  // Ends every rank's process, printing "rank R of N: MESSAGE": the others may be waiting for this one.
  [[noreturn]] void fail(const std::string& message) const {
    context_.abort(message);
  }

 private:
  minigrad::distributed::Context context_;
#else
  Parallel(int&, char**&) {}
  int world() const {
    return 1;
  }
  Ranks ranks(const Config&) const {
    return {};
  }
  void broadcast(const minigrad::nn::Module&) const {}
  double collective_seconds() const {
    return 0;
  }
  [[noreturn]] void fail(const std::string& message) const {
    std::cerr << message << "\n";
    std::exit(1);
  }
#endif
};

}  // namespace sentiment
