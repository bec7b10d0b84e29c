// Task 5: matmul's backward.
//
// Write my_matmul(a, b) = a·b for a (M, K) and b (K, N) as a custom op (task 1 shows record()), with the
// forward from the tensor layer (matmul on Tensors, tensor/matmul.h).
//
// To derive, from y[m][n] = Σ_k a[m][k]·b[k][n] and g = d loss / d y (M, N):
//   d loss / d a (M, K) = ?      d loss / d b (K, N) = ?
// each as one matrix product of g with a transposed operand; the shapes tell you which. Write them with
// ops on Variables (matmul, transpose(v, 0, 1)).
//
// Keep only what the backward needs: a's gradient reads b and b's reads a, so save a only if b requires
// grad: save_if(a, b.requires_grad()). needs[i] says whether input i wants a gradient; return an
// undefined Variable() for one that does not.
//
// The real one: matmul in autograd/matmul.cpp (with batch dimensions and broadcasting too).
// Check it: scripts/exercises.sh 5
#include "exercises/05_matmul_backward.h"

#include "exercises/not_written.h"

namespace minigrad::exercises {

Variable my_matmul([[maybe_unused]] const Variable& a, [[maybe_unused]] const Variable& b) {
  throw NotWritten("task 5, my_matmul");
}

}  // namespace minigrad::exercises
