#include "examples/sentiment/optimizer_step.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

namespace sentiment {

using namespace minigrad;
using Clock = std::chrono::steady_clock;

double reduce_and_clip(const std::vector<Variable>& parameters, const Ranks& ranks, std::span<double> stats,
                       double clip, const std::string& op, int64_t step, const std::string& lr_option) {
  double waited = 0;
  if (ranks.world > 1) {
    // The few stats first: a collective ends only when the slowest rank has joined it, so this one
    // takes what this rank waits for the others, and the gradients' sum after it only what it costs.
    const auto start = Clock::now();
    ranks.sum(stats);
    waited = std::chrono::duration<double>(Clock::now() - start).count();
    ranks.average_gradients(parameters);
  }
  const double loss = stats[0] / stats[2];
  const double norm = optim::clip_grad_norm_(parameters, clip);
  if (!std::isfinite(loss) || !std::isfinite(norm)) {
    throw Error(op, "step " + std::to_string(step + 1) + ": the " +
                        (std::isfinite(loss) ? "gradient norm" : "loss") + " is " +
                        std::to_string(std::isfinite(loss) ? norm : loss) +
                        "; stopping without taking the step (try a lower " + lr_option + ")");
  }
  return waited;
}

namespace {

// Whether p is one of the variables.
bool is_one_of(const std::vector<Variable>& variables, const Variable& p) {
  return std::any_of(variables.begin(), variables.end(), [&](const Variable& q) { return q.is_same(p); });
}

}  // namespace

Optimizers::Optimizers(SentimentModel& model, const Config& c)
    : logits_scale_(model.review_logits ? model.review_logits->lr_scale() : 1.0) {
  std::vector<Variable> tables;  // the row-sparse tables' weights
  for (const auto& [name, module] : model.named_modules()) {
    const auto* embedding = dynamic_cast<const nn::Embedding*>(module);
    if (embedding && embedding->options.sparse) tables.push_back(embedding->weight);
  }
  const std::vector<Variable> review_logits =
      model.review_logits ? model.review_logits->parameters() : std::vector<Variable>{};
  std::vector<std::pair<std::string, Variable>> dense, sparse, logits;
  for (const auto& [name, p] : model.named_parameters()) {
    (is_one_of(review_logits, p) ? logits : is_one_of(tables, p) ? sparse : dense).emplace_back(name, p);
    parameters_.push_back(p);
  }
  dense_.emplace(dense, optim::AdamWOptions{.lr = c.lr, .weight_decay = c.weight_decay});
  if (!sparse.empty()) sparse_.emplace(sparse, optim::SparseAdamOptions{.lr = c.lr});
  if (!logits.empty()) logits_.emplace(logits, optim::SparseAdamOptions{.lr = c.lr * logits_scale_});
}

void Optimizers::set_learning_rate(double lr) {
  for (optim::Optimizer* o : all()) o->set_learning_rate(lr);
  if (logits_) logits_->set_learning_rate(lr * logits_scale_);
}

void Optimizers::zero_grad() {
  for (optim::Optimizer* o : all()) o->zero_grad();
}

void Optimizers::step() {
  for (optim::Optimizer* o : all()) o->step();
}

std::vector<optim::Optimizer*> Optimizers::all() {
  std::vector<optim::Optimizer*> list = {&*dense_};
  if (sparse_) list.push_back(&*sparse_);
  if (logits_) list.push_back(&*logits_);
  return list;
}

}  // namespace sentiment
