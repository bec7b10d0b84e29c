#include "autograd/grad_mode.h"

namespace minigrad {

namespace {
thread_local bool grad_enabled = true;
}

bool GradMode::is_enabled() {
  return grad_enabled;
}
void GradMode::set_enabled(bool enabled) {
  grad_enabled = enabled;
}

namespace {
thread_local bool anomaly_enabled = false;
}

bool AnomalyMode::is_enabled() {
  return anomaly_enabled;
}
void AnomalyMode::set_enabled(bool enabled) {
  anomaly_enabled = enabled;
}

}  // namespace minigrad
