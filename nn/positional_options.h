// PyTorch's positional constructor arguments, written into a layer's options struct: nn::Conv2d(1, 16, 3,
// {.padding = 1}) is nn::Conv2d({.in_channels = 1, .out_channels = 16, .kernel_size = 3, .padding = 1}).
// The options stay declared once, in the struct; the positional form only fills some of its fields.
#pragma once

#include <string>
#include <type_traits>

#include "minigrad/tensor/error.h"

namespace minigrad::nn::detail {

// Sets options.*field to `value`, refusing (naming the layer and the field) one the braced options already
// set to something else than its default: nn::Conv2d(1, 16, 3, {.in_channels = 2}) says what was given
// twice.
template <typename Options, typename T>
void set_positional(Options& options, T Options::*field, const std::type_identity_t<T>& value,
                    const char* layer, const char* name) {
  const T& given = options.*field;
  if (!(given == Options{}.*field) && !(given == value)) {
    throw ValueError(layer, std::string(name) + " is given twice, as an argument and in the options");
  }
  options.*field = value;
}

}  // namespace minigrad::nn::detail
