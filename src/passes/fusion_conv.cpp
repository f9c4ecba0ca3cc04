// Convolution groups of the fusion pass (docs/fusion.md, "Convolution groups"): a conv2d / depthwise_conv2d with the bias
// add, inference batch norm, activation and residual add that follow it, replaced by one call of the kernel
// library's conv2d_fused (kernels/kforge_fused.h), which computes them as oneDNN post-ops with the batch norm
// folded into the filter.
#include <algorithm>
#include <set>
#include <string>

#include "passes/fusion_internal.h"

namespace kforge::passes::fusion_detail {

namespace {

// conv2d_fused's arguments, in its declaration's order: the op set's definition must have exactly these.
const std::vector<std::string>& fused_arg_names() {
  static const std::vector<std::string> names = {
      "input",   "filter",   "bias",     "mean",        "variance",          "scale",
      "shift",   "residual", "strides",  "paddings",    "padding_algorithm", "dilations",
      "groups",  "data_format", "epsilon", "activation", "activation_alpha", "activation_beta",
      "activation_after_residual"};
  return names;
}

// The optional last argument (kernels/fusion.yaml has it; older copies of the op may not): the output's pixel
// stride, 0 (dense) unless the concat in place sets it (concat_in_place.h).
constexpr const char* kPixelStride = "out_pixel_stride";

// The op's arguments: fused_arg_names(), then out_pixel_stride where it has one.
std::vector<std::string> arg_names_of(const opdef::Op& op) {
  std::vector<std::string> names = fused_arg_names();
  if (op.find_attribute(kPixelStride) != nullptr) names.push_back(kPixelStride);
  return names;
}

// The conv's own attributes, passed on unchanged.
const std::set<std::string>& conv_attr_names() {
  static const std::set<std::string> names = {"strides", "paddings", "padding_algorithm", "dilations", "groups",
                                               "data_format"};
  return names;
}

struct Activation {
  std::string name;  // conv2d_fused's `activation`
  float alpha = 0, beta = 0;
};

struct Chain {
  uint32_t conv = kNone;
  std::vector<uint32_t> calls;     // the members, in call order
  std::vector<uint32_t> internal;  // values computed and consumed inside
  uint32_t out = kNone;            // the value the group stores
  uint32_t bias = kNone, residual = kNone;
  uint32_t bias_add = kNone;  // the add call that read the bias
  uint32_t bn = kNone;        // the batch_norm call
  Activation activation;
  bool after_residual = false;
  bool has_activation = false;
};

class ConvGrouper {
 public:
  ConvGrouper(const LoweredProgram& program, const opdef::Op& fused, const std::vector<std::vector<uint32_t>>& readers,
              const std::vector<bool>& is_output, bool half_floats)
      : p_(program), fused_(fused), readers_(readers), is_output_(is_output), half_floats_(half_floats) {}

  /// The conv at `c` with the epilogue that follows it; `alone`: without one (a conv2d_fused of the conv only).
  std::optional<FusedGroup> group_at(uint32_t c, bool alone = false) const {
    const KernelCall& call = p_.calls[c];
    if (call.inplace_twin || call.def == nullptr || !call.def->pattern ||
        call.def->pattern->kind != opdef::PatternKind::kOutFusible ||
        (call.op != "conv2d" && call.op != "depthwise_conv2d")) {
      return std::nullopt;
    }
    for (const std::string& name : conv_attr_names()) {
      const KernelArg* a = call.arg(name);
      if (a == nullptr || a->kind != ArgKind::kConstant) return std::nullopt;
    }
    const KernelArg* input = call.arg("input");
    const KernelArg* filter = call.arg("filter");
    if (input == nullptr || filter == nullptr || input->kind != ArgKind::kTensor || filter->kind != ArgKind::kTensor ||
        call.outputs.size() != 1 || call.outputs[0].values.size() != 1) {
      return std::nullopt;
    }
    Chain chain;
    chain.conv = c;
    chain.calls = {c};
    chain.out = call.outputs[0].values[0];
    const ir::DataType dtype = p_.value(chain.out).dtype;
    const bool half = dtype == ir::DataType::kFloat16 || dtype == ir::DataType::kBFloat16;
    data_format_ = call.arg("data_format")->constant.string_value;
    const size_t rank = blocked() ? 5 : 4;
    if ((dtype != ir::DataType::kFloat32 && dtype != ir::DataType::kFloat64 && !(half && half_floats_)) ||
        p_.value(chain.out).dims.size() != rank) {
      return std::nullopt;
    }
    if (alone) return make_group(chain);
    extend(chain);
    if (chain.calls.size() == 1) return std::nullopt;  // nothing to fuse: the conv stays conv2d
    return make_group(chain);
  }

 private:
  // The one call reading `v`, when v is no program output and owns its workspace buffer; kNone otherwise.
  uint32_t sole_reader(uint32_t v) const {
    if (is_output_[v] || readers_[v].size() != 1 || !owns_buffer(v)) return kNone;
    return readers_[v][0];
  }
  bool owns_buffer(uint32_t v) const {
    const Buffer& b = p_.buffer_of(v);
    return b.values.size() == 1 && b.kind == BufferKind::kWorkspace;
  }

  // The tensor value of argument `name`, or kNone.
  static uint32_t tensor_arg(const KernelCall& call, std::string_view name) {
    const KernelArg* a = call.arg(name);
    return a != nullptr && a->kind == ArgKind::kTensor ? a->value : kNone;
  }

  // A call's single Tensor output, or kNone.
  static uint32_t single_out(const KernelCall& call) {
    return call.outputs.empty() || call.outputs[0].values.size() != 1 ? kNone : call.outputs[0].values[0];
  }

  // A unary elementwise call `op(x = cur)` whose result has cur's shape and dtype, not in place.
  bool unary_on(uint32_t c, uint32_t cur) const {
    const KernelCall& call = p_.calls[c];
    const uint32_t out = single_out(call);
    return !call.inplace_twin && tensor_arg(call, "x") == cur && out != kNone && call.outputs.size() == 1 &&
           p_.value(out).dims == p_.value(cur).dims && p_.value(out).dtype == p_.value(cur).dtype;
  }

  // The other operand of `add(cur, v)` / `add(v, cur)` with cur's shape as its result, or kNone.
  uint32_t add_operand(uint32_t c, uint32_t cur) const {
    const KernelCall& call = p_.calls[c];
    if (call.op != "add" || call.inplace_twin) return kNone;
    const uint32_t x = tensor_arg(call, "x"), y = tensor_arg(call, "y"), out = single_out(call);
    if (out == kNone || x == kNone || y == kNone || x == y || (x != cur && y != cur)) return kNone;
    if (p_.value(out).dims != p_.value(cur).dims || p_.value(out).dtype != p_.value(cur).dtype) return kNone;
    return x == cur ? y : x;
  }

  bool channel_last() const { return data_format_ == "NHWC"; }
  bool blocked() const { return data_format_ == "NCHW8c"; }  // [N, C / 8, H, W, 8] (passes/layout.h)
  // Whether a batch norm's data_format puts the channels where the conv's does (NCHW and AnyLayout both do).
  bool same_layout(const std::string& f) const {
    return (f == "NHWC") == channel_last() && (f == "NCHW8c") == blocked();
  }

  int64_t channels(uint32_t cur) const {
    const SymShape& d = p_.value(cur).dims;
    if (blocked()) return d[1].constant() ? *d[1].constant() * 8 : -1;
    return d[channel_last() ? 3 : 1].constant().value_or(-1);
  }

  // A per-channel tensor for `cur`: its dtype, and dims [C] or, right-aligned against cur's, the channels at the
  // channel axes and 1 elsewhere ([1, C, 1, 1], [C, 1, 1] for NCHW; [C], [1, 1, 1, C] for NHWC; [1, C / 8, 1, 1, 8],
  // [C / 8, 1, 1, 8] for NCHW8c, whose elements are in channel order as [C]'s are).
  bool per_channel(uint32_t v, uint32_t cur) const {
    const LoweredValue& t = p_.value(v);
    const int64_t c = channels(cur);
    const size_t rank = blocked() ? 5 : 4;
    if (t.dtype != p_.value(cur).dtype || c < 0 || t.dims.empty() || t.dims.size() > rank) return false;
    if (blocked() && t.dims.size() < 4) return false;  // [C] is not right-aligned with [N, C / 8, H, W, 8]
    const size_t offset = rank - t.dims.size();
    for (size_t i = 0; i < t.dims.size(); ++i) {
      const std::optional<int64_t> d = t.dims[i].constant();
      if (!d || *d != expected_dim(i + offset, c)) return false;
    }
    return true;
  }

  // Dim `axis` of a per-channel tensor of rank 4 (NCHW, NHWC) or 5 (NCHW8c) for C = c channels.
  int64_t expected_dim(size_t axis, int64_t c) const {
    if (blocked()) return axis == 1 ? c / 8 : axis == 4 ? 8 : 1;
    return axis == (channel_last() ? 3u : 1u) ? c : 1;
  }

  // A batch norm's statistic or affine parameter: [C] in the conv's dtype, or float32 for a 16-bit conv (a batch norm
  // computes in float32: --precision keeps its vectors, passes/precision.h).
  bool channel_vector(uint32_t v, uint32_t cur) const {
    const LoweredValue& t = p_.value(v);
    const ir::DataType d = p_.value(cur).dtype;
    const bool half = d == ir::DataType::kFloat16 || d == ir::DataType::kBFloat16;
    return (t.dtype == d || (half && t.dtype == ir::DataType::kFloat32)) && t.dims.size() == 1 && channels(cur) >= 0 &&
           t.dims[0].constant() == std::optional<int64_t>(channels(cur));
  }

  // An activation conv2d_fused applies with the same formula as the op's kernel, with constant attributes.
  std::optional<Activation> activation_of(const KernelCall& call) const {
    const std::string& op = call.op;
    if (op == "relu" || op == "relu6" || op == "hardswish" || op == "sigmoid" || op == "tanh" || op == "swish" ||
        op == "silu") {
      return Activation{op == "silu" ? "swish" : op};
    }
    if (op == "gelu") {
      const std::optional<bool> approximate = call.constant_bool("approximate");
      if (!approximate) return std::nullopt;
      return Activation{*approximate ? "gelu_tanh" : "gelu"};
    }
    if (op == "leaky_relu") {
      const KernelArg* slope = call.arg("negative_slope");
      if (slope == nullptr || slope->kind != ArgKind::kConstant) return std::nullopt;
      return Activation{"leaky_relu", static_cast<float>(slope->constant.float_value)};
    }
    if (op == "clip") {
      const KernelArg* lo = call.arg("min");
      const KernelArg* hi = call.arg("max");
      if (lo == nullptr || hi == nullptr || lo->kind != ArgKind::kConstant || hi->kind != ArgKind::kConstant) {
        return std::nullopt;
      }
      auto value = [](const ScalarConstant& s) {
        return static_cast<float>(s.is_floating ? s.float_value : static_cast<double>(s.int_value));
      };
      const float a = value(lo->constant.scalar), b = value(hi->constant.scalar);
      if (!(a <= b)) return std::nullopt;  // the clip kernel reports that as an error: keep the call
      return Activation{"clip", a, b};
    }
    return std::nullopt;
  }

  // An inference batch norm of `cur` in the conv's layout, whose outputs other than `out` nothing reads.
  bool inference_batch_norm(uint32_t c, uint32_t cur) const {
    const KernelCall& call = p_.calls[c];
    if (call.op != "batch_norm" || tensor_arg(call, "x") != cur) return false;
    const bool test = call.constant_bool("is_test").value_or(false) ||
                      call.constant_bool("use_global_stats").value_or(false);
    const KernelArg* format = call.arg("data_format");
    const KernelArg* eps = call.arg("epsilon");
    if (!test || format == nullptr || format->kind != ArgKind::kConstant || eps == nullptr ||
        eps->kind != ArgKind::kConstant || !same_layout(format->constant.string_value)) {
      return false;
    }
    for (const char* name : {"mean", "variance"}) {
      const uint32_t v = tensor_arg(call, name);
      if (v == kNone || !channel_vector(v, cur)) return false;
    }
    for (const char* name : {"scale", "bias"}) {
      const KernelArg* a = call.arg(name);
      if (a == nullptr) return false;
      if (a->kind == ArgKind::kAbsentTensor) continue;
      if (a->kind != ArgKind::kTensor || !channel_vector(a->value, cur)) return false;
    }
    const uint32_t out = single_out(call);
    if (out == kNone || p_.value(out).dims != p_.value(cur).dims) return false;
    for (size_t i = 1; i < call.outputs.size(); ++i) {
      for (uint32_t v : call.outputs[i].values) {
        if (v != kNone && (is_output_[v] || !readers_[v].empty() || !owns_buffer(v))) return false;
      }
    }
    return true;
  }

  // No call strictly between the conv and `last` (other than the chain's) writes a buffer the group reads: the
  // group reads its operands at its position, not where the conv was. The writes that are no hazard are those
  // that define the bias before its add read it, into a buffer no other operand of the group reads (a bias reshaped
  // from a parameter between the conv and its add, as Paddle's Conv2D writes it; in NHWC the layout plan reshapes
  // it once more, into the same buffer): the group, which runs at its last call, reads the bias after them, as the
  // add did. `bias`, `bias_add`: the chain's bias and its add, or the candidate being checked.
  bool operands_stable(const Chain& ch, uint32_t last, uint32_t extra_read, uint32_t bias = kNone,
                       uint32_t bias_add = kNone) const {
    if (bias == kNone) bias = ch.bias, bias_add = ch.bias_add;
    std::set<uint32_t> read, others;
    const KernelCall& conv = p_.calls[ch.conv];
    std::vector<uint32_t> values = {tensor_arg(conv, "input"), tensor_arg(conv, "filter"), ch.bias, ch.residual,
                                    extra_read};
    if (ch.bn != kNone) {
      for (const char* name : {"mean", "variance", "scale", "bias"}) values.push_back(tensor_arg(p_.calls[ch.bn], name));
    }
    for (uint32_t v : values) {
      if (v == kNone) continue;
      read.insert(p_.value(v).buffer);
      if (v != bias) others.insert(p_.value(v).buffer);
    }
    const uint32_t bias_buffer = bias == kNone ? kNone : p_.value(bias).buffer;
    std::set<uint32_t> members(ch.calls.begin(), ch.calls.end());
    for (uint32_t k = ch.conv + 1; k < last; ++k) {
      if (members.count(k)) continue;
      for (const CallOutput& o : p_.calls[k].outputs) {
        for (uint32_t v : o.values) {
          if (v == kNone || !read.count(p_.value(v).buffer)) continue;
          const bool defines_bias = p_.value(v).buffer == bias_buffer && k < bias_add && !others.count(bias_buffer);
          if (!defines_bias) return false;
        }
      }
    }
    return true;
  }

  void take(Chain& ch, uint32_t c) const {
    ch.internal.push_back(ch.out);
    ch.calls.push_back(c);
    ch.out = single_out(p_.calls[c]);
  }

  void extend(Chain& ch) const {
    uint32_t next = sole_reader(ch.out);
    // A per-channel bias.
    if (next != kNone && ch.bn == kNone) {
      const uint32_t v = add_operand(next, ch.out);
      if (v != kNone && per_channel(v, ch.out) && operands_stable(ch, next, v, v, next)) {
        ch.bias = v;
        ch.bias_add = next;
        take(ch, next);
        next = sole_reader(ch.out);
      }
    }
    // An inference batch norm; its unread outputs become internal too.
    if (next != kNone && inference_batch_norm(next, ch.out)) {
      Chain with = ch;
      with.bn = next;
      if (operands_stable(with, next, kNone)) {
        ch = with;
        take(ch, next);
        for (size_t i = 1; i < p_.calls[next].outputs.size(); ++i) {
          for (uint32_t v : p_.calls[next].outputs[i].values) {
            if (v != kNone) ch.internal.push_back(v);
          }
        }
        next = sole_reader(ch.out);
      }
    }
    // An activation, then a residual, then (when none came before it) an activation.
    if (next != kNone && unary_on(next, ch.out)) {
      if (std::optional<Activation> act = activation_of(p_.calls[next])) {
        if (operands_stable(ch, next, kNone)) {
          ch.activation = *act;
          ch.has_activation = true;
          take(ch, next);
          next = sole_reader(ch.out);
        }
      }
    }
    if (next == kNone) return;
    const uint32_t residual = add_operand(next, ch.out);
    if (residual == kNone || p_.value(residual).dims != p_.value(ch.out).dims ||
        p_.value(residual).dtype != p_.value(ch.out).dtype || !operands_stable(ch, next, residual)) {
      return;
    }
    ch.residual = residual;
    take(ch, next);
    next = sole_reader(ch.out);
    if (ch.has_activation || next == kNone || !unary_on(next, ch.out)) return;
    if (std::optional<Activation> act = activation_of(p_.calls[next])) {
      if (!operands_stable(ch, next, kNone)) return;
      ch.activation = *act;
      ch.has_activation = true;
      ch.after_residual = true;
      take(ch, next);
    }
  }

  // conv2d_fused's call: the conv's attributes, the chain's tensors, the epilogue as constants.
  KernelCall fused_call(const Chain& ch) const {
    const KernelCall& conv = p_.calls[ch.conv];
    const KernelCall* bn = ch.bn != kNone ? &p_.calls[ch.bn] : nullptr;
    KernelCall call;
    call.op = fused_.name;
    call.def = &fused_;
    call.kernel = fused_.kernel->funcs.front().name;
    call.infer_meta = fused_.infer_meta ? fused_.infer_meta->func : "";
    call.kernel_dtype = conv.kernel_dtype;
    call.source = conv.source;
    call.loc = conv.loc;
    call.pir_name = "conv2d_fused of";
    for (uint32_t c : ch.calls) call.pir_name += " " + p_.calls[c].pir_name;
    auto tensor = [](const opdef::Input& in, uint32_t v) {
      KernelArg a;
      a.name = in.name;
      a.type = in.type;
      a.optional = in.optional;
      a.kind = v == kNone ? ArgKind::kAbsentTensor : ArgKind::kTensor;
      a.value = v;
      return a;
    };
    auto constant = [](const opdef::Attribute& attr) {
      KernelArg a;
      a.name = attr.name;
      a.type = attr.type;
      a.kind = ArgKind::kConstant;
      a.constant.type = attr.type;
      return a;
    };
    for (const std::string& name : arg_names_of(fused_)) {
      if (const opdef::Input* in = fused_.find_input(name)) {
        uint32_t v = kNone;
        if (name == "input" || name == "filter") v = tensor_arg(conv, name);
        if (name == "bias") v = ch.bias;
        if (name == "residual") v = ch.residual;
        if (bn != nullptr && (name == "mean" || name == "variance" || name == "scale")) v = tensor_arg(*bn, name);
        if (bn != nullptr && name == "shift") v = tensor_arg(*bn, "bias");
        call.args.push_back(tensor(*in, v));
        continue;
      }
      const opdef::Attribute& attr = *fused_.find_attribute(name);
      if (conv_attr_names().count(name)) {
        KernelArg a = *conv.arg(name);
        a.type = attr.type;
        a.constant.type = attr.type;
        call.args.push_back(std::move(a));
        continue;
      }
      KernelArg a = constant(attr);
      if (name == "epsilon") a.constant.float_value = bn != nullptr ? bn->arg("epsilon")->constant.float_value : 1e-5;
      if (name == "activation") a.constant.string_value = ch.activation.name;
      if (name == "activation_alpha") a.constant.float_value = ch.activation.alpha;
      if (name == "activation_beta") a.constant.float_value = ch.activation.beta;
      if (name == "activation_after_residual") a.constant.bool_value = ch.after_residual;
      call.args.push_back(std::move(a));
    }
    for (const std::string& name : fused_.effective_infer_meta_param()) {
      for (const KernelArg& a : call.args) {
        if (a.name == name) call.infer_meta_args.push_back(a);
      }
    }
    CallOutput out;
    out.name = fused_.outputs.front().name;
    out.values = {ch.out};
    call.outputs.push_back(std::move(out));
    return call;
  }

  FusedGroup make_group(const Chain& ch) const {
    FusedGroup g;
    g.kind = GroupKind::kConv;
    g.calls = ch.calls;
    g.position = ch.calls.back();
    g.shape = p_.value(ch.out).dims;
    g.outer = 1;
    g.inner = sym_numel(g.shape);
    g.numel = g.inner;
    g.needs_int64 = exceeds_int32(g.numel);
    g.conv_call = fused_call(ch);
    const expr::ScalarType storage = *scalar_of(p_.value(ch.out).dtype);
    for (const KernelArg& a : g.conv_call.args) {
      if (a.kind != ArgKind::kTensor) continue;
      GroupInput in;
      in.value = a.value;
      in.name = "in" + std::to_string(g.inputs.size());
      in.dtype = p_.value(a.value).dtype;
      in.storage = *scalar_of(in.dtype);  // a 16-bit conv's batch-norm vectors are float32
      in.type = in.storage;
      in.needs_int64 = exceeds_int32(sym_numel(p_.value(a.value).dims));
      g.inputs.push_back(std::move(in));
    }
    GroupStore store;
    store.value = ch.out;
    store.name = "conv";
    store.dtype = p_.value(ch.out).dtype;
    store.storage = storage;
    g.stores.push_back(std::move(store));
    g.internal_values = ch.internal;
    g.has_expensive = true;
    for (uint32_t c : ch.calls) g.label += (g.label.empty() ? "" : "+") + p_.calls[c].op;
    return g;
  }

  const LoweredProgram& p_;
  const opdef::Op& fused_;
  const std::vector<std::vector<uint32_t>>& readers_;
  const std::vector<bool>& is_output_;
  const bool half_floats_;             // float16 / bfloat16 convolutions group too (FusionOptions::half_floats)
  mutable std::string data_format_;  // of the conv being grouped: NCHW, NHWC or NCHW8c
};

// The op set's conv2d_fused is the library's: exactly its arguments, a kernel, one output.
bool is_library_op(const opdef::Op& op) {
  if (!op.kernel || op.kernel->funcs.empty() || op.outputs.size() != 1) return false;
  const std::vector<std::string> names = arg_names_of(op);
  for (const std::string& name : names) {
    if (op.find_input(name) == nullptr && op.find_attribute(name) == nullptr) return false;
  }
  return names.size() == op.inputs.size() + op.attributes.size() && op.effective_kernel_param() == names;
}

}  // namespace

std::vector<FusedGroup> plan_conv_groups(const LoweredProgram& program, const opdef::Op* conv_fused,
                                         const std::vector<std::vector<uint32_t>>& readers,
                                         const std::vector<bool>& is_output, bool half_floats) {
  std::vector<FusedGroup> groups;
  if (conv_fused == nullptr || !is_library_op(*conv_fused)) return groups;
  ConvGrouper grouper(program, *conv_fused, readers, is_output, half_floats);
  std::set<uint32_t> taken;  // a call is in one group at most (two chains never meet, but say so)
  for (uint32_t c = 0; c < program.calls.size(); ++c) {
    std::optional<FusedGroup> g = grouper.group_at(c);
    if (!g || std::any_of(g->calls.begin(), g->calls.end(), [&](uint32_t m) { return taken.count(m) != 0; })) continue;
    taken.insert(g->calls.begin(), g->calls.end());
    groups.push_back(std::move(*g));
  }
  return groups;
}

}  // namespace kforge::passes::fusion_detail

namespace kforge::passes {

std::optional<FusedGroup> lone_conv_group(const LoweredProgram& program, const opdef::Op* conv_fused, uint32_t c) {
  if (conv_fused == nullptr || !fusion_detail::is_library_op(*conv_fused) ||
      conv_fused->find_attribute("out_pixel_stride") == nullptr) {
    return std::nullopt;
  }
  const std::vector<std::vector<uint32_t>> no_readers;
  const std::vector<bool> no_outputs;
  return fusion_detail::ConvGrouper(program, *conv_fused, no_readers, no_outputs, false).group_at(c, true);
}

}  // namespace kforge::passes
