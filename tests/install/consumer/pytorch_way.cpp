// A program written the PyTorch way against an installed minigrad (found with find_package(minigrad), no
// MPI): modules fed Tensors and Variables, methods on Variables, mse_loss, clamp and where, and a PyTorch
// nn.TransformerEncoderLayer's weights loaded by their PyTorch names.
//
//   pytorch_way [FOLDER]   FOLDER holds torch_state.safetensors (the PyTorch layer's state dict) and
//                          torch_io.safetensors (an input and PyTorch's output), as
//                          scripts/compare-encoder-layer-with-pytorch.py --write-torch-layer FOLDER writes
//                          them; without it, the layer keeps its own initial weights.
#include <minigrad/minigrad.h>

#include <cmath>
#include <iostream>

using namespace minigrad;

int main(int argc, char** argv) {
  manual_seed(0);
  // model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
  nn::Sequential model(std::make_shared<nn::Linear>(1, 16), std::make_shared<nn::Tanh>(),
                       std::make_shared<nn::Linear>(16, 1));
  optim::AdamW optimizer(model.named_parameters(), {.lr = 0.02});
  // x = torch.rand(256, 1) * 4 - 2; target = (2 * x).clamp(-1, 1)
  const Tensor x = Tensor::uniform({256, 1}, -2, 2);
  const Tensor target = clamp(x * 2.0, -1.0, 1.0);
  float loss_value = 0;
  for (int step = 0; step < 400; ++step) {
    Variable loss = mse_loss(model(x), target);  // a Tensor goes in as it is
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    loss_value = loss.item();
  }
  // torch.where(x > 0, y, -y).clamp(min=0).mean(): methods and selection on the model's output
  const Variable y = model(Variable(x));
  const float mirrored = where(gt(x, 0.0), y, -y).clamp(0.0, std::nullopt).mean().item();
  std::cout << "loss after 400 steps: " << loss_value << ", mean of the mirrored output: " << mirrored
            << "\n";
  if (!(loss_value < 0.01) || !(mirrored > 0.3)) return 1;

  // layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, activation="gelu",
  //                                    batch_first=True); layer.load_state_dict(...); layer.eval()
  nn::TransformerEncoderLayer layer({.d_model = 8,
                                     .nhead = 2,
                                     .dim_feedforward = 16,
                                     .activation = nn::Activation::GELU,
                                     .batch_first = true});
  layer.to(DType::Float64);
  layer.eval();
  if (argc < 2) {
    std::cout << "no PyTorch weights given: the layer keeps its own\n";
    return layer(Variable(Tensor::normal({2, 4, 8}, 0, 1, DType::Float64))).shape() == Shape{2, 4, 8} ? 0 : 1;
  }
  const std::string folder = argv[1];
  optim::load_weights(layer, folder + "/torch_state.safetensors");  // strict, as load_state_dict
  const SafetensorsFile io = load_safetensors(folder + "/torch_io.safetensors");
  const Tensor input = *io.find("x"), expected = *io.find("y");
  const Tensor padding = io.find("key_padding_mask")->to(DType::Bool);
  const Tensor out = layer(input, {.key_padding_mask = padding}).data();
  const double diff = max(abs(out - expected)).item();
  std::cout << "PyTorch's encoder layer in minigrad: max |minigrad - PyTorch| = " << diff << "\n";
  return diff < 1e-10 ? 0 : 1;
}
