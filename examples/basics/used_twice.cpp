// A value used twice: where two gradients meet. h = x·w is used twice by h·h, so two gradients meet at
// h's node (matmul) and are added; w is used twice, by matmul and by + w, so two gradients meet at the
// leaf and are added into w.grad(). The classic bug of small engines (overwriting instead of adding)
// would print a wrong gradient here.
//
//   minigrad-basics-used-twice [--html PAGE]    PAGE: a web page that steps through the backward pass
#include <iostream>
#include <string>

#include "minigrad/minigrad.h"

int main(int argc, char** argv) {
  using namespace minigrad;
  const std::string page = argc > 2 && std::string(argv[1]) == "--html" ? argv[2] : "";
  Variable x(Tensor::from_values({1, 2, 0, 1}, {2, 2}, DType::Float64));           // a constant
  Variable w(Tensor::from_values({1, -1, 0.5, 2}, {2, 2}, DType::Float64), true);  // the parameter
  w.set_name("w");

  // h = x·w = [[2, 3], [0.5, 2]];  loss = Σ (h ⊙ h + w) = 17.25 + 2.5 = 19.75
  RecordGraph recording;           // the ops' results, for the page
  Variable h = matmul(x, w);       // (2, 2)·(2, 2) -> (2, 2)
  Variable loss = sum(h * h + w);  // (2, 2) -> ()
  if (page.empty()) {
    loss.backward();
  } else {
    write_html(loss, page, {.recording = &recording});  // runs loss.backward(), watching each step
  }

  // d loss / d h = h + h = 2h: the two factors of h·h each send g·h to matmul, and they add.
  // d loss / d w = xᵀ·2h (through matmul) + 1 (through + w) = [[4, 6], [9, 16]] + 1, added at the leaf.
  std::cout << "loss = " << loss.item() << "\n";
  std::cout << "w.grad() = " << w.grad() << "\n";
}
