// PerfControl: a program's side of `perf record --control`, for profiles of chosen steps only
// (bench/profile-step.sh runs the benchmark's step and the main job's training this way).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "minigrad/tensor/error.h"

namespace examples {

// Turns the samples of a `perf record -D -1 --control ...` (bench/profile-step.sh) on for the steps a
// profile is of and off after them, so that it leaves out the set-up and the first steps: their first
// touches of fresh memory fault pages in, which would swamp the later steps' samples
// (docs/history/performance.md, "The step profile over whole runs"). `fifos` is "CONTROL,ACK", the two FIFOs
// perf listens and answers on; empty, nothing is done. perf answers each command with "ack"; without an
// answer within 5 s the run goes on, with a warning. Opened without blocking: a control FIFO that nobody
// reads is refused (ENXIO) instead of hanging the run.
class PerfControl {
 public:
  explicit PerfControl(const std::string& fifos) {
    if (fifos.empty()) return;
    const size_t comma = fifos.find(',');
    if (comma == std::string::npos)
      throw minigrad::ValueError("--perf-control", "takes CONTROL,ACK, got " + fifos);
    const std::string control = fifos.substr(0, comma), ack = fifos.substr(comma + 1);
    control_ = open(control.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (control_ < 0) throw minigrad::ValueError("--perf-control", control + ": " + std::strerror(errno));
    ack_ = open(ack.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (ack_ < 0) {
      close(control_);
      throw minigrad::ValueError("--perf-control", ack + ": " + std::strerror(errno));
    }
  }
  ~PerfControl() {
    if (control_ >= 0) close(control_);
    if (ack_ >= 0) close(ack_);
  }
  PerfControl(const PerfControl&) = delete;
  PerfControl& operator=(const PerfControl&) = delete;

  void send(const std::string& command) const {
    if (control_ < 0) return;
    const std::string line = command + "\n";
    pollfd answer{ack_, POLLIN, 0};
    char buffer[16];
    if (write(control_, line.data(), line.size()) != ssize_t(line.size()) || poll(&answer, 1, 5000) != 1 ||
        read(ack_, buffer, sizeof buffer) <= 0) {
      std::fprintf(stderr, "warning: perf did not acknowledge '%s'\n", command.c_str());
    }
  }

 private:
  int control_ = -1, ack_ = -1;
};

}  // namespace examples
