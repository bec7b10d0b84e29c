// A first minigrad program: compute a loss, let backward() find its gradient, look at the graph.
//
//   minigrad-basics-tour [FILE] [--html PAGE]
//     writes the graph to FILE (default tour.dot; draw it with dot -Tpng FILE -o graph.png), and PAGE, a
//     web page that steps through the backward pass
#include <iostream>
#include <string>

#include "minigrad/minigrad.h"

int main(int argc, char** argv) {
  using namespace minigrad;
  const bool html = argc > 2 && std::string(argv[argc - 2]) == "--html";
  const std::string path = argc > (html ? 3 : 1) ? argv[1] : "tour.dot";
  const std::string page = html ? argv[argc - 1] : "";
  // x (4, 3): four rows of three features; a constant, so no gradient is computed for it.
  Variable x(Tensor::from_values({1, 2, 0, -1, 0, 1, 0, 1, 1, 2, -1, 0}, {4, 3}, DType::Float64));
  // w (3, 2): the parameter. requires_grad = true asks backward() to fill w.grad().
  Variable w(Tensor::from_values({0.5, -1, 0.25, 1, -0.5, 0.5}, {3, 2}, DType::Float64), true);
  w.set_name("w");  // shown in the graph

  // The page shows each op's result and what its backward saved: keep them while the forward runs.
  RecordGraph recording;
  // x·w is [[1, 1], [-1, 1.5], [-0.25, 1.5], [0.75, -3]]: relu zeroes the three negatives,
  // and the mean of the eight entries is (1 + 1 + 1.5 + 1.5 + 0.75) / 8 = 0.71875.
  Variable z = matmul(x, w);      // (4, 3)·(3, 2) -> (4, 2)
  Variable loss = mean(relu(z));  // (4, 2) -> (4, 2) -> ()
  // backward() drops the gradient of an intermediate value once it has passed; keep z's to look at.
  z.retain_grad();

  // The graph backward() will walk (it frees what the ops saved as it goes, so draw it first).
  write_dot(loss, path);
  if (page.empty()) {
    loss.backward();
  } else {
    write_html(loss, page, {.recording = &recording});  // runs loss.backward(), watching each step
  }

  // d loss / d w[k][j] = 1/8 · Σ_i x[i][k] over the rows i where (x·w)[i][j] > 0: column 0 of the
  // gradient is (x[0] + x[3]) / 8 = [3, 1, 0] / 8, column 1 is (x[0] + x[1] + x[2]) / 8 = [0, 3, 2] / 8.
  // d loss / d z is the mean's 1/8 where relu let z through, and 0 where it zeroed z.
  std::cout << "loss = " << loss.item() << "\n";
  std::cout << "z.grad() = " << z.grad() << "\n";
  std::cout << "w.grad() = " << w.grad() << "\n";
  std::cout << "graph written to " << path << "\n";
  if (!page.empty()) std::cout << "page written to " << page << "\n";
}
