// The CUDA kernels of fused groups (cuda_kernels.h): the GroupEmitter's launcher parameters, vectorization,
// strided offsets and the elementwise kernels' context; the row kernels' are in cuda_kernels_rows.cpp. The
// kernels' text is templates/program/cuda/group_kernels.j2's.
#include "codegen/cuda_kernels.h"

#include "codegen/cuda_group_emitter.h"

#include <fmt/ranges.h>

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

CudaGroupCode GroupEmitter::emit() {
  const bool rows = g_.kind == passes::GroupKind::kRow;
  CudaGroupCode code;
  code.launcher = name_;
  code.vector_width = vector_width();
  if (site_ != nullptr && rows) code.variant_launcher = name_ + "_variant";
  bool needs_inner = false;
  if (rows) {
    needs_inner = row_needs_inner();
  } else {
    for (const GroupInput& in : g_.inputs) {
      needs_inner |= in.access == InputAccess::kInner || in.access == InputAccess::kOuter;
    }
  }
  code.kernels = launcher_context(needs_inner);
  if (rows) {
    add_rows(code.kernels);
  } else {
    add_elementwise(code.kernels);
  }
  return code;
}

std::string GroupEmitter::type_of(expr::ScalarType t) { return cuda_scalar_type(t).value_or("float"); }

std::string GroupEmitter::load_as(expr::ScalarType storage, expr::ScalarType compute, const std::string& text) {
  if (!is_cuda_half(storage)) return fmt::format("static_cast<{}>({})", type_of(compute), text);
  const std::string f = "kforge::cuda::to_float(" + text + ")";
  return compute == expr::ScalarType::kFloat32 ? f : fmt::format("static_cast<{}>({})", type_of(compute), f);
}

std::string GroupEmitter::store_as(expr::ScalarType storage, const std::string& text) {
  if (!is_cuda_half(storage)) return fmt::format("static_cast<{}>({})", type_of(storage), text);
  return fmt::format("kforge::cuda::from_float<{}>({})", type_of(storage), text);
}

tmpl::Value GroupEmitter::launcher_context(bool needs_inner) const {
  tmpl::Value k = tmpl::Value::map();
  k.set("name", name_);
  k.set("index", static_cast<int64_t>(g_.index));
  k.set("label", g_.label);
  k.set("rows", g_.kind == passes::GroupKind::kRow);
  tmpl::Value comment = tmpl::Value::map();
  comment.set("shape", comment_shape(g_.shape));
  comment.set("outer", comment_size(g_.outer));
  comment.set("inner", comment_size(g_.inner));
  k.set("comment", std::move(comment));
  const int vec = vector_width();
  tmpl::List inputs, stores, shape_params, aligned;
  auto align = [&](const std::string& name, expr::ScalarType storage) {
    tmpl::Value a = tmpl::Value::map();
    a.set("name", name);
    a.set("bytes", static_cast<int64_t>(scalar_size(storage) * static_cast<size_t>(vec)));
    aligned.push_back(std::move(a));
  };
  for (const GroupInput& in : g_.inputs) {
    tmpl::Value v = tmpl::Value::map();
    v.set("type", type_of(in.storage));
    v.set("name", in.name);
    inputs.push_back(std::move(v));
    if (in.access == InputAccess::kContiguous || in.access == InputAccess::kInner) align(in.name, in.storage);
  }
  for (const GroupStore& st : g_.stores) {
    tmpl::Value v = tmpl::Value::map();
    v.set("type", type_of(st.storage));
    v.set("param", store_param(st));
    stores.push_back(std::move(v));
  }
  for (const GroupStore& st : g_.stores) {
    if (!st.per_row && st.strides.empty()) align(store_param(st), st.storage);
  }
  for (const CudaShapeParam& sp : shape_params_) shape_params.push_back(sp.name);
  k.set("inputs", tmpl::Value(std::move(inputs)));
  k.set("stores", tmpl::Value(std::move(stores)));
  k.set("shape_params", tmpl::Value(std::move(shape_params)));
  k.set("vec", static_cast<int64_t>(vec));
  k.set("needs_inner", needs_inner);
  k.set("aligned", tmpl::Value(std::move(aligned)));
  return k;
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

std::string GroupEmitter::strided_offset(const std::string& name, const std::vector<SymExpr>& strides,
                                         const std::string& flat, const std::string& index_type) const {
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
      std::vector<std::string> factors;
      if (known != 1 || unknown.empty()) factors.push_back(std::to_string(known));
      factors.insert(factors.end(), unknown.begin(), unknown.end());
      const std::string divisor = fmt::format("{}", fmt::join(factors, " * "));
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
  std::reverse(terms.begin(), terms.end());
  return fmt::format("({})", fmt::join(terms, " + "));
}

std::string GroupEmitter::stmt_text(const GroupStmt& s, const std::function<std::string(std::string_view)>& rename) {
  return group_stmt_text(s, expr::EmitTarget::kCuda, rename);
}

void GroupEmitter::add_elementwise(tmpl::Value& k) const {
  const std::string index_type = g_.needs_int64 ? "int64_t" : "int32_t";
  k.set("index_type", index_type);
  tmpl::List scalars, pre, vector_stores, stmts, store_stmts;
  bool uses_j = false, uses_i = false;
  for (const GroupInput& in : g_.inputs) {
    uses_j |= in.access == InputAccess::kInner;
    uses_i |= in.access == InputAccess::kOuter;
    if (in.access == InputAccess::kScalar) {
      scalars.push_back(stmt("let", type_of(in.type), in.name + "_s", load_as(in.storage, in.type, in.name + "[0]")));
    }
  }
  auto index_stmt = [&](const char* name, const char* value) {
    tmpl::Value s = stmt("let", index_type, name, value);
    s.set("vector", false);
    pre.push_back(std::move(s));
  };
  if (uses_j) index_stmt("j", "idx % ninner");
  if (uses_i) index_stmt("i", "idx / ninner");
  std::map<std::string, std::string, std::less<>> names;
  for (const GroupInput& in : g_.inputs) {
    switch (in.access) {
      case InputAccess::kContiguous:
      case InputAccess::kInner: {
        tmpl::Value v = tmpl::Value::map();
        v.set("vector", true);
        v.set("type", type_of(in.storage));
        v.set("name", in.name);
        v.set("at", in.access == InputAccess::kInner ? "j" : "idx");
        pre.push_back(std::move(v));
        names[in.name] = load_as(in.storage, in.type, in.name + "_v.v[k]");
        break;
      }
      case InputAccess::kOuter: {
        tmpl::Value v = stmt("let", type_of(in.type), in.name + "_o", load_as(in.storage, in.type, in.name + "[i]"));
        v.set("vector", false);
        pre.push_back(std::move(v));
        names[in.name] = in.name + "_o";
        break;
      }
      case InputAccess::kScalar: names[in.name] = in.name + "_s"; break;
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
  // The fusion plan gives an elementwise group element statements only.
  for (const GroupStmt& s : g_.stmts) stmts.push_back(stmt("let", type_of(s.type), s.name, stmt_text(s, rename)));
  for (const GroupStore& st : g_.stores) {
    const std::string param = store_param(st);
    if (st.strides.empty()) {
      tmpl::Value v = tmpl::Value::map();
      v.set("type", type_of(st.storage));
      v.set("param", param);
      vector_stores.push_back(std::move(v));
      store_stmts.push_back(stmt("set", "", param + "_v.v[k]", store_as(st.storage, st.name)));
    } else {  // element by element, at its offsets
      store_stmts.push_back(stmt("set", "",
                            fmt::format("{}[{}]", param, strided_offset(param, st.strides, "idx + k", index_type)),
                            store_as(st.storage, st.name)));
    }
  }
  k.set("scalars", tmpl::Value(std::move(scalars)));
  k.set("pre", tmpl::Value(std::move(pre)));
  k.set("vector_stores", tmpl::Value(std::move(vector_stores)));
  k.set("stmts", tmpl::Value(std::move(stmts)));
  k.set("store_stmts", tmpl::Value(std::move(store_stmts)));
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

CudaGroupCode cuda_group_code(const FusedGroup& group, const std::string& prefix, const passes::MultiKernelSite* site) {
  return cuda_kernels_internal::GroupEmitter(group, prefix, site).emit();
}

}  // namespace kforge::codegen