// minigrad in one include: tensors, autograd, gradcheck, nn, optim, and distributed where it is built.
//
//   #include <minigrad/minigrad.h>
//   using namespace minigrad;
#pragma once

#include "autograd/functions.h"
#include "autograd/grad.h"
#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "autograd/graph.h"
#include "autograd/graphviz.h"
#include "autograd/pointwise.h"
#include "autograd/variable.h"
#include "nn/nn.h"
#include "optim/optim.h"
#include "tensor/file_io.h"
#include "tensor/ops.h"
#include "tensor/safetensors.h"
#ifdef MINIGRAD_HAS_DISTRIBUTED  // defined for programs that link minigrad::distributed (built with MPI)
#include "distributed/distributed.h"
#endif
