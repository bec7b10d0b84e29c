// ProfiledRun: a run's hooks with a profile around some of its steps. It does what the run's own hooks
// (LongRun) do, and turns the samples of a `perf record --control` on after step `first` and off after
// step `last`, so that the profile is of training steps alone: not of reading and tokenizing the reviews,
// building the tables, or the first steps, whose first touches of fresh memory fault pages in.
// bench/profile-step.sh --main-job runs `minigrad-sentiment train` this way.
#pragma once

#include <cstdint>
#include <functional>

#include "examples/common/perf_control.h"
#include "examples/sentiment/training.h"

namespace sentiment {

class ProfiledRun : public TrainingHooks {
 public:
  ProfiledRun(TrainingHooks& run, const examples::PerfControl& perf, int64_t first, int64_t last)
      : run_(run), perf_(perf), first_(first), last_(last) {}
  void start(Position& at, Optimizers& optimizers) override {
    run_.start(at, optimizers);
    if (at.step == first_) perf_.send("enable");
  }
  void after_step(const Position& at, bool epoch_end, Optimizers& optimizers) override {
    if (at.step == last_) perf_.send("disable");
    run_.after_step(at, epoch_end, optimizers);
    if (at.step == first_) perf_.send("enable");
  }
  void with_kept_weights(const std::function<void()>& use) override { run_.with_kept_weights(use); }
  void end(const Position& at, Optimizers& optimizers) override { run_.end(at, optimizers); }

 private:
  TrainingHooks& run_;
  const examples::PerfControl& perf_;
  int64_t first_, last_;
};

}  // namespace sentiment
