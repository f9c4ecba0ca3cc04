// The index-mapped CUDA kernels of the norms no fused group takes (codegen/cuda_index.h), each computing as the CPU
// kernel of kernels/ does, in the same order:
//   - group_norm (kernels/norm.cc): one thread per (batch, group) sums the group's elements in double, channel by
//     channel, then the squared deviations from the mean, and normalizes the group's elements ((x - mean) * inv,
//     inv = 1 / sqrt(variance + epsilon) in double, then scale and bias); where the op's mean and variance outputs
//     have buffers, it stores them there instead and a second kernel normalizes one element per thread (inv from the
//     stored variance: the CPU kernel's from the double one may differ in its last bit);
//   - p_norm (kernels/linalg.cc): one thread per output element folds |x|^p in double along the axis (every element
//     with asvector), the count of nonzeros for p = 0, the largest / smallest |x| for +-inf.
// A thread walking a whole group or line is slow for long ones and correct for every size.
// The plan's form of each call (passes/cuda_plan_compute.h) is what is rendered: every check is the plan's. The
// statements are templates/program/cuda/index_compute.j2's skeletons; this file supplies their context (names,
// types, sizes, expressions), in the order the sizes become kernel parameters.
#include <fmt/format.h>

#include <cmath>

#include "codegen/cpp_text.h"
#include "codegen/cuda_index_text.h"
#include "passes/cuda_plan_compute.h"

namespace kforge::codegen::index_text {

namespace {

class NormCall : public IndexBuilder {
 public:
  NormCall(const passes::CudaComputeForm& form, const passes::LoweredProgram& p, const passes::KernelCall& call,
           const std::string& prefix, size_t first, const std::string& description, const CudaBufferExpr& buffer,
           SizeTable& sizes, const SizeTable::Spelling& size_argument)
      : IndexBuilder(p, call, prefix, first, description, buffer, sizes, size_argument), form_(form) {}

  std::vector<CudaIndexKernel> build() {
    if (call_.op == "group_norm") {
      group_norm();
    } else {
      p_norm();
    }
    return take();
  }

 private:
  uint32_t output(size_t i) const {
    return i < call_.outputs.size() && call_.outputs[i].values.size() == 1 ? call_.outputs[i].values[0] : kNone;
  }

  // group_norm of x [n, c, ...] (or channel-last [n, ..., c]) in `groups` groups of c / groups channels.
  void group_norm() {
    const uint32_t x = call_.tensor_arg("x"), y = output(0), mean = output(1), variance = output(2);
    const std::string type = *move_type(form_.dtype);
    const bool stats = form_.stats, last = form_.channel_last;
    const SymShape& xd = value(x).dims;
    const std::optional<int64_t> groups = form_.groups, channels = form_.channels;
    const int64_t per_group = *channels / *groups;
    const SymExpr& spatial = form_.spatial;
    const uint32_t scale = call_.tensor_arg("scale"), bias = call_.tensor_arg("bias");
    // Element (b, ch, s) of x is at b * c * spatial + ch * cs + s * ss.
    auto element = [&](KernelText& k, const std::string& b, const std::string& ch, const std::string& s) {
      const std::string sp = k.size(spatial);
      return last ? fmt::format("({} * {} + {}) * {} + {}", b, sp, s, *channels, ch)
                  : fmt::format("({} * {} + {}) * {} + {}", b, *channels, ch, sp, s);
    };
    const std::string eps = cuda_device_digits(form_.epsilon, "double");
    // The statistics: one thread per (b, g).
    {
      KernelText k = text();
      const std::string in = k.input(x, type);
      const std::string sc = !stats && scale != kNone ? k.input(scale, type) : "";
      const std::string bi = !stats && bias != kNone ? k.input(bias, type) : "";
      if (stats) {
        k.output(mean, type, "out_mean");
        k.output(variance, type, "out_variance");
      } else {
        k.output(y, type);
      }
      tmpl::Value st = statements_of("group_statistics");
      st.set("spatial", k.size(spatial));
      st.set("groups", *groups);
      st.set("per_group", per_group);
      st.set("x", in);
      st.set("element", element(k, "b", "ch", "s"));
      st.set("stats", stats);
      st.set("type", type);
      st.set("epsilon", eps);
      st.set("scale", sc);
      st.set("bias", bi);
      k.statements(std::move(st));
      add(k, xd[0] * SymExpr(*groups));
    }
    if (!stats) return;
    // The normalization: one thread per element, from the stored statistics.
    KernelText k = text();
    const std::string in = k.input(x, type), mu = k.input(mean, type), var = k.input(variance, type);
    const std::string sc = scale != kNone ? k.input(scale, type) : "", bi = bias != kNone ? k.input(bias, type) : "";
    k.output(y, type);
    const std::string sp = k.size(spatial);
    tmpl::Value st = statements_of("group_normalize");
    st.set("channel", last ? fmt::format("e % {}", *channels) : fmt::format("(e / {}) % {}", sp, *channels));
    st.set("batch", last ? fmt::format("e / {} / {}", *channels, sp) : fmt::format("e / {} / {}", sp, *channels));
    st.set("groups", *groups);
    st.set("per_group", per_group);
    st.set("type", type);
    st.set("variance", var);
    st.set("mean", mu);
    st.set("epsilon", eps);
    st.set("x", in);
    st.set("scale", sc);
    st.set("bias", bi);
    k.statements(std::move(st));
    add(k, value(y).numel());
  }

  // p_norm along `axis`, or of every element (asvector).
  void p_norm() {
    const uint32_t x = call_.tensor_arg("x"), out = out_value();
    const std::string type = *move_type(form_.dtype);
    const SymExpr &len = form_.len, &inner = form_.inner;
    const double p = form_.p;
    KernelText k = text();
    const std::string in = k.input(x, type);
    k.output(out, type);
    tmpl::Value st = statements_of("p_norm");
    st.set("n", k.size(len));
    st.set("step", k.size(inner));
    st.set("inner", k.size(inner));
    st.set("line", k.size(len * inner));
    std::string init = "0.0", fold, result = "acc";
    if (p == 0) {
      fold = fmt::format("acc + (v != static_cast<{}>(0) ? 1.0 : 0.0)", type);
    } else if (std::isinf(p)) {
      init = p > 0 ? "0.0" : "HUGE_VAL";
      fold = p > 0 ? "fabs(static_cast<double>(v)) > acc ? fabs(static_cast<double>(v)) : acc"
                   : "fabs(static_cast<double>(v)) < acc ? fabs(static_cast<double>(v)) : acc";
    } else {
      const std::string exponent = cuda_device_digits(p, "double");
      fold = fmt::format("acc + pow(fabs(static_cast<double>(v)), {})", exponent);
      result = fmt::format("pow(acc, 1.0 / {})", exponent);
    }
    st.set("init", init);
    st.set("type", type);
    st.set("x", in);
    st.set("fold", fold);
    st.set("result", result);
    k.statements(std::move(st));
    add(k, value(out).numel());
  }

  const passes::CudaComputeForm& form_;
};

}  // namespace

std::vector<CudaIndexKernel> norm_kernels(const LoweredProgram& program, const KernelCall& call,
                                          const passes::CudaComputeForm& form, const std::string& prefix,
                                          size_t first, const std::string& description, const CudaBufferExpr& buffer,
                                          SizeTable& sizes, const SizeTable::Spelling& size_argument) {
  return NormCall(form, program, call, prefix, first, description, buffer, sizes, size_argument).build();
}

}  // namespace kforge::codegen::index_text
