// The CUDA row kernels' context (cuda_group_emitter.h): a row group's passes over each row (cached in registers
// where it fits), its row patterns (softmax, norms), the loops and the body, and the variants of a multi-kernel
// row group; templates/program/cuda/group_kernels.j2's `rows` and `row_variants` spell them.
#include "codegen/cpp_text.h"
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

// Whether one of `texts` mentions `word`.
bool mentions(const std::vector<std::string>& texts, const std::string& word) {
  return std::any_of(texts.begin(), texts.end(), [&](const std::string& text) { return mentions(text, word); });
}

}  // namespace

bool GroupEmitter::in_pass(const GroupStmt& s, uint32_t pass) {
  if (s.passes.empty()) return pass == 0;
  if (s.kind == StmtKind::kRowPattern) return pass >= s.passes.front() && pass <= s.passes.back();
  return std::find(s.passes.begin(), s.passes.end(), pass) != s.passes.end();
}

std::function<std::string(std::string_view)> GroupEmitter::row_rename(bool cached) const {
  return [this, cached](std::string_view n) -> std::string {
    for (const GroupInput& in : g_.inputs) {
      if (in.name != n) continue;
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

// The plan (passes/cuda_plan_groups.cpp) has a row pattern compute in float32 or float64 only.
GroupEmitter::PatternMath GroupEmitter::math_for(const GroupStmt& s) {
  if (s.type == expr::ScalarType::kFloat64) return {"double", "exp", "fmax", "rsqrt", "-HUGE_VAL", "0.0"};
  return {"float", "expf", "fmaxf", "rsqrtf", "-HUGE_VALF", "0.0f"};
}

std::string GroupEmitter::operand(const GroupStmt& s, const std::string& arg) {
  for (const passes::RowPatternOperand& o : s.operands) {
    if (o.arg == arg) return o.name;
  }
  return "";
}

void GroupEmitter::add(RowPass& t, tmpl::List RowPass::*part, tmpl::Value s) {
  for (const char* key : {"name", "value"}) {
    std::string text = s.find(key)->as_string();
    if (part == &RowPass::body) t.body_texts.push_back(text);
    t.texts.push_back(std::move(text));
  }
  (t.*part).push_back(std::move(s));
}

GroupEmitter::RowPass GroupEmitter::row_pass(uint32_t pass, bool cached) const {
  RowPass t;
  auto rename = row_rename(cached);
  for (const GroupStmt& s : g_.stmts) {
    if (!in_pass(s, pass)) continue;
    const std::string type = type_of(s.type);
    switch (s.kind) {
      case StmtKind::kElement: add(t, &RowPass::body, stmt("let", type, s.name, stmt_text(s, rename))); break;
      case StmtKind::kRowValue:
        // passes = {p}: evaluated before pass p's loop, once every operand is final (as the CPU loops do).
        if (pass == first_pass(s)) add(t, &RowPass::before, stmt("let", type, s.name, stmt_text(s, rename)));
        break;
      case StmtKind::kReduce: {
        if (pass != first_pass(s) || !s.reduction) break;
        const std::string acc = "acc_" + s.name;
        const std::string acc_type = type_of(s.reduction->accumulator);
        const std::string element = rename(s.source);
        ReductionText r = group_reduction_text(s, expr::EmitTarget::kCuda, acc, element, "b", "inner");
        ReductionText m = group_reduction_text(s, expr::EmitTarget::kCuda, "a", element, "b", "inner");
        add(t, &RowPass::decls, stmt("var", acc_type, acc, r.init));
        add(t, &RowPass::body, stmt("set", "", acc, r.combine));
        add(t, &RowPass::after, stmt("reduce", acc_type, acc, m.merge));
        add(t, &RowPass::after,
            stmt("let", type, s.name, fmt::format("static_cast<{}>({})", type, r.finalize.empty() ? acc : r.finalize)));
        break;
      }
      case StmtKind::kRowPattern: row_pattern(s, pass - first_pass(s), rename, t); break;
    }
  }
  // Element stores of this pass: one vector per chunk; per-row stores after the reductions.
  for (const GroupStore& st : g_.stores) {
    if (st.pass != pass) continue;
    if (st.per_row) {
      add(t, &RowPass::after, stmt("row_store", "", store_param(st), store_as(st.storage, st.name)));
    } else {
      add(t, &RowPass::body, stmt("set", "", store_param(st) + "_v.v[v]", store_as(st.storage, st.name)));
    }
  }
  return t;
}

void GroupEmitter::row_pattern(const GroupStmt& s, uint32_t piece,
                               const std::function<std::string(std::string_view)>& rename, RowPass& t) const {
  const PatternMath m = math_for(s);
  const std::string x = rename(operand(s, "x"));
  const std::string id = s.name;
  auto extra = [&](const std::string& output, const std::string& value) {
    for (const GroupStmt::ExtraOutput& e : s.extra_outputs) {
      if (e.output == output && !e.name.empty()) add(t, &RowPass::after, stmt("let", m.t, e.name, value));
    }
  };
  const std::string one = m.t == "float" ? "1.0f" : "1.0";
  if (s.pattern == passes::RowPatternKind::kSoftmax) {
    if (piece == 0) {
      add(t, &RowPass::decls, stmt("var", m.t, "max_" + id, m.neg_inf));
      add(t, &RowPass::body, stmt("set", "", "max_" + id, fmt::format("{}(max_{}, {})", m.max, id, x)));
      add(t, &RowPass::after, stmt("reduce", m.t, "max_" + id, m.max + "(a, b)"));
    } else if (piece == 1) {
      add(t, &RowPass::decls, stmt("var", m.t, "sum_" + id, m.zero));
      add(t, &RowPass::body, stmt("add", "", "sum_" + id, fmt::format("{}({} - max_{})", m.exp, x, id)));
      add(t, &RowPass::after, stmt("reduce", m.t, "sum_" + id, "a + b"));
      add(t, &RowPass::after, stmt("let", m.t, "inv_" + id, fmt::format("{} / sum_{}", one, id)));
    } else {
      add(t, &RowPass::body, stmt("let", m.t, id, fmt::format("{}({} - max_{}) * inv_{}", m.exp, x, id, id)));
    }
    return;
  }
  // layer_norm: mean, then the variance around it (two passes: exact), then the normalized row.
  if (piece == 0) {
    add(t, &RowPass::decls, stmt("var", m.t, "sum_" + id, m.zero));
    add(t, &RowPass::body, stmt("add", "", "sum_" + id, x));
    add(t, &RowPass::after, stmt("reduce", m.t, "sum_" + id, "a + b"));
    add(t, &RowPass::after, stmt("let", m.t, "mean_" + id, fmt::format("sum_{} / static_cast<{}>(inner)", id, m.t)));
    extra("mean", "mean_" + id);
  } else if (piece == 1) {
    add(t, &RowPass::decls, stmt("var", m.t, "sq_" + id, m.zero));
    add(t, &RowPass::body, stmt("square", m.t, "sq_" + id, fmt::format("{} - mean_{}", x, id)));
    add(t, &RowPass::after, stmt("reduce", m.t, "sq_" + id, "a + b"));
    add(t, &RowPass::after, stmt("let", m.t, "var_" + id, fmt::format("sq_{} / static_cast<{}>(inner)", id, m.t)));
    add(t, &RowPass::after,
        stmt("let", m.t, "rstd_" + id,
             fmt::format("{} / sqrt(var_{} + static_cast<{}>({}))", one, id, m.t, cuda_device_digits(s.epsilon, m.t))));
    extra("variance", "var_" + id);
  } else {
    const std::string scale = operand(s, "scale"), bias = operand(s, "bias");
    std::string value = fmt::format("({} - mean_{}) * rstd_{}", x, id, id);
    if (!scale.empty()) value = fmt::format("({}) * {}", value, rename(scale));
    if (!bias.empty()) value = fmt::format("{} + {}", value, rename(bias));
    add(t, &RowPass::body, stmt("let", m.t, id, value));
  }
}

tmpl::Value GroupEmitter::row_loop(const RowPass& t, uint32_t pass, bool cached) const {
  tmpl::List loads, stores;
  for (const GroupInput& in : g_.inputs) {
    const bool contiguous = in.access == InputAccess::kContiguous;
    if (!(in.access == InputAccess::kInner || (contiguous && !cached))) continue;
    if (!mentions(t.body_texts, in.name + "_l")) continue;
    tmpl::Value l = tmpl::Value::map();
    l.set("type", type_of(in.storage));
    l.set("name", in.name);
    l.set("at", contiguous ? "base + j0" : "j0");
    loads.push_back(std::move(l));
  }
  for (const GroupStore& st : g_.stores) {
    if (st.per_row || st.pass != pass) continue;
    tmpl::Value v = tmpl::Value::map();
    v.set("type", type_of(st.storage));
    v.set("param", store_param(st));
    stores.push_back(std::move(v));
  }
  tmpl::Value loop = tmpl::Value::map();
  loop.set("loads", tmpl::Value(std::move(loads)));
  loop.set("stores", tmpl::Value(std::move(stores)));
  loop.set("body", tmpl::Value(t.body));
  return loop;
}

tmpl::Value GroupEmitter::row_body(bool cached, bool& uses_base) const {
  tmpl::List arrays, passes;
  if (cached) {
    for (const GroupInput& in : g_.inputs) {
      if (in.access != InputAccess::kContiguous) continue;
      tmpl::Value a = tmpl::Value::map();
      a.set("type", type_of(in.storage));
      a.set("name", in.name);
      arrays.push_back(std::move(a));
      uses_base = true;  // read at base + j0
    }
  }
  for (uint32_t pass = 0; pass < std::max<uint32_t>(1, g_.num_passes); ++pass) {
    RowPass t = row_pass(pass, cached);
    for (const std::string& text : t.texts) uses_base |= mentions(text, "base");
    tmpl::Value p = tmpl::Value::map();
    p.set("index", static_cast<int64_t>(pass));
    p.set("before", tmpl::Value(t.before));
    p.set("decls", tmpl::Value(t.decls));
    p.set("after", tmpl::Value(t.after));
    if (t.body.empty()) {
      p.set("loop", false);
    } else {
      tmpl::Value loop = row_loop(t, pass, cached);
      // The loop's contiguous loads and element stores are at base + j0.
      for (const tmpl::Value& l : loop.find("loads")->as_list()) uses_base |= l.find("at")->as_string() != "j0";
      uses_base |= !loop.find("stores")->as_list().empty();
      p.set("loop", std::move(loop));
    }
    passes.push_back(std::move(p));
  }
  tmpl::Value b = tmpl::Value::map();
  b.set("arrays", tmpl::Value(std::move(arrays)));
  b.set("passes", tmpl::Value(std::move(passes)));
  return b;
}

void GroupEmitter::add_rows(tmpl::Value& k) const {
  tmpl::List row_values;
  for (const GroupInput& in : g_.inputs) {
    const std::string ct = type_of(in.type);
    if (in.access == InputAccess::kOuter) {
      row_values.push_back(stmt("let", ct, in.name + "_o", load_as(in.storage, in.type, in.name + "[row]")));
    } else if (in.access == InputAccess::kScalar) {
      row_values.push_back(stmt("let", ct, in.name + "_s", load_as(in.storage, in.type, in.name + "[0]")));
    }
  }
  bool uses_base = false;
  k.set("row_values", tmpl::Value(std::move(row_values)));
  k.set("cached", row_body(true, uses_base));
  k.set("looped", row_body(false, uses_base));
  k.set("uses_base", uses_base);
  k.set("site", site_ != nullptr ? row_site() : tmpl::Value(false));
}

bool GroupEmitter::row_needs_inner() const {
  bool needs_inner = false;
  for (const GroupStore& st : g_.stores) needs_inner |= !st.per_row;
  for (const GroupInput& in : g_.inputs) {
    needs_inner |= in.access == InputAccess::kContiguous || in.access == InputAccess::kInner;
  }
  return needs_inner;
}

tmpl::Value GroupEmitter::row_site() const {
  tmpl::List variants;
  for (size_t i = 0; i < site_->variants.size(); ++i) {
    const passes::KernelVariant& v = site_->variants[i];
    tmpl::Value variant = tmpl::Value::map();
    variant.set("index", static_cast<int64_t>(i));
    variant.set("name", v.name);
    // plan_cuda_row_variants makes row variants only.
    variant.set("kind", v.kind == passes::VariantKind::kCudaRowRegisters ? "registers"
                        : v.kind == passes::VariantKind::kCudaRowLooped  ? "looped"
                                                                         : "auto");
    variant.set("team", static_cast<int64_t>(v.team));
    variant.set("regs", static_cast<int64_t>(v.regs));
    variants.push_back(std::move(variant));
  }
  tmpl::Value site = tmpl::Value::map();
  site.set("name", site_->name);
  site.set("variants", tmpl::Value(std::move(variants)));
  return site;
}

}  // namespace kforge::codegen::cuda_kernels_internal
