// A readable compile error for a layer built with arguments none of its constructors takes.
//
// std::make_shared<nn::BatchNorm2d>(8, 1e-5) (PyTorch's eps, positional) matches no constructor, and the
// compiler's "no matching function" comes from inside std::construct_at, 60 lines deep. So each layer
// lists the argument lists its constructors take, as function types, and adds one more constructor that
// takes anything else and stops at a static_assert naming the right spellings:
//
//   template <typename... A>
//     requires NoConstructorTakes<
//         BatchNorm2d,
//         ConstructorLines<void(const BatchNormOptions&), void(int64_t), void(int64_t, BatchNormOptions)>,
//         A...>
//   explicit BatchNorm2d(A&&...) : BatchNorm2d(BatchNormOptions{}) {
//     static_assert(wrong_arguments<A...>, "nn::BatchNorm2d takes (num_features), then {options}; ...");
//   }
//
// A call that fits a line never sees it (the constraint is false there), so nn::BatchNorm2d(8) picks the
// real constructor as before; the compiler reports "static assertion failed: <the spellings>" with the
// caller's line under "required from here". It delegates to a real constructor only so that the
// static_assert is the one error. A default argument is a line of its own (function types have none);
// tests/layers/check_constructor_errors.py compiles wrong calls and checks the message.
#pragma once

#include <concepts>
#include <type_traits>

namespace minigrad::nn {

// The argument lists a layer's constructors take, each as a function type: void(int64_t, Conv2dOptions).
template <typename... Lines>
struct ConstructorLines {
  // Whether arguments of types A... fit one of the lines, with the conversions a call would make.
  template <typename... A>
  static constexpr bool fit = (std::is_invocable_v<Lines*, A...> || ...);
};

// Arguments that fit none of Layer's lines and are not a Layer to copy or move.
template <typename Layer, typename Lines, typename... A>
concept NoConstructorTakes =
    !Lines::template fit<A...> &&
    !(sizeof...(A) == 1 && (std::derived_from<std::remove_cvref_t<A>, Layer> && ...));

// Always false, but only once A... is known: the static_assert fires when the wrong call is compiled.
template <typename... A>
inline constexpr bool wrong_arguments = false;

}  // namespace minigrad::nn
