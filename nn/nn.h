// The nn layer in one include.
#pragma once

#include "minigrad/nn/activation.h"
#include "minigrad/nn/attention.h"
#include "minigrad/nn/conv.h"
#include "minigrad/nn/decoder.h"
#include "minigrad/nn/decoding.h"
#include "minigrad/nn/dropout.h"
#include "minigrad/nn/embedding.h"
#include "minigrad/nn/layer_norm.h"
#include "minigrad/nn/linear.h"
#include "minigrad/nn/module.h"
#include "minigrad/nn/module_list.h"
#include "minigrad/nn/pooling.h"
#include "minigrad/nn/positional_encoding.h"
#include "minigrad/nn/recurrent.h"
#include "minigrad/nn/transformer.h"
#include "minigrad/nn/transformer_encoder_layer.h"
