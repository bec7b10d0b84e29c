#include "tensor/threads.h"

#include <cblas.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

namespace minigrad {

namespace {

int default_threads() {
  const int hardware = std::max(1u, std::thread::hardware_concurrency());
  const char* env = std::getenv("MINIGRAD_NUM_THREADS");
  if (env == nullptr || *env == '\0') return hardware;
  char* end = nullptr;
  const long n = std::strtol(env, &end, 10);
  if (*end != '\0' || n < 1 || n > 1024) {
    // Start-up is no place to throw; say what was ignored and carry on.
    std::cerr << "minigrad: MINIGRAD_NUM_THREADS='" << env << "' is not a whole number from 1 to 1024; using "
              << hardware << " threads\n";
    return hardware;
  }
  return static_cast<int>(n);
}

// The current setting. Initialised on first use, which also hands it to OpenMP and OpenBLAS.
int& current_threads() {
  static int threads = [] {
    const int n = default_threads();
    omp_set_num_threads(n);
    openblas_set_num_threads(n);
    return n;
  }();
  return threads;
}

}  // namespace

int num_threads() {
  return current_threads();
}

void set_num_threads(int n) {
  n = std::max(1, n);
  current_threads() = n;
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

}  // namespace minigrad
