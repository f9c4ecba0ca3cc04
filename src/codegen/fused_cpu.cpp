#include "codegen/fused_cpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "codegen/cpp_text.h"
#include "codegen/group_text.h"
#include "support/text.h"

namespace kforge::codegen {

namespace {

using passes::FusedGroup;
using passes::GroupInput;
using passes::GroupStmt;
using passes::InputAccess;
using passes::StmtKind;
using passes::SymExpr;
using tmpl::List;
using tmpl::Value;

std::string ctype(expr::ScalarType t) { return std::string(expr::cpp_type_name(expr::compute_type(t))); }

std::string pointer_name(const std::string& local) { return "p_" + local; }

// The statements of a loop body, as fused_cpu.j2's `statement` macro spells them (fused_cpu.h, "Statements"):
// code names the types, names and expressions, the template the declarations, operators and semicolons.

/// `[[maybe_unused]] const <type> <name> = <value>` (`is_const`, `unused` choose the qualifiers).
Value let(const std::string& type, const std::string& name, const std::string& value, bool is_const = true,
          bool unused = false) {
  Value s = Value::map();
  s.set("kind", "let");
  s.set("type", type);
  s.set("name", name);
  s.set("value", value);
  s.set("const", is_const);
  s.set("unused", unused);
  return s;
}

/// `<target> <op> <value>`: an assignment ("="), or a compound one ("+=", "*=", "/=").
Value assign(const std::string& target, const std::string& op, const std::string& value) {
  Value s = Value::map();
  s.set("kind", "assign");
  s.set("target", target);
  s.set("op", op);
  s.set("value", value);
  return s;
}

/// A statement of another kind, with its text fields: "walk" {rest, at} (a strided walk's two index variables,
/// `rest` = base + j and `at` = 0), "buffer" {type, name} (a vector of a row's `inner` elements).
Value statement(const std::string& kind, std::initializer_list<std::pair<const char*, std::string>> fields) {
  Value s = Value::map();
  s.set("kind", kind);
  for (const auto& [key, text] : fields) s.set(key, text);
  return s;
}

/// One line of a body: its statements, printed one after the other.
using Line = List;
Line line(Value s) { return Line{std::move(s)}; }

/// The statements of one group's function body.
class FusedWriter {
 public:
  FusedWriter(const FusedGroup& g, SizeParams& sizes) : g_(g), sizes_(sizes) {
    passes_.resize(g.num_passes);
  }

  Value build() {
    for (const GroupInput& in : g_.inputs) inputs_[in.name] = &in;
    setup_.push_back(line(let("index_t", "outer", index(g_.outer))));
    setup_.push_back(line(let("index_t", "inner", index(g_.inner))));
    for (const GroupInput& in : g_.inputs) {
      if (in.access == InputAccess::kScalar) setup_.push_back(load(in));
      if (in.access == InputAccess::kOuter) row_setup_.push_back(load(in));
    }
    for (const GroupStmt& st : g_.stmts) add_stmt(st);
    for (const passes::GroupStore& s : g_.stores) {
      const std::string p = pointer_name(s.name);
      if (s.per_row) {
        row_end_.push_back(line(assign(p + "[i]", "=", s.name)));
      } else if (s.strides.empty()) {
        passes_[s.pass].stores.push_back(line(assign(p + "[base + j]", "=", s.name)));
      } else {
        Line l = strided_offset(p, s.strides);
        l.push_back(assign(p + "[" + p + "_at]", "=", s.name));
        passes_[s.pass].stores.push_back(std::move(l));
      }
    }
    Value v = Value::map();
    v.set("name", "fused_" + std::to_string(g_.index));
    v.set("index_type", g_.needs_int64 ? "int64_t" : "int32_t");
    List params;  // the sizes' parameters go first, once every line has named the sizes it uses
    for (const GroupInput& in : g_.inputs) {
      params.push_back(fmt::format("const {}* __restrict {}", ctype(in.storage), pointer_name(in.name)));
    }
    for (const passes::GroupStore& s : g_.stores) {
      params.push_back(fmt::format("{}* __restrict {}", ctype(s.storage), pointer_name(s.name)));
    }
    v.set("params", Value(std::move(params)));
    v.set("setup", Value(setup_));
    row_setup_.insert(row_setup_.begin(), line(let("index_t", "base", "i * inner", true, true)));
    v.set("row_setup", Value(row_setup_));
    List passes;
    for (Pass& p : passes_) {
      Value pv = Value::map();
      pv.set("pre", Value(p.pre));
      List body;
      for (const std::string& name : p.loads) body.push_back(load(*inputs_.at(name)));
      body.insert(body.end(), p.body.begin(), p.body.end());
      body.insert(body.end(), p.stores.begin(), p.stores.end());
      pv.set("body", Value(std::move(body)));
      pv.set("post", Value(p.post));
      pv.set("block", p.blocked ? kMathBlock : int64_t{0});
      passes.push_back(std::move(pv));
    }
    v.set("passes", Value(std::move(passes)));
    v.set("row_end", Value(row_end_));
    v.set("runtime_math", runtime_math_);
    v.set("vector_clones", !runtime_math_ && whole_avx2_vectors());
    return v;
  }

 private:
  struct Pass {
    List pre, body, post, stores;  // lines
    bool blocked = false;  // emitted in blocks of kMathBlock (fused_cpu.j2), see uses_runtime_math
    std::vector<std::string> loads;  // element inputs read in this pass, in first-use order
  };

  /// A size as an index_t expression.
  std::string index(const SymExpr& e) const { return "static_cast<index_t>(" + sizes_.text(e) + ")"; }

  Line load(const GroupInput& in) const {
    const std::string p = pointer_name(in.name);
    std::string at;
    switch (in.access) {
      case InputAccess::kContiguous: at = "base + j"; break;
      case InputAccess::kOuter: at = "i"; break;
      case InputAccess::kInner: at = "j"; break;
      case InputAccess::kScalar: at = "0"; break;
      case InputAccess::kStrided: {
        Line l = strided_offset(in.name, in.strides);
        l.push_back(let(ctype(in.type), in.name, p + "[" + in.name + "_at]"));
        return l;
      }
    }
    return line(let(ctype(in.type), in.name, p + "[" + at + "]"));
  }

  /// Statements declaring `<name>_at`: the row-major coordinates of flat element base + j dotted with `strides`
  /// (a strided input: a general broadcast or a transpose read through; a transpose stored through). Divisions
  /// are what costs here (with dynamic dims, a hardware division per step): consecutive dims of stride 0 (the
  /// broadcast dims) are skipped with one division by their product, nothing is divided once every dim left has
  /// stride 0, and the outermost coordinate needs no modulo (the flat index is below the element count).
  Line strided_offset(const std::string& name, const std::vector<SymExpr>& strides) const {
    const std::string rest = name + "_rest", at = name + "_at";
    Line text{statement("walk", {{"rest", rest}, {"at", at}})};
    size_t d = g_.shape.size();
    while (d > 0) {
      size_t outer = d;  // strides[outer - 1] is the next nonzero stride, if any
      while (outer > 0 && strides[outer - 1] == SymExpr(0)) --outer;
      if (outer == 0) break;  // only broadcast dims left
      if (outer < d) {        // skip the broadcast dims [outer, d)
        SymExpr skipped = 1;
        for (size_t k = outer; k < d; ++k) skipped *= g_.shape[k];
        text.push_back(assign(rest, "/=", index(skipped)));
      }
      d = outer - 1;  // the dim with a nonzero stride
      if (d == 0) {
        text.push_back(assign(at, "+=", fmt::format("{} * {}", rest, index(strides[d]))));
      } else {
        text.push_back(assign(at, "+=", fmt::format("{} % {} * {}", rest, index(g_.shape[d]), index(strides[d]))));
        text.push_back(assign(rest, "/=", index(g_.shape[d])));
      }
    }
    return text;
  }

  /// Marks an element input as read in pass `p`.
  void use(const std::string& name, uint32_t p) {
    auto it = inputs_.find(name);
    if (it == inputs_.end()) return;
    const InputAccess a = it->second->access;
    if (a == InputAccess::kScalar || a == InputAccess::kOuter) return;
    std::vector<std::string>& loads = passes_[p].loads;
    if (std::find(loads.begin(), loads.end(), name) == loads.end()) loads.push_back(name);
  }

  void add_stmt(const GroupStmt& st) {
    const std::string t = ctype(st.type);
    switch (st.kind) {
      case StmtKind::kElement:
      case StmtKind::kRowValue: {
        const bool math = expr::calls_runtime_math(*st.expr->root);
        std::string rhs = group_stmt_text(st, expr::EmitTarget::kCpp);
        if (st.expr->root->type != st.type) rhs = "static_cast<" + t + ">(" + rhs + ")";
        const Line l = line(let(t, st.name, rhs));
        const std::vector<std::string> names = expr::names_used(*st.expr->root, expr::NameKind::kInput);
        if (st.kind == StmtKind::kRowValue) {
          // Once per row, before the pass's loop (not blocked), yet it includes kforge_math.h all the same
          // (TimesNet's gelu of a row mean: GraphNet TimesNet_cls/subgraph_4 did not build).
          passes_[st.passes.front()].pre.push_back(l);
          runtime_math_ = runtime_math_ || math;
          return;
        }
        for (uint32_t p : st.passes) {
          for (const std::string& n : names) use(n, p);
          passes_[p].body.push_back(l);
          if (math) uses_runtime_math(p);
        }
        return;
      }
      case StmtKind::kReduce: {
        const expr::TypedReduction& r = *st.reduction;
        // A reduction's combine is an in-order accumulation, which does not vectorise: its pass is not blocked.
        runtime_math_ = runtime_math_ || expr::calls_runtime_math(*r.combine.root) ||
                        (r.finalize && expr::calls_runtime_math(*r.finalize->root));
        const std::string acc = "acc_" + st.name;
        const ReductionText text =
            group_reduction_text(st, expr::EmitTarget::kCpp, acc, st.source, st.source, "n_" + st.name);
        Pass& p = passes_[st.passes.front()];
        p.pre.push_back(line(let(std::string(expr::cpp_type_name(r.accumulator)), acc, text.init, false)));
        use(st.source, st.passes.front());
        p.body.push_back(line(assign(acc, "=", text.combine)));
        std::string value = acc;
        if (!text.finalize.empty()) {
          p.post.push_back(line(let("int64_t", "n_" + st.name, "static_cast<int64_t>(inner)", true, true)));
          value = text.finalize;
        }
        const expr::ScalarType result = r.finalize ? r.result : r.accumulator;
        p.post.push_back(line(let(t, st.name, result == st.type ? value : "static_cast<" + t + ">(" + value + ")")));
        return;
      }
      case StmtKind::kRowPattern:
        if (st.pattern == passes::RowPatternKind::kSoftmax) {
          softmax(st);
        } else {
          layer_norm(st);
        }
        return;
    }
  }

  std::string operand(const GroupStmt& st, std::string_view arg) const {
    for (const passes::RowPatternOperand& o : st.operands) {
      if (o.arg == arg) return o.name;
    }
    return "";
  }

  void softmax(const GroupStmt& st) {
    const std::string t = ctype(st.type), x = operand(st, "x");
    const uint32_t f = st.passes.front();
    const std::string mx = "max_" + st.name, sum = "sum_" + st.name;
    runtime_math_ = true;
    if (!st.exps_kept) {  // x evaluated in each of the three passes; the exps summed in their loop, which stays whole
      for (uint32_t k = 0; k < 3; ++k) use(x, f + k);
      passes_[f].pre.push_back(line(let(t, mx, fmt::format("-std::numeric_limits<{}>::infinity()", t), false)));
      passes_[f].body.push_back(line(assign(mx, "=", fmt::format("{} > {} ? {} : {}", x, mx, x, mx))));
      passes_[f + 1].pre.push_back(line(let(t, sum, t + "(0)", false)));
      const std::string exp = fmt::format("kforge::math::exp({} - {})", x, mx);
      passes_[f + 1].body.push_back(line(assign(sum, "+=", exp)));
      passes_[f + 2].body.push_back(line(let(t, st.name, exp + " / " + sum)));
      return;
    }
    // x evaluated once, into a row buffer; its max, then the exps in place and their sum, then the quotients.
    // The max and the sum are kforge_math.h's row_max / row_sum, whose order vectorises and is the kernel
    // library's softmax's, so the bits are the same as the unfused kernel's. Every pass runs whole blocks (the
    // -O2 cost model vectorises no loop that needs a scalar epilogue).
    use(x, f);
    for (uint32_t k = 0; k < 3; ++k) passes_[f + k].blocked = true;
    uses_runtime_math(f + 1);
    const std::string exps = "exps_" + st.name, row = exps + ".data()";
    setup_.push_back(line(statement("buffer", {{"type", t}, {"name", exps}})));
    passes_[f].body.push_back(line(assign(exps + "[j]", "=", x)));
    passes_[f].post.push_back(line(let(t, mx, fmt::format("kforge::math::row_max({}, inner)", row))));
    passes_[f + 1].body.push_back(line(assign(exps + "[j]", "=", fmt::format("kforge::math::exp({}[j] - {})", exps, mx))));
    passes_[f + 1].post.push_back(line(let(t, sum, fmt::format("kforge::math::row_sum({}, inner)", row))));
    passes_[f + 2].body.push_back(line(let(t, st.name, fmt::format("{}[j] / {}", exps, sum))));
  }

  void layer_norm(const GroupStmt& st) {
    const std::string t = ctype(st.type), x = operand(st, "x"), scale = operand(st, "scale"), bias = operand(st, "bias");
    const uint32_t f = st.passes.front();
    const std::string n = st.name, sum = "sum_" + n, mu = "mu_" + n, sq = "sq_" + n, d = "d_" + n, var = "var_" + n,
                      mean = "mean_" + n, inv_std = "inv_std_" + n;
    for (uint32_t k = 0; k < 3; ++k) use(x, f + k);
    if (!scale.empty()) use(scale, f + 2);
    if (!bias.empty()) use(bias, f + 2);
    const auto mean_of = [](const std::string& total) {
      return fmt::format("inner > 0 ? {} / static_cast<double>(inner) : 0.0", total);
    };
    passes_[f].pre.push_back(line(let("double", sum, "0.0", false)));
    passes_[f].body.push_back(line(assign(sum, "+=", fmt::format("static_cast<double>({})", x))));
    passes_[f].post.push_back(line(let("double", mu, mean_of(sum))));
    passes_[f + 1].pre.push_back(line(let("double", sq, "0.0", false)));
    passes_[f + 1].body.push_back(line(let("double", d, fmt::format("static_cast<double>({}) - {}", x, mu))));
    passes_[f + 1].body.push_back(line(assign(sq, "+=", d + " * " + d)));
    List& post = passes_[f + 1].post;
    post.push_back(line(let("double", var, mean_of(sq))));
    post.push_back(line(let(t, mean, fmt::format("static_cast<{}>({})", t, mu))));
    post.push_back(line(let(t, inv_std, fmt::format("static_cast<{}>(1.0 / std::sqrt({} + static_cast<double>({})))", t,
                                                    var, cpp_float(static_cast<float>(st.epsilon))))));
    for (const GroupStmt::ExtraOutput& e : st.extra_outputs) {
      if (e.value == passes::kNone) continue;
      if (e.output == "mean") post.push_back(line(let(t, e.name, mean)));
      if (e.output == "variance") post.push_back(line(let(t, e.name, fmt::format("static_cast<{}>({})", t, var))));
    }
    List& body = passes_[f + 2].body;
    body.push_back(line(let(t, n, fmt::format("({} - {}) * {}", x, mean, inv_std), false)));
    if (!scale.empty()) body.push_back(line(assign(n, "*=", scale)));
    if (!bias.empty()) body.push_back(line(assign(n, "+=", bias)));
  }

  // Pass p's body calls kforge_math.h: the group gets AVX2 clones, and the pass runs whole blocks of kMathBlock
  // elements, then the rest. A loop whose trip count is a constant multiple of the vector width vectorises
  // under GCC's -O2 cost model, which refuses any loop that needs a scalar epilogue (softmax over 18385 classes,
  // a dynamic inner size); the body, and so every element's bits, are the same in both loops.
  void uses_runtime_math(uint32_t p) {
    runtime_math_ = true;
    passes_[p].blocked = true;
  }

  static constexpr int64_t kMathBlock = 16;

  // A group without kforge_math.h calls gets AVX2 clones too (KFORGE_FUSED_CLONES) when its loops over j run a
  // constant multiple of 32 elements: whole vectors of any element type at AVX2's width, so GCC's -O2 cost model
  // vectorises the clone wherever it vectorises the baseline (SSE2) loop, at twice the width. Elsewhere the clone
  // could be scalar where SSE2 is not. (PP-OCRv5 rec's scale / hardswish / scale groups: 2.3 ms -> about 1 ms.)
  bool whole_avx2_vectors() const {
    const std::optional<int64_t> inner = g_.inner.constant();
    return inner && *inner > 0 && *inner % 32 == 0;
  }

  const FusedGroup& g_;
  bool runtime_math_ = false;  // the body calls kforge_math.h
  SizeParams& sizes_;
  std::map<std::string, const GroupInput*> inputs_;
  List setup_, row_setup_, row_end_;  // lines
  std::vector<Pass> passes_;
};

std::string element_type_of(expr::ScalarType t) { return ctype(t); }

}  // namespace

Value fused_group_function(const passes::LoweredProgram& program, const FusedGroup& group, SizeParams& sizes) {
  FusedWriter writer(group, sizes);
  Value v = writer.build();
  std::vector<std::string> calls;
  for (uint32_t c : group.calls) calls.push_back(std::to_string(c));
  // The shape for a reader, and outer x inner as the function names them.
  const std::string shape = comment_shape(group.shape);
  v.set("comment", fmt::format("Group {}: {} ({} loop over {} = {} x {}; calls {}).", group.index, group.label,
                               group.kind == passes::GroupKind::kRow ? "row" : "elementwise", shape,
                               sizes.text(group.outer), sizes.text(group.inner), join(calls, ", ")));
  List params;
  for (const std::string& p : sizes.params()) params.push_back("[[maybe_unused]] " + p);
  for (const Value& p : v.find("params")->as_list()) params.push_back(p);
  v.set("params", Value(std::move(params)));
  (void)program;
  return v;
}

Value fused_group_call(const passes::LoweredProgram& program, const FusedGroup& group, const SizeParams& sizes,
                       const std::function<std::string(uint32_t)>& tensor_expr, const std::string& where,
                       bool trace_hooks) {
  const std::vector<std::string> size_args = sizes.args();
  List args(size_args.begin(), size_args.end());
  List traces;
  for (const GroupInput& in : group.inputs) {
    args.push_back(fmt::format("{}.data_as<const {}>()", tensor_expr(in.value), element_type_of(in.storage)));
  }
  for (const passes::GroupStore& s : group.stores) {
    args.push_back(fmt::format("{}.data_as<{}>()", tensor_expr(s.value), element_type_of(s.storage)));
    if (trace_hooks) {
      const passes::LoweredValue& v = program.value(s.value);
      Value t = Value::map();
      t.set("key", v.source_id.empty() ? "v" + std::to_string(v.source.index) : v.source_id);
      t.set("expr", tensor_expr(s.value));
      traces.push_back(std::move(t));
    }
  }
  Value v = Value::map();
  v.set("fused", true);
  v.set("name", "fused_" + std::to_string(group.index));
  std::vector<std::string> ops;
  for (uint32_t c : group.calls) ops.push_back(program.calls[c].pir_name);
  v.set("comment", fmt::format("fused group {}: {} at {}", group.index, join(ops, ", "), where));
  v.set("args", Value(std::move(args)));
  v.set("traces", Value(std::move(traces)));
  return v;
}

}  // namespace kforge::codegen
