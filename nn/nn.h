// The nn layer in one include.
#pragma once

#include "nn/activation.h"
#include "nn/attention.h"
#include "nn/conv.h"
#include "nn/decoder.h"
#include "nn/decoding.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/module_list.h"
#include "nn/pooling.h"
#include "nn/positional_encoding.h"
#include "nn/recurrent.h"
#include "nn/transformer.h"
