#include "minigrad/nn/recurrent.h"

#include <cmath>
#include <sstream>

#include "minigrad/tensor/ops.h"

namespace minigrad::nn {

namespace {

std::string str(int64_t v) {
  return std::to_string(v);
}

}  // namespace

RecurrentBase::RecurrentBase(Cell cell, const RNNOptions& opts) : options(opts), cell_(cell) {
  const char* layer = cell == Cell::GRU ? "GRU" : cell == Cell::LSTM ? "LSTM" : "RNN";
  if (opts.input_size <= 0 || opts.hidden_size <= 0 || opts.num_layers <= 0) {
    throw ValueError(layer, "input_size, hidden_size and num_layers must be positive, got " +
                                str(opts.input_size) + ", " + str(opts.hidden_size) + ", " +
                                str(opts.num_layers));
  }
  if (!(opts.dropout >= 0 && opts.dropout <= 1)) {
    throw ValueError(layer, "dropout must be in [0, 1], got " + std::to_string(opts.dropout));
  }
  if (opts.nonlinearity == Nonlinearity::ReLU && (cell == Cell::GRU || cell == Cell::LSTM)) {
    throw ValueError(layer, "nonlinearity ReLU is an option of RNN only");
  }
  const int64_t gates = cell == Cell::LSTM ? 4 : cell == Cell::GRU ? 3 : 1;
  const int64_t h = opts.hidden_size, rows = gates * h;
  // PyTorch draws every parameter from U(-1/√H, 1/√H), in this order of registration.
  const double bound = 1.0 / std::sqrt(static_cast<double>(h));
  auto draw = [&](const Shape& shape) {
    return Tensor::uniform(shape, -bound, bound, DType::Float32, opts.generator);
  };
  for (int64_t l = 0; l < opts.num_layers; ++l) {
    const int64_t in = l == 0 ? opts.input_size : h * directions();
    for (int64_t d = 0; d < directions(); ++d) {
      const std::string suffix = "_l" + str(l) + (d == 1 ? "_reverse" : "");
      Weights w;
      w.weight_ih = register_parameter("weight_ih" + suffix, draw({rows, in}));
      w.weight_hh = register_parameter("weight_hh" + suffix, draw({rows, h}));
      if (opts.bias) {
        w.bias_ih = register_parameter("bias_ih" + suffix, draw({rows}));
        w.bias_hh = register_parameter("bias_hh" + suffix, draw({rows}));
      }
      weights.push_back(std::move(w));
    }
  }
}

RNN::RNN(const RNNOptions& options)
    : RecurrentBase(options.nonlinearity == Nonlinearity::ReLU ? Cell::RNNReLU : Cell::RNNTanh, options) {}
GRU::GRU(const GRUOptions& options) : RecurrentBase(Cell::GRU, options) {}
LSTM::LSTM(const LSTMOptions& options) : RecurrentBase(Cell::LSTM, options) {}

RNNOptions RecurrentBase::with_sizes(RNNOptions options, int64_t input_size, int64_t hidden_size,
                                     const char* layer) {
  detail::set_positional(options, &RNNOptions::input_size, input_size, layer, "input_size");
  detail::set_positional(options, &RNNOptions::hidden_size, hidden_size, layer, "hidden_size");
  return options;
}
RNN::RNN(int64_t input_size, int64_t hidden_size, RNNOptions options)
    : RNN(with_sizes(options, input_size, hidden_size, "RNN")) {}
GRU::GRU(int64_t input_size, int64_t hidden_size, GRUOptions options)
    : GRU(with_sizes(options, input_size, hidden_size, "GRU")) {}
LSTM::LSTM(int64_t input_size, int64_t hidden_size, LSTMOptions options)
    : LSTM(with_sizes(options, input_size, hidden_size, "LSTM")) {}

// One layer and direction over the whole sequence.
struct RecurrentBase::Run {
  Cell cell;
  const Weights& w;
  int64_t hidden;
  // active[t]: (N, 1), 1 where step t is inside the sequence; undefined where every sequence is.
  const std::vector<Tensor>& active;

  struct Result {
    Variable output;  // (L, N, H)
    Variable h, c;    // (N, H) each: the state after each sequence's last step
  };

  // x (L, N, in), h0 and c0 (N, H), the steps taken from the last to the first if `reverse`.
  Result operator()(const Variable& x, Variable h, Variable c, bool reverse) const {
    // W_i·x_t + b_i for every step in one product: (L, N, gates·H). For RNN and LSTM, b_h joins it here,
    // as it is added at every step anyway; GRU's b_hn sits inside r ⊙ (W_hn·h + b_hn), so GRU keeps it
    // for the step.
    Variable projected = linear(x, w.weight_ih, w.bias_ih);
    if (cell != Cell::GRU && w.bias_hh.defined()) projected = projected + w.bias_hh;
    const std::vector<Variable> steps = unbind(projected, 0);  // L x (N, gates·H)
    const Variable w_hh_t = transpose(w.weight_hh, 0, 1);      // (H, gates·H)
    const int64_t length = x.shape()[0];
    std::vector<Variable> outputs(static_cast<size_t>(length));
    for (int64_t s = 0; s < length; ++s) {
      const size_t t = static_cast<size_t>(reverse ? length - 1 - s : s);
      auto [h_new, c_new] = step(steps[t], h, c, w_hh_t);
      if (!active[t].defined()) {
        h = h_new;
        c = c_new;
        outputs[t] = h_new;
        continue;
      }
      // A packed sequence: past its length a sequence keeps its state and outputs zeros.
      const Variable m(active[t]);
      h = h + m * (h_new - h);
      if (c.defined()) c = c + m * (c_new - c);
      outputs[t] = m * h_new;
    }
    return {stack(outputs, 0), h, c};
  }

  // One step from (h, c) given W_i·x_t + b_i (+ b_h), both (N, ·): the new (h, c).
  std::pair<Variable, Variable> step(const Variable& x_part, const Variable& h, const Variable& c,
                                     const Variable& w_hh_t) const {
    const int64_t H = hidden;
    Variable hh = matmul(h, w_hh_t);  // (N, gates·H)
    switch (cell) {
      case Cell::RNNTanh:
        return {tanh(x_part + hh), Variable()};
      case Cell::RNNReLU:
        return {relu(x_part + hh), Variable()};
      case Cell::GRU: {
        if (w.bias_hh.defined()) hh = hh + w.bias_hh;
        // r, z, n parts of both products, as parts of (N, 3, H) views (their gradients fill one buffer each)
        const std::vector<Variable> xg = unbind(reshape(x_part, {-1, 3, H}), 1),
                                    hg = unbind(reshape(hh, {-1, 3, H}), 1);
        const Variable r = sigmoid(xg[0] + hg[0]), z = sigmoid(xg[1] + hg[1]);
        const Variable n = tanh(xg[2] + r * hg[2]);
        return {n + z * (h - n), Variable()};  // (1 − z) ⊙ n + z ⊙ h
      }
      case Cell::LSTM: {
        // The four gates as parts of one (N, 4, H) view (PyTorch's chunk): their gradients fill one buffer.
        const std::vector<Variable> gates = unbind(reshape(x_part + hh, {-1, 4, H}), 1);  // i, f, g, o
        const Variable i = sigmoid(gates[0]), f = sigmoid(gates[1]), g = tanh(gates[2]),
                       o = sigmoid(gates[3]);
        const Variable c_new = f * c + i * g;
        return {o * tanh(c_new), c_new};
      }
    }
    return {};
  }
};

namespace {

// (L) masks of (N, 1) in `dtype`, 1 at the sequences still running at step t; undefined for the steps
// before the shortest sequence ends, where all run. Checks valid_lens against input (L, N, ·).
std::vector<Tensor> active_steps(const std::string& layer, const Tensor& valid_lens, const Variable& x) {
  const int64_t length = x.shape()[0], n = x.shape()[1];
  std::vector<Tensor> active(static_cast<size_t>(length));
  if (!valid_lens.defined()) return active;
  check_dtype(layer, "valid_lens", valid_lens, DType::Int64);
  if (valid_lens.shape() != Shape{n}) {
    throw ShapeError(layer, "valid_lens of shape " + valid_lens.shape().str() + " for " + str(n) +
                                " sequences (expected [" + str(n) + "])");
  }
  const Tensor lens = valid_lens.contiguous();
  int64_t shortest = length;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t len = lens.data_ptr<const int64_t>()[i];
    if (len < 1 || len > length) {
      throw ValueError(layer, "valid_lens[" + str(i) + "] = " + str(len) + " is not in 1.." + str(length) +
                                  " for a sequence of length " + str(length));
    }
    shortest = std::min(shortest, len);
  }
  // step < length of each sequence, broadcast (L, 1, 1) against (1, N, 1)
  const Tensor running =
      lt(Tensor::arange(length).reshape({length, 1, 1}), lens.reshape({1, n, 1})).to(x.dtype());
  for (int64_t t = shortest; t < length; ++t) active[static_cast<size_t>(t)] = running.select(0, t);
  return active;
}

// initial (num_layers · directions, N, H) or undefined, checked; `what` is "h0" or "c0".
void check_state(const std::string& layer, const char* what, const Variable& initial, const Shape& expected,
                 DType dtype) {
  if (!initial.defined()) return;
  if (initial.shape() != expected || initial.dtype() != dtype) {
    throw ShapeError(layer, std::string("expects ") + what + " " + describe(expected, dtype) + ", got " +
                                describe(initial.shape(), initial.dtype()));
  }
}

}  // namespace

RecurrentOutput RecurrentBase::forward(const Variable& input, const RecurrentState& initial,
                                       const Tensor& valid_lens) const {
  // Hooks see the input and the output: h0 and c0 come inside a RecurrentState, which is no Variable.
  const std::string layer = name();
  if (input.defined() && input.rank() == 2) {
    // Unbatched, as PyTorch takes it: input (L, input_size), h0 and c0 (num_layers · directions, H); run
    // as a batch of one, and the batch dimension taken off the results.
    const int64_t batch_dim = options.batch_first ? 0 : 1;
    auto batched = [](const Variable& state) { return state.defined() ? unsqueeze(state, 1) : state; };
    auto unbatched = [](const Variable& state) { return state.defined() ? squeeze(state, 1) : state; };
    const RecurrentOutput out =
        forward(unsqueeze(input, batch_dim), {batched(initial.h), batched(initial.c)}, valid_lens);
    return {.output = squeeze(out.output, batch_dim), .h_n = unbatched(out.h_n), .c_n = unbatched(out.c_n)};
  }
  const char* layout = options.batch_first ? "(N, L, " : "(L, N, ";
  if (!input.defined() || input.rank() != 3 || input.shape()[2] != options.input_size || input.numel() == 0) {
    throw ShapeError(layer,
                     "expects input " + std::string(layout) + str(options.input_size) + ") or (L, " +
                         str(options.input_size) + ") with L and N at least 1, got " +
                         (input.defined() ? input.shape().str() : std::string("an undefined Variable")));
  }
  const Variable x = options.batch_first ? transpose(input, 0, 1) : input;  // (L, N, in)
  const int64_t n = x.shape()[1], h = options.hidden_size, layers = options.num_layers;
  const std::vector<Tensor> active = active_steps(layer, valid_lens, x);
  const Shape state_shape{layers * directions(), n, h};
  check_state(layer, "h0", initial.h, state_shape, x.dtype());
  if (cell_ == Cell::LSTM) {
    check_state(layer, "c0", initial.c, state_shape, x.dtype());
    if (initial.h.defined() != initial.c.defined()) {  // PyTorch's LSTM takes the pair (h0, c0) or neither
      throw ValueError(
          layer, std::string(initial.h.defined() ? "h0 is given without c0" : "c0 is given without h0") +
                     "; pass both, or neither for zeros");
    }
  } else if (initial.c.defined()) {
    throw ValueError(layer, "has no cell state; pass only h0");
  }
  auto initial_state = [&](const Variable& given, int64_t k) {
    return given.defined() ? select(given, 0, k) : Variable(Tensor::zeros({n, h}, x.dtype()));
  };

  std::vector<Variable> h_n, c_n;
  Variable layer_input = x;
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<Variable> outputs;  // per direction: (L, N, H)
    for (int64_t d = 0; d < directions(); ++d) {
      const int64_t k = l * directions() + d;
      const Run run{cell_, weights[static_cast<size_t>(k)], h, active};
      const Variable c0 = cell_ == Cell::LSTM ? initial_state(initial.c, k) : Variable();
      Run::Result r = run(layer_input, initial_state(initial.h, k), c0, /*reverse=*/d == 1);
      outputs.push_back(std::move(r.output));
      h_n.push_back(std::move(r.h));
      if (cell_ == Cell::LSTM) c_n.push_back(std::move(r.c));
    }
    layer_input = outputs.size() == 1 ? outputs[0] : concat(outputs, 2);  // (L, N, directions·H)
    if (l + 1 < layers && options.dropout > 0) {
      layer_input = dropout(layer_input, options.dropout, is_training(), options.generator);
    }
  }
  return {.output = options.batch_first ? transpose(layer_input, 0, 1) : layer_input,
          .h_n = stack(h_n, 0),
          .c_n = cell_ == Cell::LSTM ? stack(c_n, 0) : Variable()};
}

std::string RecurrentBase::extra_repr() const {
  std::string s = str(options.input_size) + ", " + str(options.hidden_size);
  if (options.num_layers != 1) s += ", num_layers=" + str(options.num_layers);
  if (cell_ == Cell::RNNReLU) s += ", nonlinearity=relu";
  if (!options.bias) s += ", bias=False";
  if (options.batch_first) s += ", batch_first=True";
  if (options.dropout != 0) {
    std::ostringstream p;
    p << options.dropout;
    s += ", dropout=" + p.str();
  }
  if (options.bidirectional) s += ", bidirectional=True";
  return s;
}

}  // namespace minigrad::nn
