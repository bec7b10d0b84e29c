// Everything the tensor layer offers, in one include.
#pragma once

#include "minigrad/tensor/attention.h"
#include "minigrad/tensor/data.h"
#include "minigrad/tensor/elementwise.h"
#include "minigrad/tensor/index.h"
#include "minigrad/tensor/layer_norm.h"
#include "minigrad/tensor/loss.h"
#include "minigrad/tensor/map.h"
#include "minigrad/tensor/matmul.h"
#include "minigrad/tensor/random.h"
#include "minigrad/tensor/reduce.h"
#include "minigrad/tensor/row_sparse.h"
#include "minigrad/tensor/sampling.h"
#include "minigrad/tensor/softmax.h"
#include "minigrad/tensor/tensor.h"
#include "minigrad/tensor/threads.h"
#include "minigrad/tensor/unfold.h"
