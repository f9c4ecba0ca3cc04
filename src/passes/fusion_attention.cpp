// Attention groups of the fusion pass (docs/fusion.md, "Attention groups"): the calls of one scaled dot-product
// attention over float16, bfloat16 or float32 values, as Paddle's MultiHeadAttention exports it,
//
//   q4 = transpose(q, [0, 2, 1, 3])     (k4, v4 likewise; absent where the value already is [B, H, S, D])
//   q5 = scale(q4, a)                    (optional, bias 0)
//   s  = matmul(q5, k4, transpose_y)     [B, H, Sq, Sk]
//   s2 = scale(s, c)                     (optional, bias 0)
//   s3 = add(s2, mask)                   (optional: a mask that broadcasts to [B, H, Sq, Sk])
//   p  = softmax(s3, axis -1)
//   o  = matmul(p, v4)                   [B, H, Sq, D]
//   out = transpose(o, [0, 2, 1, 3])     (optional)
//
// become one group that reads q, k, v (and the mask) where they lie and writes out: every value in between is
// internal. Each of them must be read by the next call alone and be no program output, and no call between the
// group's first and last writes what the group reads.
#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "passes/fusion_internal.h"

namespace kforge::passes::fusion_detail {

namespace {

bool is_half(ir::DataType t) { return t == ir::DataType::kFloat16 || t == ir::DataType::kBFloat16; }

// Key sequences longer than this, where known when the program is compiled, leave float32 attention unfused: the
// float32 kernel (kforge_attention_f32.cuh) computes on the CUDA cores, and over long sequences the unfused
// program's batched cuBLASLt products (TF32 tensor cores after set_gemm_tf32) may win back the scores' round trip
// through memory. A dynamic length is fused (the kernel is correct at any length; its memory traffic grows with S,
// the unfused program's with S^2).
constexpr int64_t kFloat32MaxKeys = 4096;

// Whether a kernel has an instance for head dim d: the 16-bit one 32, 64 and 128 (its mma tiles); the float32 one
// any multiple of 4 up to 128 (its float4 rows; the small head dims of test-sized transformers too).
bool has_kernel_for(ir::DataType t, int64_t d) {
  if (is_half(t)) return d == 32 || d == 64 || d == 128;
  return d > 0 && d % 4 == 0 && d <= 128;
}

// Whether group `a` runs as one kernel: 16-bit always (the tensor-core kernel); float32 where the float32 kernel is
// expected to pay (kFloat32MaxKeys). Its head dim is checked by the matcher (has_kernel_for).
bool fused_attention_pays(const AttentionGroup& a) {
  if (is_half(a.dtype)) return true;
  if (a.dtype != ir::DataType::kFloat32) return false;
  const std::optional<int64_t> keys = a.seq_k.constant();
  return !keys || *keys <= kFloat32MaxKeys;
}

class AttentionMatcher {
 public:
  AttentionMatcher(const LoweredProgram& program, const std::vector<std::vector<uint32_t>>& readers,
                   const std::vector<bool>& is_output)
      : p_(program), readers_(readers), is_output_(is_output) {}

  // The group whose softmax is call `softmax`, or nullopt.
  std::optional<FusedGroup> match(uint32_t softmax) {
    calls_.clear();
    internal_.clear();
    reads_.clear();
    AttentionGroup a;
    const KernelCall& sm = p_.calls[softmax];
    const uint32_t scores = sm.tensor_arg("x"), probs = output_of(sm);
    if (scores == kNone || probs == kNone || value(scores).dims.size() != 4) return std::nullopt;
    const std::optional<double> axis = sm.constant_number("axis");
    if (!axis || (*axis != -1 && *axis != 3)) return std::nullopt;
    a.dtype = value(scores).dtype;
    if ((!is_half(a.dtype) && a.dtype != ir::DataType::kFloat32) || value(probs).dtype != a.dtype) {
      return std::nullopt;
    }
    calls_.push_back(softmax);

    // Back from the softmax: the mask add, a scale of the scores, the q k^T matmul.
    uint32_t s = scores;
    if (const uint32_t add = producer_only_for(s, "add"); add != kNone) {
      const uint32_t x = p_.calls[add].tensor_arg("x"), y = p_.calls[add].tensor_arg("y");
      const uint32_t from_matmul = producer_of(x) != kNone && is_score_chain(x) ? x : y;
      a.mask = from_matmul == x ? y : x;
      if (a.mask == kNone) return std::nullopt;
      take(add, s);
      reads_.emplace_back(a.mask, add);
      s = from_matmul;
    }
    a.scale = 1;
    if (const uint32_t sc = producer_only_for(s, "scale"); sc != kNone) {
      const std::optional<double> factor = plain_scale(sc);
      if (!factor) return std::nullopt;
      take(sc, s);
      a.scale *= *factor;
      s = p_.calls[sc].tensor_arg("x");
    }
    const uint32_t qk = producer_only_for(s, "matmul");
    if (qk == kNone || p_.calls[qk].constant_bool("transpose_x") != std::optional<bool>(false) ||
        p_.calls[qk].constant_bool("transpose_y") != std::optional<bool>(true)) {
      return std::nullopt;
    }
    take(qk, s);
    uint32_t q = p_.calls[qk].tensor_arg("x");
    uint32_t q_reader = qk;
    if (const uint32_t sc = producer_only_for(q, "scale"); sc != kNone) {
      const std::optional<double> factor = plain_scale(sc);
      if (!factor) return std::nullopt;
      take(sc, q);
      a.scale *= *factor;
      q = p_.calls[sc].tensor_arg("x");
      q_reader = sc;
    }

    // Forward from the softmax: the p v matmul and the transpose back.
    if (readers_[probs].size() != 1 || is_output_[probs]) return std::nullopt;
    const uint32_t pv = readers_[probs][0];
    const KernelCall& pvc = p_.calls[pv];
    if (pvc.op != "matmul" || pvc.tensor_arg("x") != probs || pvc.constant_bool("transpose_x") != std::optional<bool>(false) ||
        pvc.constant_bool("transpose_y") != std::optional<bool>(false)) {
      return std::nullopt;
    }
    take(pv, probs);
    uint32_t o = output_of(pvc);
    if (o == kNone) return std::nullopt;
    bool out_transposed = false;
    if (readers_[o].size() == 1 && !is_output_[o] && is_head_swap(readers_[o][0])) {
      internal_.push_back(o);
      calls_.push_back(readers_[o][0]);
      o = output_of(p_.calls[readers_[o][0]]);
      out_transposed = true;
    }

    // The operands, their dims and strides.
    if (!operand(q, q_reader, &a.q) || !operand(p_.calls[qk].tensor_arg("y"), qk, &a.k) ||
        !operand(pvc.tensor_arg("y"), pv, &a.v)) {
      return std::nullopt;
    }
    // The dims of the [B, H, S, D] values the matmuls read.
    const SymShape& qd = value(q).dims, &kd = value(p_.calls[qk].tensor_arg("y")).dims;
    const SymShape& vd = value(pvc.tensor_arg("y")).dims;
    a.batch = qd[0];
    a.heads = qd[1];
    a.seq_q = qd[2];
    a.seq_k = kd[2];
    const std::optional<int64_t> d = qd[3].constant();
    if (!d || !has_kernel_for(a.dtype, *d)) return std::nullopt;
    a.head_dim = *d;
    if (kd[0] != a.batch || kd[1] != a.heads || kd[3] != qd[3] || vd[0] != a.batch || vd[1] != a.heads ||
        vd[2] != a.seq_k || vd[3] != qd[3]) {
      return std::nullopt;
    }
    const SymShape& od = value(o).dims;
    const SymShape expect_out = out_transposed ? SymShape{a.batch, a.seq_q, a.heads, qd[3]}
                                               : SymShape{a.batch, a.heads, a.seq_q, qd[3]};
    if (od != expect_out || value(o).dtype != a.dtype || value(q).dtype != a.dtype) return std::nullopt;
    a.out.value = o;
    set_strides(&a.out, od, out_transposed);
    if (a.mask != kNone && !mask_strides(&a)) return std::nullopt;
    if (a.mask != kNone) {
      if (const std::optional<int64_t> d = causal_diagonal(a); d) {
        // Applied by position: the mask is no operand (its triu still runs for any other reader).
        reads_.erase(std::remove_if(reads_.begin(), reads_.end(), [&](const auto& r) { return r.first == a.mask; }),
                     reads_.end());
        a.mask = kNone;
        a.causal = true;
        a.causal_diagonal = *d;
      }
    }
    for (uint32_t v : {a.k.value, a.v.value}) {
      if (value(v).dtype != a.dtype) return std::nullopt;
    }
    if (!fused_attention_pays(a)) return std::nullopt;

    // The group reads q, k, v and the mask where it runs (its last call), not where their first readers were:
    // nothing in between may write them.
    std::sort(calls_.begin(), calls_.end());
    const std::set<uint32_t> members(calls_.begin(), calls_.end());
    for (const auto& [v, reader] : reads_) {
      if (written_between(p_, {p_.value(v).buffer}, reader, calls_.back(), members)) return std::nullopt;
    }
    return group(a);
  }

 private:
  const LoweredValue& value(uint32_t v) const { return p_.value(v); }

  static uint32_t output_of(const KernelCall& call) {
    if (call.outputs.empty() || call.outputs[0].values.size() != 1) return kNone;
    return call.outputs[0].values[0];
  }

  uint32_t producer_of(uint32_t v) const { return v == kNone ? kNone : value(v).defined_by; }

  // The call of op `op` that defines v when v is read by one call alone and is no program output; else kNone.
  uint32_t producer_only_for(uint32_t v, std::string_view op) const {
    const uint32_t c = producer_of(v);
    if (c == kNone || p_.calls[c].op != op || p_.calls[c].inplace_twin) return kNone;
    if (readers_[v].size() != 1 || is_output_[v]) return kNone;
    return c;
  }

  // Whether v comes from a q k^T matmul, through a scale at most (the add's operand that is the scores).
  bool is_score_chain(uint32_t v) const {
    uint32_t c = producer_of(v);
    if (c != kNone && p_.calls[c].op == "scale") c = producer_of(p_.calls[c].tensor_arg("x"));
    return c != kNone && p_.calls[c].op == "matmul";
  }

  // Takes call c into the group and makes v internal (an intermediate value only the group reads).
  void take(uint32_t c, uint32_t v) {
    calls_.push_back(c);
    internal_.push_back(v);
  }

  // A scale op's factor when it has no bias (scale * x).
  std::optional<double> plain_scale(uint32_t c) const {
    const KernelCall& call = p_.calls[c];
    const std::optional<double> bias = call.constant_number("bias");
    if (!bias || *bias != 0) return std::nullopt;
    return call.constant_number("scale");
  }

  // A transpose swapping dims 1 and 2 of a rank-4 value: [B, S, H, D] <-> [B, H, S, D].
  bool is_head_swap(uint32_t c) const {
    const KernelCall& call = p_.calls[c];
    if (call.op != "transpose" || call.inplace_twin) return false;
    const KernelArg* perm = call.arg("perm");
    return perm != nullptr && perm->kind == ArgKind::kConstant &&
           perm->constant.ints == std::vector<int64_t>{0, 2, 1, 3};
  }

  // Operand v of a matmul ([B, H, S, D]), read by group call `reader`: read through its head-swapping transpose
  // when that transpose feeds the group alone (absorbed), else as it is.
  bool operand(uint32_t v, uint32_t reader, AttentionOperand* out) {
    if (v == kNone || value(v).dims.size() != 4) return false;
    const uint32_t t = producer_of(v);
    if (t != kNone && is_head_swap(t) && readers_[v].size() == 1 && !is_output_[v]) {
      calls_.push_back(t);
      internal_.push_back(v);
      out->value = p_.calls[t].tensor_arg("x");
      if (out->value == kNone) return false;
      set_strides(out, value(out->value).dims, true);
      reads_.emplace_back(out->value, t);
      return true;
    }
    out->value = v;
    set_strides(out, value(v).dims, false);
    reads_.emplace_back(v, reader);
    return true;
  }

  // The diagonal d when the mask is triu(-inf everywhere, d) over [..., seq_q, seq_k] (1s before), as Paddle's
  // decoders build a causal mask from the run-time length (full_with_tensor + triu); a cast of it (the precision
  // plan's) is looked through. nullopt for any other mask.
  std::optional<int64_t> causal_diagonal(const AttentionGroup& a) const {
    uint32_t m = a.mask;
    const SymShape& dims = value(m).dims;
    if (dims.size() < 2 || dims[dims.size() - 2] != a.seq_q || dims.back() != a.seq_k) return std::nullopt;
    for (size_t i = 0; i + 2 < dims.size(); ++i) {
      if (dims[i].constant() != std::optional<int64_t>(1)) return std::nullopt;
    }
    uint32_t c = producer_of(m);
    if (c != kNone && p_.calls[c].op == "cast") c = producer_of(p_.calls[c].tensor_arg("x"));
    if (c == kNone || p_.calls[c].op != "triu") return std::nullopt;
    const std::optional<double> diagonal = p_.calls[c].constant_number("diagonal");
    const std::optional<double> fill = splat_of(p_.calls[c].tensor_arg("x"));
    if (!diagonal || !fill || !(std::isinf(*fill) && *fill < 0)) return std::nullopt;
    return static_cast<int64_t>(*diagonal);
  }

  // The one value every element of v has, where it is known: a splat constant, or full / full_with_tensor of one.
  std::optional<double> splat_of(uint32_t v) const {
    if (v == kNone) return std::nullopt;
    const LoweredValue& val = value(v);
    if (val.role == ValueRole::kConstant) {
      const ConstantData& data = p_.constants.at(val.role_index);
      if (!data.splat || !ir::is_floating(data.dtype) || data.floats.empty()) return std::nullopt;
      return data.floats[0];
    }
    const uint32_t c = producer_of(v);
    if (c == kNone) return std::nullopt;
    const KernelCall& call = p_.calls[c];
    if (call.op == "full_with_tensor") return splat_of(call.tensor_arg("value"));
    if (call.op == "full") return call.constant_number("value");
    return std::nullopt;
  }

  // Row-major strides of a [B, S, H, D] (seq_major) or [B, H, S, D] value.
  static void set_strides(AttentionOperand* o, const SymShape& dims, bool seq_major) {
    const std::vector<SymExpr> st = row_major_strides(dims);
    o->batch_stride = st[0];
    o->seq_stride = seq_major ? st[1] : st[2];
    o->head_stride = seq_major ? st[2] : st[1];
  }

  // The mask's strides over [B, H, Sq, Sk], from its dims broadcast against them; float32 or the group's dtype.
  bool mask_strides(AttentionGroup* a) const {
    const LoweredValue& m = value(a->mask);
    if (m.dtype != a->dtype && m.dtype != ir::DataType::kFloat32) return false;
    const SymShape target = {a->batch, a->heads, a->seq_q, a->seq_k};
    std::optional<std::vector<SymExpr>> st = broadcast_strides(m.dims, row_major_strides(m.dims), target);
    if (!st) return false;
    a->mask_batch_stride = (*st)[0];
    a->mask_head_stride = (*st)[1];
    a->mask_row_stride = (*st)[2];
    a->mask_col_stride = (*st)[3];
    return true;
  }

  FusedGroup group(const AttentionGroup& a) const {
    FusedGroup g;
    g.kind = GroupKind::kAttention;
    g.calls = calls_;  // sorted by match(); one transpose may feed both q and k
    g.calls.erase(std::unique(g.calls.begin(), g.calls.end()), g.calls.end());
    g.position = g.calls.back();
    g.shape = value(a.out.value).dims;
    g.outer = a.batch * a.heads * a.seq_q;  // one output row of head_dim per (batch, head, query)
    g.inner = a.head_dim;
    g.numel = sym_numel(g.shape);
    g.needs_int64 = true;  // the kernel indexes in int64
    const expr::ScalarType storage = *scalar_of(a.dtype);
    for (uint32_t v : {a.q.value, a.k.value, a.v.value, a.mask}) {
      if (v == kNone) continue;
      GroupInput in;
      in.value = v;
      in.name = "in" + std::to_string(g.inputs.size());
      in.dtype = value(v).dtype;
      in.storage = v == a.mask ? *scalar_of(in.dtype) : storage;
      in.type = expr::ScalarType::kFloat32;
      in.access = InputAccess::kStrided;
      in.needs_int64 = true;
      g.inputs.push_back(std::move(in));
    }
    GroupStore store;
    store.value = a.out.value;
    store.name = "attention";
    store.dtype = a.dtype;
    store.storage = storage;
    g.stores.push_back(std::move(store));
    g.internal_values = internal_;
    std::sort(g.internal_values.begin(), g.internal_values.end());
    g.internal_values.erase(std::unique(g.internal_values.begin(), g.internal_values.end()), g.internal_values.end());
    g.has_expensive = true;  // exp
    for (uint32_t c : calls_) g.label += (g.label.empty() ? "" : "+") + p_.calls[c].op;
    g.attention = a;
    return g;
  }

  const LoweredProgram& p_;
  const std::vector<std::vector<uint32_t>>& readers_;
  const std::vector<bool>& is_output_;
  std::vector<uint32_t> calls_;
  std::vector<uint32_t> internal_;
  std::vector<std::pair<uint32_t, uint32_t>> reads_;  // (value the group reads, the member call that read it)
};

}  // namespace

std::vector<FusedGroup> plan_attention_groups(const LoweredProgram& program,
                                              const std::vector<std::vector<uint32_t>>& readers,
                                              const std::vector<bool>& is_output) {
  std::vector<FusedGroup> out;
  AttentionMatcher matcher(program, readers, is_output);
  for (uint32_t c = 0; c < program.calls.size(); ++c) {
    if (program.calls[c].op != "softmax" || program.calls[c].inplace_twin) continue;
    if (std::optional<FusedGroup> g = matcher.match(c)) out.push_back(std::move(*g));
  }
  return out;
}

}  // namespace kforge::passes::fusion_detail
