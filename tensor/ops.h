// Everything the tensor layer offers, in one include.
#pragma once

#include "tensor/attention.h"
#include "tensor/data.h"
#include "tensor/elementwise.h"
#include "tensor/index.h"
#include "tensor/layer_norm.h"
#include "tensor/loss.h"
#include "tensor/map.h"
#include "tensor/matmul.h"
#include "tensor/random.h"
#include "tensor/reduce.h"
#include "tensor/row_sparse.h"
#include "tensor/sampling.h"
#include "tensor/softmax.h"
#include "tensor/tensor.h"
#include "tensor/threads.h"
#include "tensor/unfold.h"
