// The distributed layer: data-parallel training across processes and machines, on MPI.
//   context.h        Context: MPI's start and end, rank(), world_size(), abort()
//   data_parallel.h  broadcast_parameters, average_gradients, all_reduce_sum, shard
#pragma once

#include "minigrad/distributed/context.h"
#include "minigrad/distributed/data_parallel.h"
