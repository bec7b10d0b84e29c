// minigrad-fashion-mnist: a small convolutional network trained from scratch on Fashion-MNIST (Zalando's
// 70,000 greyscale 28×28 pictures of clothes in 10 classes), as Debian's dataset-fashion-mnist installs
// it. docs/images.md shows what it reaches and how each choice was made.
//
//   minigrad-fashion-mnist train --out out/fashion-mnist --plots out/fashion-mnist-plots
//   minigrad-fashion-mnist predict --model out/fashion-mnist shirt.pgm boot.pgm
//   minigrad-fashion-mnist export --index 0 --out shirt.pgm     # test image 0, to try predict on
//
// train holds out 5,000 of the 60,000 training images (a fixed random choice) and reports its accuracy
// on them after every epoch: every choice of the model and its training was made on those figures. The
// 10,000 test images are evaluated once, at the end.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "examples/common/checkpoint_folder.h"
#include "examples/common/json_file.h"
#include "examples/common/progress.h"
#include "examples/images/idx.h"
#include "examples/images/pgm.h"
#include "examples/plot/plot.h"
#include "minigrad/minigrad.h"

using namespace minigrad;
namespace fs = std::filesystem;

namespace {

constexpr const char* kKind = "fashion-mnist-cnn";
const std::array<const char*, 10> kClassNames = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                 "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

// What config.json holds: the network's sizes and the pixel statistics its inputs are normalised with.
struct Config {
  std::vector<int64_t> channels = {16, 64};  // of each convolution block
  int64_t hidden = 256;
  double dropout = 0.3;
  double pixel_mean = 0, pixel_std = 1;  // of the training images, measured when training starts
  bool mirrored = true;                  // predictions average each image's logits with its mirror image's
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Config, channels, hidden, dropout, pixel_mean, pixel_std, mirrored)

// Blocks of 3×3 convolution, batch norm, ReLU and 2×2 max pooling (28×28 -> 14×14 -> 7×7 -> 3×3), then a
// hidden layer and the 10 logits. With the default two blocks, PyTorch's
//   nn.Sequential(nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
//                 nn.Conv2d(16, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
//                 nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 7 * 7, 256), nn.ReLU(), nn.Dropout(0.3),
//                 nn.Linear(256, 10))
// with the same parameter names ("0.weight", "1.running_mean", ...). The convolutions have no bias: the
// batch norm after each subtracts the mean, bias and all.
std::shared_ptr<nn::Sequential> make_model(const Config& c) {
  auto model = std::make_shared<nn::Sequential>();
  int64_t in = 1, size = 28;
  for (const int64_t out : c.channels) {  // (N, in, size, size) -> (N, out, size / 2, size / 2)
    model->push_back(std::make_shared<nn::Conv2d>(nn::Conv2dOptions{
        .in_channels = in, .out_channels = out, .kernel_size = 3, .padding = 1, .bias = false}));
    model->push_back(std::make_shared<nn::BatchNorm2d>(nn::BatchNormOptions{.num_features = out}));
    model->push_back(std::make_shared<nn::ReLU>());
    model->push_back(std::make_shared<nn::MaxPool2d>(MaxPool2dOptions{.kernel_size = 2}));
    in = out;
    size /= 2;
  }
  model->push_back(std::make_shared<nn::Flatten>());  // -> (N, in·size·size)
  model->push_back(std::make_shared<nn::Linear>(in * size * size, c.hidden));
  model->push_back(std::make_shared<nn::ReLU>());
  model->push_back(std::make_shared<nn::Dropout>(c.dropout));
  model->push_back(std::make_shared<nn::Linear>(c.hidden, 10));  // -> (N, 10) logits
  return model;
}

std::string architecture(const Config& c) {
  std::string channels;
  for (const int64_t k : c.channels) channels += (channels.empty() ? "" : ",") + std::to_string(k);
  return "fashion-mnist-cnn(" + channels + ";" + std::to_string(c.hidden) + ")";
}

struct Images {
  Tensor x;  // (n, 1, 28, 28) float32: pixels in [0, 1] as read, normalised by `normalised`
  Tensor y;  // (n) int64
};

Images read_split(const fs::path& dir, const std::string& prefix) {
  Tensor x = images::read_idx_images((dir / (prefix + "-images-idx3-ubyte.gz")).string());
  const Tensor y = images::read_idx_labels((dir / (prefix + "-labels-idx1-ubyte.gz")).string());
  if (x.shape()[0] != y.shape()[0]) {
    throw Error("fashion-mnist", dir.string() + ": " + std::to_string(x.shape()[0]) + " " + prefix +
                                     " images but " + std::to_string(y.shape()[0]) + " labels");
  }
  return {x, y};
}

Images normalised(const Images& split, const Config& config) {
  return {(split.x - config.pixel_mean) / config.pixel_std, split.y};
}

// Each image of the batch mirrored left to right with probability ½ (a shirt is a shirt either way), and
// moved by up to `shift` pixels in each direction, the uncovered pixels given the background's value.
Tensor augment(const Tensor& x, int64_t shift, float background, Generator& gen) {
  const int64_t n = x.shape()[0], size = x.shape()[3];
  const Tensor reversed = Tensor::arange(static_cast<double>(size - 1), -1, -1, DType::Int64);
  const Tensor flip = Tensor::bernoulli({n, 1, 1, 1}, 0.5, &gen).to(DType::Bool);
  const Tensor flipped = where(flip, index_select(x, 3, reversed), x).contiguous();
  if (shift == 0) return flipped;
  Tensor out = Tensor::full(x.shape(), background, x.dtype());
  const float* in = flipped.data_ptr<const float>();
  float* o = out.data_ptr<float>();
  for (int64_t b = 0; b < n; ++b) {
    const auto dy = static_cast<int64_t>(gen.next_below(2 * shift + 1)) - shift;
    const auto dx = static_cast<int64_t>(gen.next_below(2 * shift + 1)) - shift;
    for (int64_t r = std::max<int64_t>(0, dy); r < std::min(size, size + dy); ++r) {
      for (int64_t c = std::max<int64_t>(0, dx); c < std::min(size, size + dx); ++c) {
        o[(b * size + r) * size + c] = in[(b * size + r - dy) * size + c - dx];
      }
    }
  }
  return out;
}

// Accuracy and mean loss over a whole split, in eval mode and without a graph. With `mirrored`, each
// image's logits are averaged with its mirror image's (test-time augmentation).
struct Score {
  double accuracy = 0, loss = 0;
};
Variable logits_of(nn::Sequential& model, const Tensor& x, bool mirrored) {
  const Variable logits = model(x);
  if (!mirrored) return logits;
  const int64_t size = x.shape()[3];
  const Tensor reversed = Tensor::arange(static_cast<double>(size - 1), -1, -1, DType::Int64);
  return mul(add(logits, model(index_select(x, 3, reversed))), 0.5);
}
Score evaluate(nn::Sequential& model, const Images& data, bool mirrored) {
  model.eval();
  NoGradGuard no_grad;
  const int64_t n = data.x.shape()[0], batch = 1000;
  double correct = 0, loss = 0;
  for (int64_t start = 0; start < n; start += batch) {
    const int64_t end = std::min(n, start + batch);
    const Tensor y = data.y.slice(0, start, end);
    const Variable logits = logits_of(model, data.x.slice(0, start, end), mirrored);
    correct += accuracy(logits, y) * static_cast<double>(end - start);
    loss += cross_entropy(logits, y).item() * static_cast<double>(end - start);
  }
  return {correct / static_cast<double>(n), loss / static_cast<double>(n)};
}

struct TrainOptions {
  std::string data = "/usr/share/datasets/fashion-mnist", out = "out/fashion-mnist", plots;
  int epochs = 10, batch_size = 128, validation = 5000;
  double lr = 2e-3, weight_decay = 1e-4, label_smoothing = 0;
  int64_t shift = 0;
  uint64_t seed = 0;
  bool test = true;
};

int train(const TrainOptions& o, Config config) {
  manual_seed(o.seed);  // the initial weights
  Generator split_gen(1000 + o.seed), batch_gen(2000 + o.seed), augment_gen(3000 + o.seed);
  // The pixel statistics of the training images, before any is held out (they are the same figures to
  // three digits either way, and the test images are not looked at).
  const Images read = read_split(o.data, "train");
  config.pixel_mean = mean(read.x).item();
  config.pixel_std = std::sqrt(mean((read.x - config.pixel_mean) * (read.x - config.pixel_mean)).item());
  const Images all = normalised(read, config);
  const auto background = static_cast<float>(-config.pixel_mean / config.pixel_std);  // a black pixel
  check_folder_writable("fashion-mnist", o.out);  // now, not after minutes of training
  const int64_t total = all.x.shape()[0];
  if (o.validation >= total)
    throw Error("fashion-mnist", "--validation must be below " + std::to_string(total));
  // A fixed random choice of images held out for validation; the rest to train on.
  const Tensor order = randperm(total, &split_gen);
  const Tensor held = order.slice(0, 0, o.validation), kept = order.slice(0, o.validation, total);
  const Images validation{index_select(all.x, 0, held), index_select(all.y, 0, held)};
  const Images training{index_select(all.x, 0, kept), index_select(all.y, 0, kept)};
  const int64_t n = training.x.shape()[0];
  std::cout << "training on " << n << " images, " << o.validation << " held out for validation, seed "
            << o.seed << "\n";

  const auto model = make_model(config);
  std::cout << *model << "\n";
  optim::AdamW optimizer(model->named_parameters(), {.lr = o.lr, .weight_decay = o.weight_decay});
  const int64_t steps_per_epoch = (n + o.batch_size - 1) / o.batch_size, steps = steps_per_epoch * o.epochs;
  // Warm up over the first half epoch, then a cosine down to 0.
  const optim::WarmupCosine schedule(
      {.peak_lr = o.lr, .warmup_steps = steps_per_epoch / 2, .total_steps = steps, .final_lr = 0});

  examples::Progress progress(std::cout, isatty(STDOUT_FILENO) != 0, steps, "images");
  std::vector<double> epochs_axis, train_loss, train_acc, val_loss, val_acc;
  int64_t step = 0;
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    model->train();
    double loss_sum = 0, correct = 0;
    for (const Tensor& batch : index_batches(n, {.batch_size = o.batch_size, .generator = &batch_gen})) {
      const Tensor x = augment(index_select(training.x, 0, batch), o.shift, background, augment_gen);
      const Tensor y = index_select(training.y, 0, batch);  // (B)
      const Variable logits = (*model)(x);
      const Variable loss = cross_entropy(logits, y, {.label_smoothing = o.label_smoothing});
      optimizer.zero_grad();
      loss.backward();
      optimizer.set_learning_rate(schedule.at(step++));
      optimizer.step();
      const double b = static_cast<double>(batch.numel());
      loss_sum += loss.item() * b;
      correct += accuracy(logits, y) * b;
      char stats[96];
      std::snprintf(stats, sizeof stats, "epoch %d  loss %.4f", epoch, loss.item());
      progress.update(step, stats, static_cast<double>(step * o.batch_size));
    }
    const Score v = o.validation > 0 ? evaluate(*model, validation, false) : Score{};
    const Score vm = o.validation > 0 && config.mirrored ? evaluate(*model, validation, true) : Score{};
    epochs_axis.push_back(epoch);
    train_loss.push_back(loss_sum / static_cast<double>(n));
    train_acc.push_back(correct / static_cast<double>(n));
    val_loss.push_back(v.loss);
    val_acc.push_back(v.accuracy);
    char line[200];
    std::snprintf(line, sizeof line, "epoch %d: training loss %.4f, accuracy %.4f", epoch, train_loss.back(),
                  train_acc.back());
    std::string text = line;
    if (o.validation > 0) {
      std::snprintf(line, sizeof line, "; validation loss %.4f, accuracy %.4f", v.loss, v.accuracy);
      text += line;
    }
    if (o.validation > 0 && config.mirrored) {
      std::snprintf(line, sizeof line, " (with mirror images: %.4f)", vm.accuracy);
      text += line;
    }
    progress.message(text);
  }

  examples::save_checkpoint_folder(o.out, examples::config_to_json(config, kKind), std::nullopt, *model,
                                   {{"architecture", architecture(config)}});
  std::cout << "saved the model in " << o.out << "\n";
  if (!o.plots.empty()) {
    fs::create_directories(o.plots);
    const bool with_validation = o.validation > 0;
    std::vector<plot::Series> losses{{.label = "training", .x = epochs_axis, .y = train_loss}};
    std::vector<plot::Series> accuracies{{.label = "training", .x = epochs_axis, .y = train_acc}};
    if (with_validation) {
      losses.push_back({.label = "validation", .x = epochs_axis, .y = val_loss, .dashed = true});
      accuracies.push_back({.label = "validation", .x = epochs_axis, .y = val_acc, .dashed = true});
    }
    plot::line_plot(
        (fs::path(o.plots) / "loss.png").string(), losses,
        {.title = "Fashion-MNIST: cross-entropy per epoch", .x_label = "epoch", .y_label = "loss"});
    plot::line_plot((fs::path(o.plots) / "accuracy.png").string(), accuracies,
                    {.title = "Fashion-MNIST: accuracy per epoch",
                     .x_label = "epoch",
                     .y_label = "accuracy",
                     .legend_left = true});
    std::cout << "plots: " << o.plots << "/loss.png, " << o.plots << "/accuracy.png\n";
  }
  if (o.test) {
    const Score t = evaluate(*model, normalised(read_split(o.data, "t10k"), config), config.mirrored);
    std::printf("test accuracy %.4f (10,000 images), loss %.4f\n", t.accuracy, t.loss);
  }
  return 0;
}

// A model folder written by train: config.json and model.safetensors.
std::pair<Config, std::shared_ptr<nn::Sequential>> load_model(const fs::path& dir) {
  const Config config =
      examples::config_from_json<Config>(examples::parse_json(dir / "config.json"),
                                         (dir / "config.json").string(), kKind, "a Fashion-MNIST model");
  auto model = make_model(config);
  const std::string weights = (dir / "model.safetensors").string();
  const SafetensorsFile file = load_safetensors(weights);
  examples::check_architecture(file, weights, architecture(config));
  optim::load_weights(*model, file, weights);
  model->eval();
  return {config, model};
}

int predict(const std::string& model_dir, const std::vector<std::string>& paths) {
  const auto [config, model] = load_model(model_dir);
  NoGradGuard no_grad;
  for (const std::string& path : paths) {
    const Tensor image = images::read_pgm(path);  // (rows, columns) in [0, 1]
    if (image.shape() != Shape{28, 28}) {
      throw Error("predict", path + ": the model reads 28×28 images, this one is " +
                                 std::to_string(image.shape()[1]) + "×" + std::to_string(image.shape()[0]) +
                                 " (scale it first, e.g. convert in.png -resize 28x28! out.pgm)");
    }
    const Tensor x = ((image - config.pixel_mean) / config.pixel_std).reshape({1, 1, 28, 28});
    const Tensor p = softmax(logits_of(*model, x, config.mirrored).data(), 1).reshape({10});
    const int64_t best = static_cast<int64_t>(argmax(p).item());
    std::printf("%s: %s (%.1f%%)\n", path.c_str(), kClassNames[static_cast<size_t>(best)],
                100 * p.to_vector<double>()[static_cast<size_t>(best)]);
  }
  return 0;
}

int export_image(const std::string& data, int64_t index, const std::string& out) {
  const Tensor x = images::read_idx_images((fs::path(data) / "t10k-images-idx3-ubyte.gz").string());
  const Tensor y = images::read_idx_labels((fs::path(data) / "t10k-labels-idx1-ubyte.gz").string());
  if (index < 0 || index >= x.shape()[0]) {
    throw Error("export", "--index must be in 0.." + std::to_string(x.shape()[0] - 1));
  }
  images::write_pgm(out, x.select(0, index).select(0, 0));
  std::printf("test image %lld (%s) written to %s\n", static_cast<long long>(index),
              kClassNames[static_cast<size_t>(y.to_vector<int64_t>()[static_cast<size_t>(index)])],
              out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"A small CNN trained from scratch on Fashion-MNIST (docs/images.md)"};
  app.require_subcommand(1);
  TrainOptions options;
  Config config;
  CLI::App* train_cmd = app.add_subcommand("train", "Train, save the model folder, evaluate on the test set");
  train_cmd->add_option("--data", options.data, "Folder of the gzipped IDX files")->capture_default_str();
  train_cmd->add_option("--out", options.out, "Model folder to write (atomically)")->capture_default_str();
  train_cmd->add_option("--plots", options.plots, "Folder for loss.png and accuracy.png");
  train_cmd->add_option("--epochs", options.epochs)->check(CLI::Range(1, 1000))->capture_default_str();
  train_cmd->add_option("--batch-size", options.batch_size)
      ->check(CLI::Range(2, 60000))
      ->capture_default_str();
  train_cmd->add_option("--lr", options.lr, "Peak learning rate (AdamW)")
      ->check(CLI::Range(1e-6, 1.0))
      ->capture_default_str();
  train_cmd->add_option("--weight-decay", options.weight_decay)
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  train_cmd->add_option("--validation", options.validation, "Training images held out for validation")
      ->check(CLI::Range(0, 59000))
      ->capture_default_str();
  train_cmd->add_option("--seed", options.seed)->capture_default_str();
  train_cmd->add_option("--channels", config.channels, "Channels of each convolution block, e.g. 16,32,64")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024))
      ->expected(1, 3)
      ->capture_default_str();
  train_cmd->add_option("--hidden", config.hidden)->check(CLI::Range(1, 65536))->capture_default_str();
  train_cmd->add_option("--dropout", config.dropout)->check(CLI::Range(0.0, 0.9))->capture_default_str();
  train_cmd->add_option("--shift", options.shift, "Move training images by up to this many pixels")
      ->check(CLI::Range(0, 8))
      ->capture_default_str();
  train_cmd->add_option("--label-smoothing", options.label_smoothing)
      ->check(CLI::Range(0.0, 0.5))
      ->capture_default_str();
  train_cmd->add_flag("!--no-mirror", config.mirrored,
                      "Predict from each image alone, not with its mirror image");
  train_cmd->add_flag("!--no-test", options.test, "Do not evaluate on the test set");

  std::string model_dir = "out/fashion-mnist";
  std::vector<std::string> paths;
  CLI::App* predict_cmd = app.add_subcommand("predict", "Name the class of 28×28 greyscale PGM images");
  predict_cmd->add_option("--model", model_dir, "Model folder written by train")->capture_default_str();
  predict_cmd->add_option("images", paths, "PGM files (P5 or P2), white clothes on black as in the data")
      ->required();

  int64_t index = 0;
  std::string export_out;
  CLI::App* export_cmd = app.add_subcommand("export", "Write a test image as a PGM file");
  export_cmd->add_option("--data", options.data, "Folder of the gzipped IDX files")->capture_default_str();
  export_cmd->add_option("--index", index, "Which of the 10,000 test images")->capture_default_str();
  export_cmd->add_option("--out", export_out, "PGM file to write")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    if (*train_cmd) return train(options, config);
    if (*predict_cmd) return predict(model_dir, paths);
    return export_image(options.data, index, export_out);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
