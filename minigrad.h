// minigrad in one include: tensors, autograd, gradcheck, nn, optim, the graph's pictures (viz), and
// distributed where it is built.
//
//   #include <minigrad/minigrad.h>
//   using namespace minigrad;
#pragma once

#include "minigrad/autograd/forward_ad.h"
#include "minigrad/autograd/functional.h"
#include "minigrad/autograd/functions.h"
#include "minigrad/autograd/grad.h"
#include "minigrad/autograd/grad_mode.h"
#include "minigrad/autograd/gradcheck.h"
#include "minigrad/autograd/graph.h"
#include "minigrad/autograd/hooks.h"
#include "minigrad/autograd/observer.h"
#include "minigrad/autograd/pointwise.h"
#include "minigrad/autograd/variable.h"
#include "minigrad/nn/nn.h"
#include "minigrad/optim/optim.h"
#include "minigrad/tensor/file_io.h"
#include "minigrad/tensor/ops.h"
#include "minigrad/tensor/safetensors.h"
#include "minigrad/viz/dot.h"
#include "minigrad/viz/graph_view.h"
#include "minigrad/viz/page.h"
#include "minigrad/viz/recorder.h"
#ifdef MINIGRAD_HAS_DISTRIBUTED  // defined for programs that link minigrad::distributed (built with MPI)
#include "minigrad/distributed/distributed.h"
#endif
