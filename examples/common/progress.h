// Training progress for the example programs: a bar redrawn in place on a terminal, or a plain line every
// ten seconds in a log.
//
//   Progress progress(std::cout, isatty(STDOUT_FILENO), total_steps);  // counts tokens, or:
//   Progress progress(std::cout, isatty(STDOUT_FILENO), total_steps, "images");
//   progress.update(step, "loss 0.4312", units_so_far);
//   // [#########...............] step 120/300  loss 0.4312  51234 tokens/s  ETA 0:42
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <ostream>
#include <string>
#include <utility>

namespace examples {

// "m:ss"
inline std::string clock_text(double seconds) {
  const int s = static_cast<int>(std::lround(std::max(0.0, seconds)));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d", s / 60, s % 60);
  return buf;
}

class Progress {
 public:
  using Clock = std::chrono::steady_clock;

  // `unit`: what the rate counts ("tokens", "images").
  Progress(std::ostream& out, bool interactive, int64_t total_steps, std::string unit = "tokens")
      : out_(out),
        interactive_(interactive),
        total_(total_steps),
        unit_(std::move(unit)),
        start_(Clock::now()),
        last_(start_) {}

  // `stats`: what the caller measures (loss, accuracy, ...); done: units processed so far, for the rate.
  void update(int64_t step, const std::string& stats, double done) {
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const bool last_step = step == total_;
    if (!last_step && std::chrono::duration<double>(now - last_).count() < (interactive_ ? 0.25 : 10.0))
      return;
    last_ = now;
    const double eta =
        step > 0 ? elapsed / static_cast<double>(step) * static_cast<double>(total_ - step) : 0;
    char line[300];
    std::snprintf(line, sizeof line, "step %lld/%lld  %s  %.0f %s/s  ETA %s", static_cast<long long>(step),
                  static_cast<long long>(total_), stats.c_str(), done / std::max(elapsed, 1e-9),
                  unit_.c_str(), clock_text(eta).c_str());
    if (interactive_) {
      constexpr int kWidth = 24;
      const int filled = static_cast<int>(kWidth * step / std::max<int64_t>(total_, 1));
      out_ << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] " << line
           << "\033[K" << (last_step ? "\n" : "") << std::flush;
    } else {
      out_ << "[" << clock_text(elapsed) << "] " << line << "\n" << std::flush;
    }
  }

  // A line of its own between updates (an epoch's summary); on a terminal it replaces the bar, which the
  // next update draws again below it.
  void message(const std::string& text) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    if (interactive_) out_ << "\r\033[K";
    out_ << "[" << clock_text(elapsed) << "] " << text << "\n" << std::flush;
  }

 private:
  std::ostream& out_;
  bool interactive_;
  int64_t total_;
  std::string unit_;
  Clock::time_point start_, last_;
};

// The mean loss over the first and over the last `window` steps of a run: a summary that one noisy step
// does not move.
class LossSummary {
 public:
  explicit LossSummary(size_t window = 50) : window_(window) {}

  void add(double loss) {
    if (count_++ < window_) first_sum_ += loss;
    last_.push_back(loss);
    last_sum_ += loss;
    if (last_.size() > window_) {
      last_sum_ -= last_.front();
      last_.pop_front();
    }
  }
  double first() const { return count_ ? first_sum_ / static_cast<double>(std::min(count_, window_)) : 0; }
  double last() const { return last_.empty() ? 0 : last_sum_ / static_cast<double>(last_.size()); }

 private:
  size_t window_, count_ = 0;
  double first_sum_ = 0, last_sum_ = 0;
  std::deque<double> last_;
};

}  // namespace examples
