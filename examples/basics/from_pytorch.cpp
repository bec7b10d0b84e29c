// The lines a PyTorch user writes first, each under the PyTorch line it stands for: a gradient, the
// methods, selection, a model trained on a regression, its weights saved and loaded, and sampling.
// docs/from-pytorch.md shows this program and what it prints.
//
//   minigrad-basics-from-pytorch
#include <iostream>
#include <optional>

#include "minigrad/minigrad.h"

using namespace minigrad;

int main() {
  // torch.manual_seed(0)
  manual_seed(0);

  // x = torch.tensor([[1., -2.], [3., 4.]], dtype=torch.float64, requires_grad=True)
  Variable x(Tensor::from_values({1, -2, 3, 4}, {2, 2}, DType::Float64), /*requires_grad=*/true);
  // y = (x.relu() * 2 - 1).sum(); y.backward()
  Variable y = (x.relu() * 2.0 - 1.0).sum();
  y.backward();
  std::cout << "x.grad: " << x.grad() << "\n";

  // x.t().reshape(4).clamp(min=0).mean()
  std::cout << "mean: " << x.t().reshape({4}).clamp(0.0, std::nullopt).mean().item() << "\n";
  // torch.where(x > 0, x, torch.zeros_like(x))
  std::cout << "where: " << where(gt(x.data(), 0.0), x, Tensor::zeros({2, 2}, DType::Float64)).data() << "\n";

  // model = nn.Sequential(nn.Linear(2, 8), nn.SiLU(), nn.Linear(8, 1)).double()
  nn::Sequential model(std::make_shared<nn::Linear>(2, 8), std::make_shared<nn::SiLU>(),
                       std::make_shared<nn::Linear>(8, 1));
  model.to(DType::Float64);
  // optimizer = torch.optim.AdamW(model.parameters(), lr=0.05)
  optim::AdamW optimizer(model.named_parameters(), {.lr = 0.05});
  // inputs = torch.randn(64, 2, dtype=torch.float64); targets = (inputs[:, 0] - 2 * inputs[:, 1]).reshape(64,
  // 1)
  const Tensor inputs = Tensor::normal({64, 2}, 0, 1, DType::Float64);
  const Tensor targets = (inputs.select(1, 0) - inputs.select(1, 1) * 2.0).reshape({64, 1});
  for (int step = 0; step < 200; ++step) {
    // loss = F.mse_loss(model(inputs), targets): a Tensor goes into forward() and into the loss as it is
    Variable loss = mse_loss(model(inputs), targets);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    if (step % 50 == 0 || step == 199) std::cout << "step " << step << ": loss " << loss.item() << "\n";
  }

  // torch.save(model.state_dict(), ...); model.load_state_dict(torch.load(...), strict=False)
  optim::save_weights(model, "model.safetensors");
  const optim::LoadedWeights left_out = optim::load_weights(model, "model.safetensors", {.strict = false});
  std::cout << "missing keys: " << left_out.missing_keys.size()
            << ", unexpected keys: " << left_out.unexpected_keys.size() << "\n";

  // torch.multinomial(torch.softmax(logits, -1), 10, replacement=True, generator=g)
  Generator g(1);
  const Tensor logits = Tensor::from_values({0, 1, 2}, {3}, DType::Float64);
  std::cout << "samples: " << multinomial(softmax(logits, -1), 10, /*replacement=*/true, &g) << "\n";
}
