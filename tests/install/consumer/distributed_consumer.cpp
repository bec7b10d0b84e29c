// The distributed component of an installed minigrad: one process (an MPI singleton) averages the gradient
// of a parameter over its one rank, which leaves it as it was.
#include <minigrad/minigrad.h>

#include <iostream>

int main() {
  using namespace minigrad;
  distributed::Context context;
  Variable w(Tensor::from_values({1.5, -2}, {2}, DType::Float64), true);
  sum(w * w).backward();
  distributed::average_gradients({w});
  std::cout << "rank " << context.rank() << " of " << context.world_size() << ": gradient " << w.grad()
            << "\n";
  return context.world_size() == 1 && allclose(w.grad(), Tensor::from_values({3, -4}, {2}, DType::Float64))
             ? 0
             : 1;
}
