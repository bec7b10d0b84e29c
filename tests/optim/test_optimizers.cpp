// Optimizers, clipping and schedules. The expected values of the first three steps come from PyTorch 1.13
// (Debian's python3-torch) run on the same parameters and gradients, in float64.
#include <numbers>

#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {

using Steps = std::vector<std::vector<double>>;

// Three steps from p = [1, -2, 0.5] with fixed gradients; returns p after each step.
template <typename MakeOptimizer>
Steps three_steps(MakeOptimizer make) {
  Variable p(Tensor::from_values({1.0, -2.0, 0.5}, {3}, DType::Float64), true);
  auto optimizer = make(std::vector<Variable>{p});
  const std::vector<std::vector<double>> grads = {{0.1, -0.2, 0.3}, {0.4, 0.1, -0.5}, {-0.3, 0.2, 0.05}};
  Steps out;
  for (const auto& g : grads) {
    optimizer.zero_grad();
    p.set_grad(Tensor::from_values(std::span<const double>(g), {3}, DType::Float64));
    optimizer.step();
    out.push_back(p.data().to_vector());
  }
  return out;
}

void expect_steps(const Steps& got, const Steps& pytorch) {
  for (size_t s = 0; s < pytorch.size(); ++s) {
    for (size_t i = 0; i < pytorch[s].size(); ++i) {
      BOOST_TEST(std::abs(got[s][i] - pytorch[s][i]) < 1e-14, "step " << s + 1 << " element " << i << ": "
                                                                      << got[s][i] << " vs PyTorch "
                                                                      << pytorch[s][i]);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(optimizers)

BOOST_AUTO_TEST_CASE(sgd_matches_pytorch) {
  expect_steps(three_steps([](auto ps) { return optim::SGD(ps, {.lr = 0.1}); }),
               {{0.99, -1.98, 0.47}, {0.95, -1.99, 0.52}, {0.98, -2.01, 0.515}});
  expect_steps(three_steps([](auto ps) {
                 return optim::SGD(ps, {.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01});
               }),
               {{0.989, -1.978, 0.4695},
                {0.9422098999999999, -1.9654198, 0.48662744999999996},
                {0.9262508210899999, -1.97032874218, 0.49710419029499997}});
  expect_steps(three_steps([](auto ps) {
                 return optim::SGD(ps, {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true});
               }),
               {{0.9791, -1.9582, 0.44205},
                {0.8923297099999999, -1.95565942, 0.511505105},
                {0.906422212551, -1.980419525102, 0.5189406848005}});
}

BOOST_AUTO_TEST_CASE(adam_matches_pytorch) {
  expect_steps(three_steps([](auto ps) { return optim::Adam(ps, {.lr = 0.01}); }),
               {{0.9900000009999999, -1.9900000005, 0.4900000003333333},
                {0.9811562363975117, -1.9873366302718676, 0.4929356123098128},
                {0.9793891533789653, -1.9900635980238932, 0.4946504232345407}});
  expect_steps(three_steps([](auto ps) {
                 return optim::Adam(ps, {.lr = 0.01, .betas = {0.8, 0.99}, .eps = 1e-6, .weight_decay = 0.1});
               }),
               {{0.99000004999975, -1.9900000249999374, 0.49000002857134695},
                {0.980386376001308, -1.981993348578245, 0.4923519562836955},
                {0.9763661294051624, -1.9762227283439733, 0.4928129340325136}});
}

BOOST_AUTO_TEST_CASE(adamw_matches_pytorch) {
  expect_steps(three_steps([](auto ps) { return optim::AdamW(ps, {.lr = 0.01, .weight_decay = 0.1}); }),
               {{0.9890000009999999, -1.9880000005, 0.4895000003333333},
                {0.9791672363965117, -1.9833486302713677, 0.4919461123094795},
                {0.9764209861415688, -1.984092249393122, 0.49316897712189794}});
}

// Adam and AdamW against their update written out element by element in double, on parameters of both
// dtypes and of sizes on either side of the pool's grain (split between threads or not), with step
// counts that differ (the second is skipped at the first step), on 1 and 2 threads: the results must be
// the same bits on both, since each element's update is the same however the elements are split.
BOOST_AUTO_TEST_CASE(adam_updates_every_element_of_every_parameter_as_written) {
  const std::vector<std::pair<int64_t, DType>> shapes = {
      {1, DType::Float32},     {40000, DType::Float32}, {3, DType::Float64}, {70001, DType::Float32},
      {33000, DType::Float64}, {0, DType::Float32},     {5, DType::Float32}};
  const int threads_before = num_threads();
  std::vector<std::vector<double>> results[2];
  for (const bool decoupled : {false, true}) {
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      Generator g(7);
      std::vector<Variable> ps;
      for (const auto& [n, dtype] : shapes) ps.emplace_back(Tensor::normal({n}, 0, 1, dtype, &g), true);
      std::vector<std::vector<double>> p0, m, v;  // the reference, in double
      std::vector<int> t(ps.size(), 0);
      for (const Variable& p : ps) {
        p0.push_back(p.data().to_vector());
        m.emplace_back(p0.back().size(), 0.0);
        v.emplace_back(p0.back().size(), 0.0);
      }
      const double lr = 0.01, b1 = 0.9, b2 = 0.99, eps = 1e-6, wd = 0.1;
      std::unique_ptr<optim::Adam> adam =
          decoupled
              ? std::make_unique<optim::AdamW>(
                    ps, optim::AdamWOptions{.lr = lr, .betas = {b1, b2}, .eps = eps, .weight_decay = wd})
              : std::make_unique<optim::Adam>(
                    ps, optim::AdamOptions{.lr = lr, .betas = {b1, b2}, .eps = eps, .weight_decay = wd});
      for (int step = 0; step < 3; ++step) {
        adam->zero_grad();
        for (size_t i = 0; i < ps.size(); ++i) {
          if (step == 0 && i == 1) continue;  // no gradient: skipped, its step count stays behind
          const Tensor grad = Tensor::normal({shapes[i].first}, 0, 1, shapes[i].second, &g);
          ps[i].set_grad(grad);
          const std::vector<double> gv = grad.to_vector();
          const double c1 = 1 - std::pow(b1, ++t[i]), c2 = 1 - std::pow(b2, t[i]);
          for (size_t k = 0; k < gv.size(); ++k) {
            double& p = p0[i][k];
            if (decoupled) p *= 1 - lr * wd;
            const double gk = decoupled ? gv[k] : gv[k] + wd * p;
            m[i][k] = b1 * m[i][k] + (1 - b1) * gk;
            v[i][k] = b2 * v[i][k] + (1 - b2) * gk * gk;
            p -= lr / c1 * m[i][k] / (std::sqrt(v[i][k]) / std::sqrt(c2) + eps);
          }
        }
        adam->step();
      }
      std::vector<std::vector<double>>& got = results[threads - 1];
      got.clear();
      for (size_t i = 0; i < ps.size(); ++i) {
        got.push_back(ps[i].data().to_vector());
        const double tol = shapes[i].second == DType::Float32 ? 2e-6 : 1e-13;
        size_t wrong = 0;
        for (size_t k = 0; k < got.back().size(); ++k) {
          if (!(std::abs(got.back()[k] - p0[i][k]) <= tol * (1 + std::abs(p0[i][k])))) ++wrong;
        }
        BOOST_TEST(wrong == 0u, (decoupled ? "AdamW" : "Adam")
                                    << ", " << threads << " threads, parameter " << i << ": " << wrong
                                    << " elements off the reference");
      }
    }
    BOOST_TEST((results[0] == results[1]), (decoupled ? "AdamW" : "Adam") << ": 1 and 2 threads differ");
  }
  set_num_threads(threads_before);
}

BOOST_AUTO_TEST_CASE(the_learning_rate_has_one_value_that_options_and_step_both_read) {
  // After set_learning_rate (a schedule's), options().lr says the new rate and step() uses it.
  Variable p(Tensor::from_values({1.0}, {1}, DType::Float64), true);
  optim::SGD sgd({p}, {.lr = 0.1, .momentum = 0.5});
  sgd.set_learning_rate(0.25);
  BOOST_TEST(sgd.learning_rate() == 0.25);
  BOOST_TEST(sgd.options().lr == 0.25);
  BOOST_TEST(sgd.options().momentum == 0.5);
  p.set_grad(Tensor::from_values({2.0}, {1}, DType::Float64));
  sgd.step();
  BOOST_TEST(p.data().item() == 1.0 - 0.25 * 2.0);
  optim::AdamW adamw({p}, {.lr = 1e-3});
  adamw.set_learning_rate(5e-4);
  BOOST_TEST(adamw.options().lr == 5e-4);
  BOOST_TEST(adamw.options().weight_decay == 1e-2);
  optim::SparseAdam sparse({p}, {.lr = 1e-3});
  sparse.set_learning_rate(2e-3);
  BOOST_TEST(sparse.options().lr == 2e-3);
}

BOOST_AUTO_TEST_CASE(parameters_without_a_gradient_are_skipped) {
  Variable used(Tensor::ones({2}, DType::Float64), true), unused(Tensor::ones({2}, DType::Float64), true);
  optim::Adam adam({used, unused}, {.lr = 0.1});
  sum(used * 3.0).backward();
  adam.step();
  expect_equal(unused.data(), {1, 1});
  BOOST_TEST(used.data().at({0}) < 1);
  // Its state was never created, so it is not in the checkpointed state either.
  for (const auto& [name, t] : adam.state_tensors()) BOOST_TEST(name.rfind("param0.", 0) == 0);
}

BOOST_AUTO_TEST_CASE(the_moving_average_follows_its_recurrence_and_swaps_in_and_out) {
  Variable p(Tensor::from_values({1.0, -2.0}, {2}, DType::Float64), true);
  optim::ExponentialMovingAverage ema({p}, {.decay = 0.9});
  // The recurrence by hand: a ← d·a + (1 − d)·p with d = min(0.9, (1 + n)/(10 + n)) at update n.
  std::vector<double> a = {1.0, -2.0};
  const std::vector<std::vector<double>> values = {{2, 0}, {0, 4}, {3, 3}, {-1, 1}};
  for (size_t n = 1; n <= values.size(); ++n) {
    p.data().copy_(Tensor::from_values(std::span<const double>(values[n - 1]), {2}, DType::Float64));
    ema.update();
    const double d = std::min(0.9, (1.0 + double(n)) / (10.0 + double(n)));
    for (size_t i = 0; i < 2; ++i) a[i] = d * a[i] + (1 - d) * values[n - 1][i];
  }
  BOOST_TEST(ema.updates() == 4);
  for (int64_t i = 0; i < 2; ++i) BOOST_TEST(std::abs(ema.averages()[0].at({i}) - a[size_t(i)]) < 1e-15);
  ema.swap();  // the parameter holds the average, the average the last value
  for (int64_t i = 0; i < 2; ++i) BOOST_TEST(std::abs(p.data().at({i}) - a[size_t(i)]) < 1e-15);
  expect_equal(ema.averages()[0], {-1, 1});
  ema.swap();
  expect_equal(p.data(), {-1, 1});

  // The saved state restores an average that continues identically, and a wrong one is refused.
  optim::ExponentialMovingAverage copy({p}, {.decay = 0.9});
  copy.load_state_tensors(ema.state_tensors());
  ema.update();
  copy.update();
  BOOST_TEST(copy.updates() == 5);
  BOOST_TEST(copy.averages()[0].to_vector() == ema.averages()[0].to_vector());
  expect_error<ShapeError>(
      [&] {
        copy.load_state_tensors({{"param0", Tensor::zeros({3}, DType::Float64)},
                                 {"updates", Tensor::from_vector<int64_t>({1}, {})}});
      },
      "ExponentialMovingAverage: 'param0' is float64 [3] but the parameter is float64 [2]");
  expect_error<ValueError>([&] { copy.load_state_tensors({}); },
                           "ExponentialMovingAverage: the saved averages have no 'updates'");
  expect_error<ValueError>([&] { optim::ExponentialMovingAverage({p}, {.decay = 1}); },
                           "ExponentialMovingAverage: decay must be in [0, 1), got 1.000000");
}

BOOST_AUTO_TEST_CASE(bad_hyperparameters_are_refused) {
  Variable p(Tensor::ones({1}), true);
  expect_error<ValueError>([&] { optim::SGD({p}, {.lr = 0.1, .nesterov = true}); },
                           "SGD: Nesterov momentum requires momentum > 0 and dampening = 0");
  expect_error<ValueError>(
      [&] {
        optim::AdamW({p}, {.betas = {1.5, 0.999}});
      },
      "AdamW: betas[0] must be in [0.000000, 1.000000], got 1.500000");
  expect_error<ValueError>([&] { optim::Adam({p}, {.lr = -1}); },
                           "optimizer: lr must be in [0.000000, inf], got -1.000000");
  expect_error<ValueError>([&] { optim::SGD({Variable(Tensor::ones({1}))}, {}); },
                           "optimizer: parameter param0 is not a leaf that requires grad");
}

BOOST_AUTO_TEST_CASE(clip_grad_norm_matches_pytorch) {
  Variable a(Tensor::from_values({3, 4}, {2}, DType::Float64), true),
      b(Tensor::from_values({12}, {1}, DType::Float64), true);
  a.set_grad(Tensor::from_values({3, 4}, {2}, DType::Float64));
  b.set_grad(Tensor::from_values({12}, {1}, DType::Float64));
  Variable no_grad(Tensor::ones({1}, DType::Float64), true);
  const double norm = optim::clip_grad_norm_({a, b, no_grad}, 6.5);
  BOOST_TEST(norm == 13.0);  // √(9 + 16 + 144)
  // PyTorch: [1.4999998846153937, 1.9999998461538582], [5.999999538461575]
  expect_close(a.grad(), {1.4999998846153937, 1.9999998461538582}, 1e-15);
  expect_close(b.grad(), {5.999999538461575}, 1e-15);
  // Under the limit: untouched
  BOOST_TEST(optim::clip_grad_norm_({a, b}, 100) ==
             std::sqrt(1.4999998846153937 * 1.4999998846153937 + 1.9999998461538582 * 1.9999998461538582 +
                       5.999999538461575 * 5.999999538461575));
  expect_close(b.grad(), {5.999999538461575}, 1e-15);
  // Non-finite: reported, gradients left alone
  b.set_grad(Tensor::from_values({INFINITY}, {1}, DType::Float64));
  BOOST_TEST(std::isinf(optim::clip_grad_norm_({a, b}, 1)));
  expect_close(a.grad(), {1.4999998846153937, 1.9999998461538582}, 1e-15);
  // ... or an error, when asked (PyTorch's error_if_nonfinite)
  b.set_grad(Tensor::from_values({NAN}, {1}, DType::Float64));
  expect_error<ValueError>(
      [&] {
        optim::clip_grad_norm_({a, b}, 1, {.error_if_nonfinite = true});
      },
      "clip_grad_norm_: the total norm of the gradients is nan: a gradient holds an inf or a NaN");
}

BOOST_AUTO_TEST_CASE(warmup_cosine_schedule) {
  optim::WarmupCosine s({.peak_lr = 1e-3, .warmup_steps = 10, .total_steps = 110, .final_lr = 1e-4});
  BOOST_TEST(s.at(0) == 0.0);
  BOOST_TEST(std::abs(s.at(5) - 5e-4) < 1e-18);
  BOOST_TEST(s.at(10) == 1e-3);                     // the peak, at the end of warm-up
  BOOST_TEST(std::abs(s.at(60) - 5.5e-4) < 1e-15);  // half way down: (peak + final) / 2
  BOOST_TEST(std::abs(s.at(110) - 1e-4) < 1e-18);   // the floor
  BOOST_TEST(std::abs(s.at(500) - 1e-4) < 1e-18);   // and after
  const double quarter = 1e-4 + 0.9e-3 * 0.5 * (1 + std::cos(std::numbers::pi / 4));
  BOOST_TEST(std::abs(s.at(35) - quarter) < 1e-15);
  expect_error<ValueError>([] { optim::WarmupCosine({.warmup_steps = 10, .total_steps = 10}); },
                           "WarmupCosine: needs 0 <= warmup_steps < total_steps, got 10 and 10");
}

BOOST_AUTO_TEST_CASE(inverse_square_root_schedule_of_vaswani_et_al) {
  optim::InverseSqrt s({.d_model = 512, .warmup_steps = 4000});
  // lr = 512^-0.5 · min(s^-0.5, s · 4000^-1.5), s = step + 1
  BOOST_TEST(std::abs(s.at(0) - 1 / std::sqrt(512.0) * std::pow(4000.0, -1.5)) < 1e-18);
  const double peak = 1 / std::sqrt(512.0) / std::sqrt(4000.0);
  BOOST_TEST(std::abs(s.at(3999) - peak) < 1e-15);  // both branches meet at s = warmup
  BOOST_TEST(s.at(3998) < peak);
  BOOST_TEST(s.at(4000) < peak);
  BOOST_TEST(std::abs(s.at(15999) - peak / 2) < 1e-15);  // 4x the steps, half the rate
}

BOOST_AUTO_TEST_SUITE_END()
