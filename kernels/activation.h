// The activations conv2d_fused applies (kforge_fused.h), by the names its `activation` attribute takes, with the
// formulas of the library's own elementwise kernels (elementwise.cc, transcendental.h), so that a fused epilogue computed by the
// reference loops gives the bits the separate kernels give. Internal to kernels/.
#ifndef KFORGE_KERNELS_ACTIVATION_H_
#define KFORGE_KERNELS_ACTIVATION_H_

#include <cmath>
#include <string>

#include "transcendental.h"

namespace kforge::kernels::util {

enum class Activation {
  kNone,       // ""
  kRelu,       // relu: x > 0 ? x : 0
  kRelu6,      // relu6: min(max(x, 0), 6)
  kLeakyRelu,  // leaky_relu: x > 0 ? x : alpha * x
  kClip,       // clip: x < alpha ? alpha : (x > beta ? beta : x)
  kHardswish,  // hardswish: x * min(max(x + 3, 0), 6) / 6
  kSigmoid,    // sigmoid: 1 / (1 + exp(-x))
  kTanh,       // tanh
  kSwish,      // swish (= silu): x / (1 + exp(-x))
  kGelu,       // gelu: 0.5 x (1 + erf(x / sqrt(2)))
  kGeluTanh,   // gelu_tanh: gelu(approximate=true)
};

// False for an unknown name.
inline bool parse_activation(const std::string& name, Activation* out) {
  static const struct {
    const char* name;
    Activation kind;
  } kNames[] = {{"", Activation::kNone},           {"relu", Activation::kRelu},
                {"relu6", Activation::kRelu6},     {"leaky_relu", Activation::kLeakyRelu},
                {"clip", Activation::kClip},       {"hardswish", Activation::kHardswish},
                {"sigmoid", Activation::kSigmoid}, {"tanh", Activation::kTanh},
                {"swish", Activation::kSwish},     {"silu", Activation::kSwish},
                {"gelu", Activation::kGelu},       {"gelu_tanh", Activation::kGeluTanh}};
  for (const auto& entry : kNames) {
    if (name == entry.name) {
      *out = entry.kind;
      return true;
    }
  }
  return false;
}

template <typename T>
T activate(Activation kind, T v, T alpha, T beta) {
  switch (kind) {
    case Activation::kNone: return v;
    case Activation::kRelu: return v > T(0) ? v : T(0);
    case Activation::kRelu6: return std::fmin(std::fmax(v, T(0)), T(6));
    case Activation::kLeakyRelu: return v > T(0) ? v : alpha * v;
    case Activation::kClip: return v < alpha ? alpha : (v > beta ? beta : v);
    case Activation::kHardswish: return v * std::fmin(std::fmax(v + T(3), T(0)), T(6)) / T(6);
    case Activation::kSigmoid: return sigmoid_of(v);
    case Activation::kTanh: return std::tanh(v);
    case Activation::kSwish: return silu_of(v);
    case Activation::kGelu: return gelu_erf_of(v);
    case Activation::kGeluTanh: {
      const T k = static_cast<T>(0.79788456080286535587989211986876);  // sqrt(2 / pi)
      return T(0.5) * v * (T(1) + std::tanh(k * (v + T(0.044715) * v * v * v)));
    }
  }
  return v;
}

}  // namespace kforge::kernels::util

#endif  // KFORGE_KERNELS_ACTIVATION_H_
