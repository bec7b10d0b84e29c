// minigrad in one include: tensors, autograd, gradcheck.
//
//   #include <minigrad/minigrad.h>
//   using namespace minigrad;
#pragma once

#include "autograd/functions.h"
#include "autograd/gradcheck.h"
#include "autograd/graphviz.h"
#include "autograd/variable.h"
#include "tensor/ops.h"
