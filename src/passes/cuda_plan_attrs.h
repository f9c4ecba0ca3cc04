// Internal to passes/: what cuda_plan_conv.cpp (convolutions) and cuda_plan_pool_norm.cpp (pool2d and lone batch
// norms) share: the reader of a call's constant attributes, the logical NCHW dims of a 4-D value, Paddle's padding
// of a window, and the activations' element types.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "passes/lowered_program.h"

namespace kforge::passes::cuda_plan_detail {

// Reads a call's constant attributes; the first failure leaves a reason in `why` and makes ok() false.
class Attrs {
 public:
  Attrs(const KernelCall& call, std::string* why) : call_(call), why_(why) {}
  bool ok() const { return ok_; }

  const passes::AttrConstant* get(std::string_view name) {
    const KernelArg* a = call_.arg(name);
    if (a == nullptr || a->kind != ArgKind::kConstant) {
      fail(fmt::format("its {} is not a constant known at generation time", name));
      return nullptr;
    }
    return &a->constant;
  }
  std::vector<int64_t> ints(std::string_view name) {
    const passes::AttrConstant* c = get(name);
    return c != nullptr ? c->ints : std::vector<int64_t>{};
  }
  int64_t integer(std::string_view name) {
    const passes::AttrConstant* c = get(name);
    return c != nullptr ? c->int_value : 0;
  }
  double floating(std::string_view name) {
    const passes::AttrConstant* c = get(name);
    return c != nullptr ? c->float_value : 0;
  }
  bool boolean(std::string_view name) {
    const passes::AttrConstant* c = get(name);
    return c != nullptr && c->bool_value;
  }
  std::string text(std::string_view name) {
    const passes::AttrConstant* c = get(name);
    return c != nullptr ? c->string_value : std::string();
  }
  void fail(std::string reason) {
    if (ok_ && why_ != nullptr) *why_ = std::move(reason);
    ok_ = false;
  }

 private:
  const KernelCall& call_;
  std::string* why_;
  bool ok_ = true;
};

inline uint32_t single_output(const KernelCall& call) {
  return call.outputs.size() == 1 && call.outputs[0].values.size() == 1 ? call.outputs[0].values[0] : kNone;
}

// The logical NCHW dims of a 4-D value: batch, H and W (any SymExpr) and C, which must be static.
inline bool nchw(const SymShape& dims, bool nhwc, SymExpr* n, int64_t* c, SymExpr* h, SymExpr* w) {
  if (dims.size() != 4) return false;
  const std::optional<int64_t> dc = dims[nhwc ? 3 : 1].constant();
  if (!dc) return false;
  *n = dims[0];
  *c = *dc;
  *h = dims[nhwc ? 1 : 2];
  *w = dims[nhwc ? 2 : 3];
  return true;
}

// Paddle's padding of one spatial dim (kernels/kernel_util.h, conv_geometry): explicit, or SAME's
// (out = ceil(in / stride), the extra row at the end), or none for VALID.
struct Pads {
  int64_t top = 0, bottom = 0, left = 0, right = 0;
};

inline bool paddings(Attrs& a, const std::vector<int64_t>& given, const std::string& algorithm, const SymExpr& in_h,
              const SymExpr& in_w, int64_t k_h, int64_t k_w, int64_t stride_h, int64_t stride_w, Pads* p) {
  if (given.size() == 2) {
    p->top = p->bottom = given[0];
    p->left = p->right = given[1];
  } else if (given.size() == 4) {
    *p = Pads{given[0], given[1], given[2], given[3]};
  } else {
    a.fail(fmt::format("paddings has {} values (2 or 4 expected)", given.size()));
    return false;
  }
  if (algorithm == "SAME") {
    // The padding is a constant of the geometry: a dim known only at run time must not change it (stride 1).
    auto same = [&a](const SymExpr& dim, int64_t stride, int64_t k, int64_t* p0, int64_t* p1) {
      const std::optional<int64_t> in = dim.constant();
      if (!in && stride != 1) {
        a.fail(fmt::format("its SAME padding of stride {} depends on a spatial dim known only at run time", stride));
        return false;
      }
      const int64_t sum = in ? std::max<int64_t>(((*in + stride - 1) / stride - 1) * stride + k - *in, 0)
                             : std::max<int64_t>(k - 1, 0);
      *p0 = sum / 2;
      *p1 = sum - *p0;
      return true;
    };
    if (!same(in_h, stride_h, k_h, &p->top, &p->bottom) || !same(in_w, stride_w, k_w, &p->left, &p->right)) {
      return false;
    }
  } else if (algorithm == "VALID") {
    *p = Pads{};
  } else if (algorithm != "EXPLICIT") {
    a.fail("padding_algorithm is \"" + algorithm + "\" (EXPLICIT, SAME or VALID expected)");
    return false;
  }
  if (p->top < 0 || p->bottom < 0 || p->left < 0 || p->right < 0) {
    a.fail("a padding is negative");
    return false;
  }
  return true;
}

// The activations' element types the convolution, pooling and batch-norm kernels take: float32, or 16-bit floats
// (--precision), which they load, compute on in float32 and store rounded.
inline bool activation_dtype(ir::DataType d) {
  return d == ir::DataType::kFloat32 || d == ir::DataType::kFloat16 || d == ir::DataType::kBFloat16;
}

}  // namespace kforge::passes::cuda_plan_detail
