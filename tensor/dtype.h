// The element types a tensor can hold, chosen at run time, and the helpers that turn a run-time dtype into
// a compile-time C++ type for a kernel.
//
//   dispatch_float(x.dtype(), "exp", [&]<typename T>() { ... T* p = x.data_ptr<T>(); ... });
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>

#include "minigrad/tensor/error.h"

namespace minigrad {

// Float32 and Float64 carry values; Int64 carries indices (token ids, argmax); Bool carries masks.
enum class DType : uint8_t { Float32, Float64, Int64, Bool };

constexpr std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
    case DType::Int64:
      return "int64";
    case DType::Bool:
      return "bool";
  }
  return "unknown";
}

inline std::ostream& operator<<(std::ostream& os, DType dtype) {
  return os << dtype_name(dtype);
}

constexpr size_t element_size(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return 4;
    case DType::Float64:
      return 8;
    case DType::Int64:
      return 8;
    case DType::Bool:
      return 1;
  }
  return 0;
}

constexpr bool is_floating(DType dtype) {
  return dtype == DType::Float32 || dtype == DType::Float64;
}

// The C++ type of each dtype's elements; bool is stored as one byte per element.
template <typename T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) {
    return DType::Float32;
  } else if constexpr (std::is_same_v<T, double>) {
    return DType::Float64;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return DType::Int64;
  } else {
    static_assert(std::is_same_v<T, bool>, "no dtype holds this C++ type");
    return DType::Bool;
  }
}

// Calls f.template operator()<T>() with T the element type of a float dtype; throws for other dtypes.
template <typename F>
decltype(auto) dispatch_float(DType dtype, std::string_view op, F&& f) {
  switch (dtype) {
    case DType::Float32:
      return f.template operator()<float>();
    case DType::Float64:
      return f.template operator()<double>();
    default:
      throw DTypeError(op, "expected a float32 or float64 tensor, got " + std::string(dtype_name(dtype)));
  }
}

// As dispatch_float, but also for int64 (comparisons, arange, conversions).
template <typename F>
decltype(auto) dispatch_numeric(DType dtype, std::string_view op, F&& f) {
  if (dtype == DType::Int64) return f.template operator()<int64_t>();
  if (!is_floating(dtype)) {
    throw DTypeError(op,
                     "expected a float32, float64 or int64 tensor, got " + std::string(dtype_name(dtype)));
  }
  return dispatch_float(dtype, op, f);
}

// Every dtype: for ops that only move or convert elements (copies, printing, conversions).
template <typename F>
decltype(auto) dispatch_all(DType dtype, F&& f) {
  if (dtype == DType::Bool) return f.template operator()<bool>();
  return dispatch_numeric(dtype, "dispatch_all", f);  // the other three: it cannot throw
}

}  // namespace minigrad
