// The CUDA kernels of fused groups (cuda_kernels.h): the GroupEmitter's launcher parameters and arguments,
// vectorization, strided offsets and the elementwise kernels; the row kernels are in cuda_kernels_rows.cpp.
#include "codegen/cuda_kernels.h"

#include "codegen/cuda_group_emitter.h"

namespace kforge::codegen {

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

namespace cuda_kernels_internal {

namespace {

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


// The names of the launcher's shape parameters: the group's dim k, and stride k of strided input or store `name`.
std::string dim_param(size_t k) { return "dim" + std::to_string(k); }
std::string stride_param(const std::string& name, size_t k) { return name + "_stride" + std::to_string(k); }

}  // namespace

std::optional<CudaGroupCode> GroupEmitter::emit() {
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

void GroupEmitter::error(const std::string& message) {
  failed_ = true;
  const SourceLoc loc = g_.calls.empty() ? SourceLoc{} : p_.calls[g_.calls.front()].loc;
  diags_.error(loc, "--target cuda: fused group " + std::to_string(g_.index) + " (" + g_.label + "): " + message);
}

std::string GroupEmitter::type_of(expr::ScalarType t) {
  std::optional<std::string> name = cuda_scalar_type(t);
  if (!name) {
    error("dtype " + std::string(expr::cpp_type_name(t)) + " has no CUDA fused kernel yet");
    return "float";
  }
  return *name;
}

std::string GroupEmitter::load_as(expr::ScalarType storage, expr::ScalarType compute, const std::string& text) {
  if (!is_cuda_half(storage)) return fmt::format("static_cast<{}>({})", type_of(compute), text);
  const std::string f = "kforge::cuda::to_float(" + text + ")";
  return compute == expr::ScalarType::kFloat32 ? f : fmt::format("static_cast<{}>({})", type_of(compute), f);
}

std::string GroupEmitter::store_as(expr::ScalarType storage, const std::string& text) {
  if (!is_cuda_half(storage)) return fmt::format("static_cast<{}>({})", type_of(storage), text);
  return fmt::format("kforge::cuda::from_float<{}>({})", type_of(storage), text);
}

bool GroupEmitter::check() {
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

std::string GroupEmitter::params(bool with_stream) {
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

std::string GroupEmitter::args() const {
  std::string text;
  for (const GroupInput& in : g_.inputs) text += in.name + ", ";
  for (const GroupStore& st : g_.stores) text += store_param(st) + ", ";
  text += "outer, inner";
  for (const CudaShapeParam& sp : shape_params_) text += ", " + sp.name;
  return text;
}

int GroupEmitter::vector_width() const {
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

std::string GroupEmitter::aligned_condition(int vec, bool needs_inner_multiple) {
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

std::string GroupEmitter::strided_offset(const std::string& name, const std::vector<SymExpr>& strides, const std::string& flat,
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

std::string GroupEmitter::stmt_text(const GroupStmt& s, const std::function<std::string(std::string_view)>& rename) {
  return group_stmt_text(s, expr::EmitTarget::kCuda, rename);
}

std::string GroupEmitter::elementwise_body(const std::string& index_type) {
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

std::string GroupEmitter::elementwise_kernel() {
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

}  // namespace cuda_kernels_internal

std::vector<CudaShapeParam> cuda_group_shape_params(const passes::FusedGroup& group) {
  std::vector<CudaShapeParam> out;
  bool strided = false;
  for (const GroupInput& in : group.inputs) strided |= in.access == InputAccess::kStrided;
  for (const GroupStore& st : group.stores) strided |= !st.strides.empty();
  if (!strided) return out;
  // The offset divides the flat index by every dim but the first.
  for (size_t k = 1; k < group.shape.size(); ++k) {
    if (!group.shape[k].is_constant()) out.push_back({cuda_kernels_internal::dim_param(k), group.shape[k]});
  }
  for (const GroupInput& in : group.inputs) {
    if (in.access != InputAccess::kStrided) continue;
    for (size_t k = 0; k < in.strides.size(); ++k) {
      if (!in.strides[k].is_constant()) out.push_back({cuda_kernels_internal::stride_param(in.name, k), in.strides[k]});
    }
  }
  for (const GroupStore& st : group.stores) {
    for (size_t k = 0; k < st.strides.size(); ++k) {
      if (!st.strides[k].is_constant()) {
        out.push_back({cuda_kernels_internal::stride_param(cuda_kernels_internal::store_param(st), k), st.strides[k]});
      }
    }
  }
  return out;
}

std::optional<CudaGroupCode> emit_cuda_group(const passes::LoweredProgram& program, const FusedGroup& group,
                                             const std::string& prefix, const passes::MultiKernelSite* site,
                                             DiagnosticEngine& diags) {
  return cuda_kernels_internal::GroupEmitter(program, group, prefix, site, diags).emit();
}

}  // namespace kforge::codegen