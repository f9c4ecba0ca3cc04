#include "codegen/cuda_kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "codegen/cpp_text.h"
#include "codegen/size_table.h"
#include "codegen/group_text.h"
#include "support/ascii.h"

namespace kforge::codegen {

using passes::FusedGroup;
using passes::GroupInput;
using passes::GroupStmt;
using passes::GroupStore;
using passes::SymExpr;
using passes::InputAccess;
using passes::StmtKind;

bool is_cuda_half(expr::ScalarType type) {
  return type == expr::ScalarType::kFloat16 || type == expr::ScalarType::kBFloat16;
}

bool group_uses_half(const passes::FusedGroup& group) {
  for (const GroupInput& in : group.inputs) {
    if (is_cuda_half(in.storage)) return true;
  }
  for (const GroupStore& st : group.stores) {
    if (is_cuda_half(st.storage)) return true;
  }
  return false;
}

namespace {

using ascii::is_ident_char;

size_t scalar_size(expr::ScalarType type) {
  switch (type) {
    case expr::ScalarType::kBool: return 1;
    case expr::ScalarType::kFloat16:
    case expr::ScalarType::kBFloat16: return 2;
    case expr::ScalarType::kInt32:
    case expr::ScalarType::kFloat32: return 4;
    default: return 8;
  }
}


// `word` occurs in `text` as a whole identifier.
bool mentions(const std::string& text, const std::string& word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool left = at == 0 || !is_ident_char(text[at - 1]);
    const size_t end = at + word.size();
    const bool right = end >= text.size() || !is_ident_char(text[end]);
    if (left && right) return true;
  }
  return false;
}

std::string indent(const std::string& text, int spaces) {
  std::string out, pad(static_cast<size_t>(spaces), ' ');
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out += pad + text.substr(start, end - start);
    out += '\n';
    start = end + 1;
  }
  return out;
}

// The names of the launcher's shape parameters: the group's dim k, and stride k of strided input or store `name`.
std::string dim_param(size_t k) { return "dim" + std::to_string(k); }
std::string stride_param(const std::string& name, size_t k) { return name + "_stride" + std::to_string(k); }
std::string store_param(const GroupStore& st) { return "o_" + st.name; }

class GroupEmitter {
 public:
  GroupEmitter(const passes::LoweredProgram& program, const FusedGroup& group, std::string prefix,
               const passes::MultiKernelSite* site, DiagnosticEngine& diags)
      : p_(program),
        g_(group),
        name_(prefix + "fused_" + std::to_string(group.index)),
        site_(site),
        diags_(diags),
        shape_params_(cuda_group_shape_params(group)) {}

  std::optional<CudaGroupCode> emit() {
    if (!check()) return std::nullopt;
    CudaGroupCode code;
    code.launcher = name_;
    code.declaration = "cudaError_t " + name_ + "(" + params(true) + ");";
    code.kernels = fmt::format("// group {}: {} ({} over {} = {} x {})\n", g_.index, g_.label,
                               g_.kind == passes::GroupKind::kRow ? "rows" : "elementwise", comment_shape(g_.shape),
                               comment_size(g_.outer), comment_size(g_.inner));
    code.kernels += g_.kind == passes::GroupKind::kRow ? row_kernel() : elementwise_kernel();
    code.vector_width = vector_width();
    if (site_ != nullptr && g_.kind == passes::GroupKind::kRow) {
      code.variant_launcher = name_ + "_variant";
      code.variant_declaration = "cudaError_t " + code.variant_launcher + "(int variant, " + params(true) + ");";
      code.kernels += "\n" + row_variant_launcher();
    }
    if (failed_) return std::nullopt;
    return code;
  }

 private:
  void error(const std::string& message) {
    failed_ = true;
    const SourceLoc loc = g_.calls.empty() ? SourceLoc{} : p_.calls[g_.calls.front()].loc;
    diags_.error(loc, "--target cuda: fused group " + std::to_string(g_.index) + " (" + g_.label + "): " + message);
  }

  std::string type_of(expr::ScalarType t) {
    std::optional<std::string> name = cuda_scalar_type(t);
    if (!name) {
      error("dtype " + std::string(expr::cpp_type_name(t)) + " has no CUDA fused kernel yet");
      return "float";
    }
    return *name;
  }

  // A loaded storage value as compute type `compute`: a plain cast, except that 16-bit floats go through
  // kforge::cuda::to_float (kforge_half.cuh: their casts to bool or integers can be ambiguous).
  std::string load_as(expr::ScalarType storage, expr::ScalarType compute, const std::string& text) {
    if (!is_cuda_half(storage)) return fmt::format("static_cast<{}>({})", type_of(compute), text);
    const std::string f = "kforge::cuda::to_float(" + text + ")";
    return compute == expr::ScalarType::kFloat32 ? f : fmt::format("static_cast<{}>({})", type_of(compute), f);
  }
  // A computed value as storage type `storage`: a plain cast, or for 16-bit floats a conversion from float
  // rounded to nearest even (kforge::cuda::from_float).
  std::string store_as(expr::ScalarType storage, const std::string& text) {
    if (!is_cuda_half(storage)) return fmt::format("static_cast<{}>({})", type_of(storage), text);
    return fmt::format("kforge::cuda::from_float<{}>({})", type_of(storage), text);
  }

  bool check() {
    for (const GroupInput& in : g_.inputs) {
      type_of(in.storage);
      type_of(in.type);
      if (in.access == InputAccess::kStrided && g_.kind == passes::GroupKind::kRow && !shape_params_.empty() &&
          site_ != nullptr) {
        // The row launcher takes the shape parameters; the multi-kernel variants' RowArgs do not carry them.
        error("a broadcast input of a row group over dims known only at run time has no multi-kernel variants yet "
              "(compile without --multi-kernel-hints)");
      }
    }
    for (const GroupStmt& s : g_.stmts) {
      type_of(s.type);
      if (s.kind == StmtKind::kRowPattern && s.pattern != passes::RowPatternKind::kSoftmax &&
          s.pattern != passes::RowPatternKind::kLayerNorm) {
        error("this row pattern (rms_norm) has no CUDA kernel yet");
      }
    }
    for (const GroupStore& st : g_.stores) {
      type_of(st.storage);
      if (!st.strides.empty() && g_.kind != passes::GroupKind::kElementwise) {
        error("a row group stores no value at strided offsets (the fusion plan gives strided stores to elementwise groups only)");
      }
    }
    return !failed_;
  }

  std::string params(bool with_stream) {
    std::vector<std::string> out;
    for (const GroupInput& in : g_.inputs) out.push_back("const " + type_of(in.storage) + "* __restrict__ " + in.name);
    for (const GroupStore& st : g_.stores) out.push_back(type_of(st.storage) + "* __restrict__ " + store_param(st));
    out.push_back("int64_t outer");
    out.push_back("int64_t inner");
    for (const CudaShapeParam& sp : shape_params_) out.push_back("int64_t " + sp.name);
    if (with_stream) out.push_back("cudaStream_t stream");
    std::string text;
    for (size_t i = 0; i < out.size(); ++i) text += (i ? ", " : "") + out[i];
    return text;
  }

  std::string args() const {
    std::string text;
    for (const GroupInput& in : g_.inputs) text += in.name + ", ";
    for (const GroupStore& st : g_.stores) text += store_param(st) + ", ";
    text += "outer, inner";
    for (const CudaShapeParam& sp : shape_params_) text += ", " + sp.name;
    return text;
  }

  // Inputs and element stores accessed V at a time; the vector width makes their widest access 16 bytes.
  int vector_width() const {
    size_t widest = 1;
    for (const GroupInput& in : g_.inputs) {
      if (in.access == InputAccess::kContiguous || in.access == InputAccess::kInner) {
        widest = std::max(widest, scalar_size(in.storage));
      }
    }
    // A strided store (a transpose stored through) is element by element, but its width still bounds the
    // unrolled loop's registers.
    for (const GroupStore& st : g_.stores) {
      if (!st.per_row) widest = std::max(widest, scalar_size(st.storage));
    }
    return static_cast<int>(16 / widest);
  }

  // The launcher's check that the vector path is allowed: every vector-accessed pointer aligned.
  std::string aligned_condition(int vec, bool needs_inner_multiple) {
    std::string cond = fmt::format("kVec > 1");
    if (needs_inner_multiple) cond += " && inner % kVec == 0";
    for (const GroupInput& in : g_.inputs) {
      if (in.access == InputAccess::kContiguous || in.access == InputAccess::kInner) {
        cond += fmt::format(" && kforge::cuda::aligned_to({}, {})", in.name, scalar_size(in.storage) * vec);
      }
    }
    for (const GroupStore& st : g_.stores) {
      if (!st.per_row && st.strides.empty()) {
        cond += fmt::format(" && kforge::cuda::aligned_to({}, {})", store_param(st), scalar_size(st.storage) * vec);
      }
    }
    return cond;
  }

  // Offset of a strided input (a general broadcast, a transpose read through) or store (a transpose stored
  // through) `name` at flat element `flat`: the sum over its dims of
  // (flat / (the product of the dims after k)) % dim k * stride k, one plain expression (a lambda inside a 16-bit
  // load's conversion crashed nvcc 13's front end). Dims and strides known only at run time are the launcher's
  // shape parameters (cuda_group_shape_params), the others literals.
  std::string strided_offset(const std::string& name, const std::vector<SymExpr>& strides, const std::string& flat,
                             const std::string& index_type) {
    std::vector<std::string> terms;
    int64_t known = 1;                 // the product of the literal dims after k
    std::vector<std::string> unknown;  // and of the others
    for (size_t k = g_.shape.size(); k-- > 0;) {
      const std::optional<int64_t> stride = strides[k].constant();
      const std::string st = stride ? std::to_string(*stride) : fmt::format("static_cast<{}>({})", index_type,
                                                                              stride_param(name, k));
      const std::string dim = g_.shape[k].is_constant() ? std::to_string(*g_.shape[k].constant())
                                                        : fmt::format("static_cast<{}>({})", index_type, dim_param(k));
      if (stride != 0) {
        std::string divisor = known != 1 || unknown.empty() ? std::to_string(known) : "";
        for (const std::string& u : unknown) divisor += (divisor.empty() ? "" : " * ") + u;
        const std::string q = divisor == "1" ? "(" + flat + ")" : fmt::format("(({}) / ({}))", flat, divisor);
        terms.push_back(k == 0 ? fmt::format("{} * {}", q, st) : fmt::format("({} % {}) * {}", q, dim, st));
      }
      if (g_.shape[k].is_constant()) {
        known *= *g_.shape[k].constant();
      } else {
        unknown.push_back(dim);
      }
    }
    if (terms.empty()) return "0";
    std::string text;
    for (auto it = terms.rbegin(); it != terms.rend(); ++it) text += (text.empty() ? "" : " + ") + *it;
    return "(" + text + ")";
  }

  std::string stmt_text(const GroupStmt& s, const std::function<std::string(std::string_view)>& rename) {
    return group_stmt_text(s, expr::EmitTarget::kCuda, rename);
  }

  // ---------------------------------------------------------------------------------------------------
  // Elementwise groups
  // ---------------------------------------------------------------------------------------------------

  std::string elementwise_body(const std::string& index_type) {
    bool uses_j = false, uses_i = false;
    for (const GroupInput& in : g_.inputs) {
      uses_j |= in.access == InputAccess::kInner;
      uses_i |= in.access == InputAccess::kOuter;
    }
    std::string pre, loop, post;
    if (uses_j) pre += "const " + index_type + " j = idx % ninner;\n";
    if (uses_i) pre += "const " + index_type + " i = idx / ninner;\n";
    std::map<std::string, std::string, std::less<>> names;
    for (const GroupInput& in : g_.inputs) {
      const std::string t = type_of(in.storage), ct = type_of(in.type);
      switch (in.access) {
        case InputAccess::kContiguous:
        case InputAccess::kInner:
          pre += fmt::format("const kforge::cuda::Vec<{}, W> {}_v = kforge::cuda::load_vec<W>({} + {});\n", t, in.name,
                             in.name, in.access == InputAccess::kInner ? "j" : "idx");
          names[in.name] = load_as(in.storage, in.type, in.name + "_v.v[k]");
          break;
        case InputAccess::kOuter:
          pre += fmt::format("const {} {}_o = {};\n", ct, in.name, load_as(in.storage, in.type, in.name + "[i]"));
          names[in.name] = in.name + "_o";
          break;
        case InputAccess::kScalar:
          names[in.name] = in.name + "_s";
          break;
        case InputAccess::kStrided:
          names[in.name] = load_as(in.storage, in.type,
                                   fmt::format("{}[{}]", in.name, strided_offset(in.name, in.strides, "idx + k", index_type)));
          break;
      }
    }
    auto rename = [&](std::string_view n) -> std::string {
      auto it = names.find(n);
      return it == names.end() ? std::string(n) : it->second;
    };
    for (const GroupStore& st : g_.stores) {
      if (!st.strides.empty()) continue;  // element by element, at its offsets (below)
      pre += fmt::format("kforge::cuda::Vec<{}, W> {}_v;\n", type_of(st.storage), store_param(st));
      post += fmt::format("kforge::cuda::store_vec_streaming<W>({} + idx, {}_v);\n", store_param(st), store_param(st));
    }
    for (const GroupStmt& s : g_.stmts) {
      if (s.kind != StmtKind::kElement) {
        error("an elementwise group holds a row statement");
        continue;
      }
      loop += fmt::format("const {} {} = {};\n", type_of(s.type), s.name, stmt_text(s, rename));
    }
    for (const GroupStore& st : g_.stores) {
      if (st.strides.empty()) {
        loop += fmt::format("{}_v.v[k] = {};\n", store_param(st), store_as(st.storage, st.name));
      } else {
        loop += fmt::format("{}[{}] = {};\n", store_param(st),
                            strided_offset(store_param(st), st.strides, "idx + k", index_type),
                            store_as(st.storage, st.name));
      }
    }
    return pre + "#pragma unroll\nfor (int k = 0; k < W; ++k) {\n" + indent(loop, 2) + "}\n" + post;
  }

  std::string elementwise_kernel() {
    const std::string I = g_.needs_int64 ? "int64_t" : "int32_t";
    const int vec = vector_width();
    bool needs_inner = false;
    for (const GroupInput& in : g_.inputs) {
      needs_inner |= in.access == InputAccess::kInner || in.access == InputAccess::kOuter;
    }
    std::string scalars;
    for (const GroupInput& in : g_.inputs) {
      if (in.access == InputAccess::kScalar) {
        scalars += fmt::format("  const {} {}_s = {};\n", type_of(in.type), in.name,
                               load_as(in.storage, in.type, in.name + "[0]"));
      }
    }
    const std::string body = elementwise_body(I);
    std::string k;
    k += "template <int V>\n";
    k += fmt::format("__global__ void __launch_bounds__(256) {}_kernel({}) {{\n", name_, params(false));
    k += fmt::format("  using I = {};\n", I);
    k += "  const I n = static_cast<I>(outer * inner);\n";
    if (needs_inner) k += "  const I ninner = static_cast<I>(inner);\n";
    k += "  const I stride = static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x);\n";
    k += "  const I first = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x);\n";
    k += scalars;
    k += "  const I nvec = n / V;\n";
    k += "  for (I t = first; t < nvec; t += stride) {\n    const I idx = t * V;\n    constexpr int W = V;\n";
    k += indent(body, 4) + "  }\n";
    k += "  if constexpr (V > 1) {\n    const I idx = nvec * V + first;\n    if (idx < n) {\n      constexpr int W = 1;\n";
    k += indent(body, 6) + "    }\n  }\n}\n\n";
    k += fmt::format("cudaError_t {}({}) {{\n", name_, params(true));
    k += "  const int64_t n = outer * inner;\n  if (n <= 0) return cudaSuccess;\n";
    k += fmt::format("  constexpr int kVec = {};\n", vec);
    k += fmt::format("  if ({}) {{\n", aligned_condition(vec, needs_inner));
    k += fmt::format("    {}_kernel<kVec><<<kforge::cuda::grid_for(n / kVec, 256), 256, 0, stream>>>({});\n", name_, args());
    k += "  } else {\n";
    k += fmt::format("    {}_kernel<1><<<kforge::cuda::grid_for(n, 256), 256, 0, stream>>>({});\n", name_, args());
    k += "  }\n  return cudaGetLastError();\n}\n";
    return k;
  }

  // ---------------------------------------------------------------------------------------------------
  // Row groups
  // ---------------------------------------------------------------------------------------------------

  static bool in_pass(const GroupStmt& s, uint32_t pass) {
    if (s.passes.empty()) return pass == 0;
    if (s.kind == StmtKind::kRowPattern) return pass >= s.passes.front() && pass <= s.passes.back();
    return std::find(s.passes.begin(), s.passes.end(), pass) != s.passes.end();
  }
  static uint32_t first_pass(const GroupStmt& s) { return s.passes.empty() ? 0 : s.passes.front(); }

  // Element-level names inside a row loop (cached: registers [c][v]; looped: the chunk's vectors).
  std::function<std::string(std::string_view)> row_rename(bool cached) {
    return [this, cached](std::string_view n) -> std::string {
      for (const GroupInput& in : g_.inputs) {
        if (in.name != n) continue;
        const std::string ct = type_of(in.type);
        switch (in.access) {
          case InputAccess::kContiguous:
            return load_as(in.storage, in.type, in.name + (cached ? "_c[c][v]" : "_l.v[v]"));
          case InputAccess::kInner: return load_as(in.storage, in.type, in.name + "_l.v[v]");
          case InputAccess::kOuter: return in.name + "_o";
          case InputAccess::kScalar: return in.name + "_s";
          case InputAccess::kStrided:
            return load_as(in.storage, in.type,
                           fmt::format("{}[{}]", in.name, strided_offset(in.name, in.strides, "base + j0 + v", "int64_t")));
        }
      }
      return std::string(n);
    };
  }

  // Math names for a float or double pattern local.
  struct PatternMath {
    std::string t, exp, max, rsqrt, neg_inf, zero;
  };
  PatternMath math_for(const GroupStmt& s) {
    if (s.type == expr::ScalarType::kFloat64) return {"double", "exp", "fmax", "rsqrt", "-HUGE_VAL", "0.0"};
    if (s.type != expr::ScalarType::kFloat32) error("a row pattern computes in float32 or float64 only");
    return {"float", "expf", "fmaxf", "rsqrtf", "-HUGE_VALF", "0.0f"};
  }
  std::string operand(const GroupStmt& s, const std::string& arg) {
    for (const passes::RowPatternOperand& o : s.operands) {
      if (o.arg == arg) return o.name;
    }
    return "";
  }

  struct PassText {
    std::string before, decls, body, after;
  };

  // The text of pass `pass`: row values that can go before the loop, accumulator declarations, the body
  // (per element j0 + v), and the reductions/finalizations/row values/per-row stores after the loop.
  PassText row_pass(uint32_t pass, bool cached, std::set<std::string>& post_names) {
    PassText t;
    auto rename = row_rename(cached);
    auto merge_lambda = [](const std::string& type, const std::string& expr_text) {
      return fmt::format("[]({} a, {} b) {{ return {}; }}", type, type, expr_text);
    };
    for (const GroupStmt& s : g_.stmts) {
      if (!in_pass(s, pass)) continue;
      const std::string type = type_of(s.type);
      switch (s.kind) {
        case StmtKind::kElement:
          t.body += fmt::format("const {} {} = {};\n", type, s.name, stmt_text(s, rename));
          break;
        case StmtKind::kRowValue:
          // passes = {p}: evaluated before pass p's loop, once every operand is final (as the CPU loops do).
          if (pass == first_pass(s)) t.before += fmt::format("const {} {} = {};\n", type, s.name, stmt_text(s, rename));
          break;
        case StmtKind::kReduce: {
          if (pass != first_pass(s) || !s.reduction) break;
          const std::string acc = "acc_" + s.name;
          const std::string acc_type = type_of(s.reduction->accumulator);
          const std::string element = rename(s.source);
          ReductionText r = group_reduction_text(s, expr::EmitTarget::kCuda, acc, element, "b", "inner");
          ReductionText m = group_reduction_text(s, expr::EmitTarget::kCuda, "a", element, "b", "inner");
          t.decls += fmt::format("{} {} = {};\n", acc_type, acc, r.init);
          t.body += fmt::format("{} = {};\n", acc, r.combine);
          t.after += fmt::format("{} = kforge::cuda::team_reduce<TEAM>({}, {});\n", acc, acc, merge_lambda(acc_type, m.merge));
          t.after += fmt::format("const {} {} = static_cast<{}>({});\n", type, s.name, type,
                                 r.finalize.empty() ? acc : r.finalize);
          post_names.insert(s.name);
          break;
        }
        case StmtKind::kRowPattern: row_pattern(s, pass - first_pass(s), rename, t, post_names); break;
      }
    }
    // Element stores of this pass: one vector per chunk; per-row stores after the reductions.
    for (const GroupStore& st : g_.stores) {
      if (st.pass != pass) continue;
      if (st.per_row) {
        t.after += fmt::format("if (lane == 0) {}[row] = {};\n", store_param(st), store_as(st.storage, st.name));
      } else {
        t.body += fmt::format("{}_v.v[v] = {};\n", store_param(st), store_as(st.storage, st.name));
      }
    }
    return t;
  }

  void row_pattern(const GroupStmt& s, uint32_t piece, const std::function<std::string(std::string_view)>& rename,
                   PassText& t, std::set<std::string>& post_names) {
    const PatternMath m = math_for(s);
    const std::string x = rename(operand(s, "x"));
    const std::string id = s.name;
    auto sum = fmt::format("[]({} a, {} b) {{ return a + b; }}", m.t, m.t);
    auto extra = [&](const std::string& output, const std::string& text) {
      for (const GroupStmt::ExtraOutput& e : s.extra_outputs) {
        if (e.output == output && !e.name.empty()) {
          t.after += fmt::format("const {} {} = {};\n", m.t, e.name, text);
          post_names.insert(e.name);
        }
      }
    };
    if (s.pattern == passes::RowPatternKind::kSoftmax) {
      if (piece == 0) {
        t.decls += fmt::format("{} max_{} = {};\n", m.t, id, m.neg_inf);
        t.body += fmt::format("max_{} = {}(max_{}, {});\n", id, m.max, id, x);
        t.after += fmt::format("max_{} = kforge::cuda::team_reduce<TEAM>(max_{}, []({} a, {} b) {{ return {}(a, b); }});\n",
                               id, id, m.t, m.t, m.max);
        post_names.insert("max_" + id);
      } else if (piece == 1) {
        t.decls += fmt::format("{} sum_{} = {};\n", m.t, id, m.zero);
        t.body += fmt::format("sum_{} += {}({} - max_{});\n", id, m.exp, x, id);
        t.after += fmt::format("sum_{} = kforge::cuda::team_reduce<TEAM>(sum_{}, {});\n", id, id, sum);
        t.after += fmt::format("const {} inv_{} = {} / sum_{};\n", m.t, id, m.t == "float" ? "1.0f" : "1.0", id);
        post_names.insert("inv_" + id);
      } else {
        t.body += fmt::format("const {} {} = {}({} - max_{}) * inv_{};\n", m.t, id, m.exp, x, id, id);
      }
      return;
    }
    // layer_norm: mean, then the variance around it (two passes: exact), then the normalized row.
    const std::string one = m.t == "float" ? "1.0f" : "1.0";
    if (piece == 0) {
      t.decls += fmt::format("{} sum_{} = {};\n", m.t, id, m.zero);
      t.body += fmt::format("sum_{} += {};\n", id, x);
      t.after += fmt::format("sum_{} = kforge::cuda::team_reduce<TEAM>(sum_{}, {});\n", id, id, sum);
      t.after += fmt::format("const {} mean_{} = sum_{} / static_cast<{}>(inner);\n", m.t, id, id, m.t);
      post_names.insert("mean_" + id);
      extra("mean", "mean_" + id);
    } else if (piece == 1) {
      t.decls += fmt::format("{} sq_{} = {};\n", m.t, id, m.zero);
      t.body += fmt::format("{{ const {} d = {} - mean_{}; sq_{} += d * d; }}\n", m.t, x, id, id);
      t.after += fmt::format("sq_{} = kforge::cuda::team_reduce<TEAM>(sq_{}, {});\n", id, id, sum);
      t.after += fmt::format("const {} var_{} = sq_{} / static_cast<{}>(inner);\n", m.t, id, id, m.t);
      t.after += fmt::format("const {} rstd_{} = {} / sqrt(var_{} + static_cast<{}>({}));\n", m.t, id, one, id, m.t,
                             fmt::format("{:.17g}", s.epsilon));
      post_names.insert("var_" + id);
      post_names.insert("rstd_" + id);
      extra("variance", "var_" + id);
    } else {
      const std::string scale = operand(s, "scale"), bias = operand(s, "bias");
      std::string text = fmt::format("({} - mean_{}) * rstd_{}", x, id, id);
      if (!scale.empty()) text = "(" + text + ") * " + rename(scale);
      if (!bias.empty()) text += " + " + rename(bias);
      t.body += fmt::format("const {} {} = {};\n", m.t, id, text);
    }
  }

  std::string row_loop(const PassText& t, uint32_t pass, bool cached) {
    std::string loads, stores_decl, stores;
    for (const GroupInput& in : g_.inputs) {
      const bool contiguous = in.access == InputAccess::kContiguous;
      if (!(in.access == InputAccess::kInner || (contiguous && !cached))) continue;
      if (!mentions(t.body, in.name + "_l")) continue;
      loads += fmt::format("const kforge::cuda::Vec<{}, V> {}_l = kforge::cuda::load_vec<V>({} + {}j0);\n",
                           type_of(in.storage), in.name, in.name, contiguous ? "base + " : "");
    }
    for (const GroupStore& st : g_.stores) {
      if (st.per_row || st.pass != pass) continue;
      stores_decl += fmt::format("kforge::cuda::Vec<{}, V> {}_v;\n", type_of(st.storage), store_param(st));
      stores += fmt::format("kforge::cuda::store_vec<V>({} + base + j0, {}_v);\n", store_param(st), store_param(st));
    }
    const std::string inner = loads + stores_decl + "#pragma unroll\nfor (int v = 0; v < V; ++v) {\n" +
                              indent(t.body, 2) + "}\n" + stores;
    if (cached) {
      return "#pragma unroll\nfor (int c = 0; c < C; ++c) {\n"
             "  const int64_t j0 = (static_cast<int64_t>(c) * TEAM + lane) * V;\n"
             "  if (j0 < inner) {\n" + indent(inner, 4) + "  }\n}\n";
    }
    return "for (int64_t j0 = static_cast<int64_t>(lane) * V; j0 < inner; j0 += static_cast<int64_t>(TEAM) * V) {\n" +
           indent(inner, 2) + "}\n";
  }

  std::string row_body(bool cached) {
    std::string text;
    if (cached) {
      for (const GroupInput& in : g_.inputs) {
        if (in.access != InputAccess::kContiguous) continue;
        const std::string t = type_of(in.storage);
        text += fmt::format("{} {}_c[C][V];\n", t, in.name);
        text += fmt::format(
            "#pragma unroll\nfor (int c = 0; c < C; ++c) {{\n"
            "  const int64_t j0 = (static_cast<int64_t>(c) * TEAM + lane) * V;\n"
            "  const kforge::cuda::Vec<{0}, V> t = j0 < inner ? kforge::cuda::load_vec<V>({1} + base + j0) : "
            "kforge::cuda::Vec<{0}, V>{{}};\n"
            "#pragma unroll\n  for (int v = 0; v < V; ++v) {1}_c[c][v] = t.v[v];\n}}\n",
            t, in.name);
      }
    }
    std::set<std::string> post_names;
    for (uint32_t pass = 0; pass < std::max<uint32_t>(1, g_.num_passes); ++pass) {
      PassText t = row_pass(pass, cached, post_names);
      text += fmt::format("// pass {}\n", pass);
      text += t.before + t.decls;
      if (!t.body.empty()) text += row_loop(t, pass, cached);
      text += t.after;
    }
    return text;
  }

  std::string row_kernel() {
    const int vec = vector_width();
    std::string rowvals;
    for (const GroupInput& in : g_.inputs) {
      const std::string ct = type_of(in.type);
      if (in.access == InputAccess::kOuter) {
        rowvals += fmt::format("  const {} {}_o = {};\n", ct, in.name, load_as(in.storage, in.type, in.name + "[row]"));
      } else if (in.access == InputAccess::kScalar) {
        rowvals += fmt::format("  const {} {}_s = {};\n", ct, in.name, load_as(in.storage, in.type, in.name + "[0]"));
      }
    }
    const std::string cached = row_body(true), looped = row_body(false);
    std::string k;
    k += "template <int TEAM, int C, int V>\n";
    k += fmt::format("__global__ void __launch_bounds__(TEAM < 128 ? 128 : TEAM) {}_kernel({}) {{\n", name_, params(false));
    k += "  constexpr int kRowsPerBlock = TEAM < 128 ? 128 / TEAM : 1;\n";
    k += "  const int lane = static_cast<int>(threadIdx.x) % TEAM;\n";
    k += "  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + static_cast<int64_t>(threadIdx.x) / TEAM;\n";
    k += "  if (row >= outer) return;  // a whole team leaves together: no team_reduce is left waiting\n";
    const bool uses_base = mentions(cached, "base") || mentions(looped, "base");
    if (uses_base) k += "  const int64_t base = row * inner;\n";
    k += rowvals;
    k += "  if constexpr (C > 0) {  // the row fits in registers: every contiguous input is read once\n";
    k += indent(cached, 4);
    k += "  } else {  // long rows: every pass reads the row from memory (L2 keeps it between passes)\n";
    k += indent(looped, 4);
    k += "  }\n}\n\n";
    // One launch of the kernel for a team size, row cache and vector width: a warp-sized team shares a
    // block of 128 threads with three other rows; a larger team is the block.
    k += "template <int TEAM, int C, int V>\n";
    k += fmt::format("cudaError_t {}_launch({}) {{\n", name_, params(true));
    k += "  const unsigned rows = static_cast<unsigned>(outer);\n";
    k += "  if constexpr (TEAM < 128) {\n    constexpr unsigned kRowsPerBlock = 128 / TEAM;\n";
    k += fmt::format("    {}_kernel<TEAM, C, V><<<(rows + kRowsPerBlock - 1) / kRowsPerBlock, 128, 0, stream>>>({});\n",
                     name_, args());
    k += "  } else {\n";
    k += fmt::format("    {}_kernel<TEAM, C, V><<<rows, TEAM, 0, stream>>>({});\n", name_, args());
    k += "  }\n  return cudaGetLastError();\n}\n\n";
    // Launcher: the team size from the row length, V elements per access when aligned.
    const std::string call_args = args() + ", stream";
    k += fmt::format("cudaError_t {}({}) {{\n", name_, params(true));
    k += "  if (outer <= 0) return cudaSuccess;\n";
    k += fmt::format("  constexpr int kVec = {};\n", vec);
    k += fmt::format("  if ({}) {{\n", aligned_condition(vec, row_needs_inner()));
    k += fmt::format("    if (inner <= 32 * kVec * 4) return {}_launch<32, 4, kVec>({});\n", name_, call_args);
    for (int team : {128, 256, 512, 1024}) {
      k += fmt::format("    if (inner <= {0} * kVec * 4) return {1}_launch<{0}, 4, kVec>({2});\n", team, name_, call_args);
    }
    k += fmt::format("    return {}_launch<1024, 0, kVec>({});\n", name_, call_args);
    k += "  }\n";
    k += fmt::format("  if (inner <= 32 * 4) return {}_launch<32, 4, 1>({});\n", name_, call_args);
    k += fmt::format("  return {}_launch<256, 0, 1>({});\n}}\n", name_, call_args);
    return k;
  }

  bool row_needs_inner() const {
    bool needs_inner = false;
    for (const GroupStore& st : g_.stores) needs_inner |= !st.per_row;
    for (const GroupInput& in : g_.inputs) {
      needs_inner |= in.access == InputAccess::kContiguous || in.access == InputAccess::kInner;
    }
    return needs_inner;
  }

  // --multi-kernel-hints: the launcher of the site's variants (passes::plan_cuda_row_variants), by index in
  // the site's list. A register variant holds rows up to team x regs x kVec elements: longer rows are not
  // its to run (the dispatcher never calls it for them; cudaErrorInvalidValue if called anyway). Unaligned
  // pointers keep the capacity with V = 1 and regs x kVec scalars per thread.
  std::string row_variant_launcher() {
    const int vec = vector_width();
    const std::string call_args = args() + ", stream";
    std::string k = fmt::format("// The variants of the multi-kernel site {} (its dispatcher is in the host code), by index.\n",
                                site_->name);
    k += fmt::format("cudaError_t {}_variant(int variant, {}) {{\n", name_, params(true));
    k += "  if (outer <= 0) return cudaSuccess;\n";
    k += fmt::format("  constexpr int kVec = {};\n", vec);
    k += fmt::format("  const bool vectors = {};\n", aligned_condition(vec, row_needs_inner()));
    k += "  switch (variant) {\n";
    for (size_t i = 0; i < site_->variants.size(); ++i) {
      const passes::KernelVariant& v = site_->variants[i];
      k += fmt::format("    case {}:  // {}\n", i, v.name);
      switch (v.kind) {
        case passes::VariantKind::kCudaRowAuto: k += fmt::format("      return {}({});\n", name_, call_args); break;
        case passes::VariantKind::kCudaRowRegisters:
          k += fmt::format("      if (inner > {} * {} * kVec) return cudaErrorInvalidValue;\n", v.team, v.regs);
          k += fmt::format("      return vectors ? {0}_launch<{1}, {2}, kVec>({3}) : {0}_launch<{1}, {2} * kVec, 1>({3});\n",
                           name_, v.team, v.regs, call_args);
          break;
        case passes::VariantKind::kCudaRowLooped:
          k += fmt::format("      return vectors ? {0}_launch<{1}, 0, kVec>({2}) : {0}_launch<{1}, 0, 1>({2});\n", name_,
                           v.team, call_args);
          break;
        default: error("variant '" + v.name + "' is not a row variant"); break;
      }
    }
    k += "  }\n  return cudaErrorInvalidValue;\n}\n";
    return k;
  }

  const passes::LoweredProgram& p_;
  const FusedGroup& g_;
  std::string name_;
  const passes::MultiKernelSite* site_;
  DiagnosticEngine& diags_;
  const std::vector<CudaShapeParam> shape_params_;
  bool failed_ = false;
};

}  // namespace

std::vector<CudaShapeParam> cuda_group_shape_params(const passes::FusedGroup& group) {
  std::vector<CudaShapeParam> out;
  bool strided = false;
  for (const GroupInput& in : group.inputs) strided |= in.access == InputAccess::kStrided;
  for (const GroupStore& st : group.stores) strided |= !st.strides.empty();
  if (!strided) return out;
  // The offset divides the flat index by every dim but the first.
  for (size_t k = 1; k < group.shape.size(); ++k) {
    if (!group.shape[k].is_constant()) out.push_back({dim_param(k), group.shape[k]});
  }
  for (const GroupInput& in : group.inputs) {
    if (in.access != InputAccess::kStrided) continue;
    for (size_t k = 0; k < in.strides.size(); ++k) {
      if (!in.strides[k].is_constant()) out.push_back({stride_param(in.name, k), in.strides[k]});
    }
  }
  for (const GroupStore& st : group.stores) {
    for (size_t k = 0; k < st.strides.size(); ++k) {
      if (!st.strides[k].is_constant()) out.push_back({stride_param(store_param(st), k), st.strides[k]});
    }
  }
  return out;
}

std::optional<CudaGroupCode> emit_cuda_group(const passes::LoweredProgram& program, const FusedGroup& group,
                                             const std::string& prefix, const passes::MultiKernelSite* site,
                                             DiagnosticEngine& diags) {
  return GroupEmitter(program, group, prefix, site, diags).emit();
}

}  // namespace kforge::codegen
