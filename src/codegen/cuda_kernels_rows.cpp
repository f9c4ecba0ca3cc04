// The CUDA row kernels (cuda_group_emitter.h): a row group's passes over each row (cached in shared memory or
// registers where it fits), its row patterns (softmax, norms), the loops and the body, and the launcher that picks
// among a row group's variants.
#include "codegen/cuda_group_emitter.h"

namespace kforge::codegen::cuda_kernels_internal {

namespace {

using ascii::is_ident_char;

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

}  // namespace

bool GroupEmitter::in_pass(const GroupStmt& s, uint32_t pass) {
  if (s.passes.empty()) return pass == 0;
  if (s.kind == StmtKind::kRowPattern) return pass >= s.passes.front() && pass <= s.passes.back();
  return std::find(s.passes.begin(), s.passes.end(), pass) != s.passes.end();
}

std::function<std::string(std::string_view)> GroupEmitter::row_rename(bool cached) {
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

GroupEmitter::PatternMath GroupEmitter::math_for(const GroupStmt& s) {
  if (s.type == expr::ScalarType::kFloat64) return {"double", "exp", "fmax", "rsqrt", "-HUGE_VAL", "0.0"};
  if (s.type != expr::ScalarType::kFloat32) error("a row pattern computes in float32 or float64 only");
  return {"float", "expf", "fmaxf", "rsqrtf", "-HUGE_VALF", "0.0f"};
}

std::string GroupEmitter::operand(const GroupStmt& s, const std::string& arg) {
  for (const passes::RowPatternOperand& o : s.operands) {
    if (o.arg == arg) return o.name;
  }
  return "";
}

GroupEmitter::PassText GroupEmitter::row_pass(uint32_t pass, bool cached, std::set<std::string>& post_names) {
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

void GroupEmitter::row_pattern(const GroupStmt& s, uint32_t piece, const std::function<std::string(std::string_view)>& rename,
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

std::string GroupEmitter::row_loop(const PassText& t, uint32_t pass, bool cached) {
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

std::string GroupEmitter::row_body(bool cached) {
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

std::string GroupEmitter::row_kernel() {
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

bool GroupEmitter::row_needs_inner() const {
  bool needs_inner = false;
  for (const GroupStore& st : g_.stores) needs_inner |= !st.per_row;
  for (const GroupInput& in : g_.inputs) {
    needs_inner |= in.access == InputAccess::kContiguous || in.access == InputAccess::kInner;
  }
  return needs_inner;
}

std::string GroupEmitter::row_variant_launcher() {
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

}  // namespace kforge::codegen::cuda_kernels_internal
