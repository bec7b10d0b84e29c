// Thread-local switches that change what the ops do: grad mode (do they record the graph?) and anomaly
// mode (do they check their results for NaN and infinity?), each with an RAII guard.
#pragma once

#include "minigrad/tensor/tensor.h"

namespace minigrad {

namespace detail {
// The switches themselves, one per thread; read through GradMode and AnomalyMode (inline: every op
// reads both).
inline thread_local bool grad_mode_enabled = true;
inline thread_local bool anomaly_mode_enabled = false;
}  // namespace detail

// Whether ops record graph nodes on this thread. On by default. An ordinary backward() runs the
// backward functions with it off, so they record nothing; backward({.create_graph = true}) turns it on.
class GradMode {
 public:
  static bool is_enabled() { return detail::grad_mode_enabled; }
  static void set_enabled(bool enabled) { detail::grad_mode_enabled = enabled; }
};

// Sets grad mode on this thread for the guard's lifetime.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : previous_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  ~GradModeGuard() { GradMode::set_enabled(previous_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

// Turns recording off on this thread for the guard's lifetime (evaluation, optimizer updates):
//   { NoGradGuard no_grad; auto prediction = model(x); }
class NoGradGuard : public GradModeGuard {
 public:
  NoGradGuard() : GradModeGuard(false) {}
};

// Whether ops check their results for NaN and infinity on this thread. Off by default; when off, the
// cost is one thread-local bool test per op.
class AnomalyMode {
 public:
  static bool is_enabled() { return detail::anomaly_mode_enabled; }
  static void set_enabled(bool enabled) { detail::anomaly_mode_enabled = enabled; }
};

// Thrown in anomaly mode when an op's forward or backward produces a NaN or an infinity.
class AnomalyError : public Error {
  using Error::Error;
};

// Turns anomaly detection on for the guard's lifetime (PyTorch's detect_anomaly): any op whose forward
// or backward produces a NaN or infinity throws an AnomalyError naming the op and the chain of ops that
// produced its input.
//   { DetectAnomalyGuard anomaly; loss = model(x); loss.backward(); }
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard() : previous_(AnomalyMode::is_enabled()) { AnomalyMode::set_enabled(true); }
  ~DetectAnomalyGuard() { AnomalyMode::set_enabled(previous_); }
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace minigrad
