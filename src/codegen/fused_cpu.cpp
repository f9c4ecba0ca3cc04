#include "codegen/fused_cpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "codegen/cpp_text.h"
#include "codegen/group_text.h"

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

/// Lines of one group's function body.
class FusedWriter {
 public:
  FusedWriter(const FusedGroup& g, SizeParams& sizes) : g_(g), sizes_(sizes) {
    passes_.resize(g.num_passes);
  }

  Value build() {
    for (const GroupInput& in : g_.inputs) inputs_[in.name] = &in;
    setup_.push_back(fmt::format("const index_t outer = static_cast<index_t>({});", sizes_.text(g_.outer)));
    setup_.push_back(fmt::format("const index_t inner = static_cast<index_t>({});", sizes_.text(g_.inner)));
    for (const GroupInput& in : g_.inputs) {
      if (in.access == InputAccess::kScalar) setup_.push_back(load(in));
      if (in.access == InputAccess::kOuter) row_setup_.push_back(load(in));
    }
    for (const GroupStmt& st : g_.stmts) add_stmt(st);
    for (const passes::GroupStore& s : g_.stores) {
      if (s.per_row) {
        row_end_.push_back(fmt::format("{}[i] = {};", pointer_name(s.name), s.name));
      } else {
        const std::string p = pointer_name(s.name);
        passes_[s.pass].stores.push_back(
            s.strides.empty() ? fmt::format("{}[base + j] = {};", p, s.name)
                              : strided_offset(p, s.strides) + fmt::format(" {}[{}_at] = {};", p, p, s.name));
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
    v.set("setup", lines(setup_));
    row_setup_.insert(row_setup_.begin(), "[[maybe_unused]] const index_t base = i * inner;");
    v.set("row_setup", lines(row_setup_));
    List passes;
    for (Pass& p : passes_) {
      Value pv = Value::map();
      pv.set("pre", lines(p.pre));
      std::vector<std::string> body;
      for (const std::string& name : p.loads) body.push_back(load(*inputs_.at(name)));
      body.insert(body.end(), p.body.begin(), p.body.end());
      body.insert(body.end(), p.stores.begin(), p.stores.end());
      pv.set("body", lines(body));
      pv.set("post", lines(p.post));
      pv.set("block", p.blocked ? kMathBlock : int64_t{0});
      passes.push_back(std::move(pv));
    }
    v.set("passes", Value(std::move(passes)));
    v.set("row_end", lines(row_end_));
    v.set("runtime_math", runtime_math_);
    return v;
  }

 private:
  struct Pass {
    std::vector<std::string> pre, body, post, stores;
    bool blocked = false;  // emitted in blocks of kMathBlock (fused_cpu.j2), see uses_runtime_math
    std::vector<std::string> loads;  // element inputs read in this pass, in first-use order
  };

  static Value lines(const std::vector<std::string>& ls) {
    List out;
    for (const std::string& l : ls) out.push_back(l);
    return Value(std::move(out));
  }

  std::string load(const GroupInput& in) const {
    const std::string p = pointer_name(in.name);
    std::string index;
    switch (in.access) {
      case InputAccess::kContiguous: index = "base + j"; break;
      case InputAccess::kOuter: index = "i"; break;
      case InputAccess::kInner: index = "j"; break;
      case InputAccess::kScalar: index = "0"; break;
      case InputAccess::kStrided:
        return strided_offset(in.name, in.strides) +
               fmt::format(" const {} {} = {}[{}_at];", ctype(in.type), in.name, p, in.name);
    }
    return fmt::format("const {} {} = {}[{}];", ctype(in.type), in.name, p, index);
  }

  /// Statements declaring `<name>_at`: the row-major coordinates of flat element base + j dotted with `strides`
  /// (a strided input: a general broadcast or a transpose read through; a transpose stored through). Divisions
  /// are what costs here (with dynamic dims, a hardware division per step): consecutive dims of stride 0 (the
  /// broadcast dims) are skipped with one division by their product, nothing is divided once every dim left has
  /// stride 0, and the outermost coordinate needs no modulo (the flat index is below the element count).
  std::string strided_offset(const std::string& name, const std::vector<SymExpr>& strides) const {
    const std::string rest = name + "_rest", at = name + "_at";
    std::string text = fmt::format("index_t {} = base + j, {} = 0;", rest, at);
    auto index = [&](const SymExpr& e) { return "static_cast<index_t>(" + sizes_.text(e) + ")"; };
    size_t d = g_.shape.size();
    while (d > 0) {
      size_t outer = d;  // strides[outer - 1] is the next nonzero stride, if any
      while (outer > 0 && strides[outer - 1] == SymExpr(0)) --outer;
      if (outer == 0) break;  // only broadcast dims left
      if (outer < d) {        // skip the broadcast dims [outer, d)
        SymExpr skipped = 1;
        for (size_t k = outer; k < d; ++k) skipped *= g_.shape[k];
        text += fmt::format(" {} /= {};", rest, index(skipped));
      }
      d = outer - 1;  // the dim with a nonzero stride
      if (d == 0) {
        text += fmt::format(" {} += {} * {};", at, rest, index(strides[d]));
      } else {
        text += fmt::format(" {} += {} % {} * {};", at, rest, index(g_.shape[d]), index(strides[d]));
        text += fmt::format(" {} /= {};", rest, index(g_.shape[d]));
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
        const std::string line = fmt::format("const {} {} = {};", t, st.name, rhs);
        const std::vector<std::string> names = expr::names_used(*st.expr->root, expr::NameKind::kInput);
        if (st.kind == StmtKind::kRowValue) {
          passes_[st.passes.front()].pre.push_back(line);
          return;
        }
        for (uint32_t p : st.passes) {
          for (const std::string& n : names) use(n, p);
          passes_[p].body.push_back(line);
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
        p.pre.push_back(fmt::format("{} {} = {};", expr::cpp_type_name(r.accumulator), acc, text.init));
        use(st.source, st.passes.front());
        p.body.push_back(fmt::format("{} = {};", acc, text.combine));
        std::string value = acc;
        if (!text.finalize.empty()) {
          p.post.push_back(fmt::format("[[maybe_unused]] const int64_t n_{} = static_cast<int64_t>(inner);", st.name));
          value = text.finalize;
        }
        const expr::ScalarType result = r.finalize ? r.result : r.accumulator;
        p.post.push_back(fmt::format("const {} {} = {};", t, st.name,
                                     result == st.type ? value : "static_cast<" + t + ">(" + value + ")"));
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
    if (st.exps_kept) {  // otherwise the exps are summed in their loop, which stays whole
      uses_runtime_math(f + 1);
      passes_[f + 2].blocked = true;  // the division, blocked as well for the -O2 cost model
    }
    for (uint32_t k = 0; k < (st.exps_kept ? 2u : 3u); ++k) use(x, f + k);
    passes_[f].pre.push_back(fmt::format("{} {} = -std::numeric_limits<{}>::infinity();", t, mx, t));
    passes_[f].body.push_back(fmt::format("{} = {} > {} ? {} : {};", mx, x, mx, x, mx));
    passes_[f + 1].pre.push_back(fmt::format("{} {} = {}(0);", t, sum, t));
    if (!st.exps_kept) {
      passes_[f + 1].body.push_back(fmt::format("{} += kforge::math::exp({} - {});", sum, x, mx));
      passes_[f + 2].body.push_back(fmt::format("const {} {} = kforge::math::exp({} - {}) / {};", t, st.name, x, mx, sum));
      return;
    }
    // The same exps, computed once: the normalising pass divides the kept ones (and vectorises, without a call).
    // The sum runs in a loop of its own after the exps' (in the same order, so the same bits): an in-order float
    // sum does not vectorise, and would keep the exps' loop from vectorising with it.
    const std::string exps = "exps_" + st.name;
    setup_.push_back(fmt::format("std::vector<{}> {}(static_cast<size_t>(inner));", t, exps));
    passes_[f + 1].body.push_back(fmt::format("{}[j] = kforge::math::exp({} - {});", exps, x, mx));
    passes_[f + 1].post.push_back(fmt::format("for (index_t j = 0; j < inner; ++j) {} += {}[j];", sum, exps));
    passes_[f + 2].body.push_back(fmt::format("const {} {} = {}[j] / {};", t, st.name, exps, sum));
  }

  void layer_norm(const GroupStmt& st) {
    const std::string t = ctype(st.type), x = operand(st, "x"), scale = operand(st, "scale"), bias = operand(st, "bias");
    const uint32_t f = st.passes.front();
    const std::string n = st.name;
    for (uint32_t k = 0; k < 3; ++k) use(x, f + k);
    if (!scale.empty()) use(scale, f + 2);
    if (!bias.empty()) use(bias, f + 2);
    passes_[f].pre.push_back(fmt::format("double sum_{} = 0.0;", n));
    passes_[f].body.push_back(fmt::format("sum_{} += static_cast<double>({});", n, x));
    passes_[f].post.push_back(
        fmt::format("const double mu_{0} = inner > 0 ? sum_{0} / static_cast<double>(inner) : 0.0;", n));
    passes_[f + 1].pre.push_back(fmt::format("double sq_{} = 0.0;", n));
    passes_[f + 1].body.push_back(fmt::format("const double d_{0} = static_cast<double>({1}) - mu_{0};", n, x));
    passes_[f + 1].body.push_back(fmt::format("sq_{0} += d_{0} * d_{0};", n));
    std::vector<std::string>& post = passes_[f + 1].post;
    post.push_back(fmt::format("const double var_{0} = inner > 0 ? sq_{0} / static_cast<double>(inner) : 0.0;", n));
    post.push_back(fmt::format("const {1} mean_{0} = static_cast<{1}>(mu_{0});", n, t));
    post.push_back(fmt::format("const {1} inv_std_{0} = static_cast<{1}>(1.0 / std::sqrt(var_{0} + static_cast<double>({2})));",
                               n, t, cpp_float(static_cast<float>(st.epsilon))));
    for (const GroupStmt::ExtraOutput& e : st.extra_outputs) {
      if (e.value == passes::kNone) continue;
      if (e.output == "mean") post.push_back(fmt::format("const {} {} = mean_{};", t, e.name, n));
      if (e.output == "variance") post.push_back(fmt::format("const {} {} = static_cast<{}>(var_{});", t, e.name, t, n));
    }
    std::vector<std::string>& body = passes_[f + 2].body;
    body.push_back(fmt::format("{1} {0} = ({2} - mean_{0}) * inv_std_{0};", n, t, x));
    if (!scale.empty()) body.push_back(fmt::format("{} *= {};", n, scale));
    if (!bias.empty()) body.push_back(fmt::format("{} += {};", n, bias));
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

  const FusedGroup& g_;
  bool runtime_math_ = false;  // the body calls kforge_math.h
  SizeParams& sizes_;
  std::map<std::string, const GroupInput*> inputs_;
  std::vector<std::string> setup_, row_setup_, row_end_;
  std::vector<Pass> passes_;
};

std::string element_type_of(expr::ScalarType t) { return ctype(t); }

}  // namespace

Value fused_group_function(const passes::LoweredProgram& program, const FusedGroup& group, SizeParams& sizes) {
  FusedWriter writer(group, sizes);
  Value v = writer.build();
  std::string calls;
  for (uint32_t c : group.calls) calls += (calls.empty() ? "" : ", ") + std::to_string(c);
  // The shape for a reader, and outer x inner as the function names them.
  const std::string shape = comment_shape(group.shape);
  v.set("comment", fmt::format("Group {}: {} ({} loop over {} = {} x {}; calls {}).", group.index, group.label,
                               group.kind == passes::GroupKind::kRow ? "row" : "elementwise", shape,
                               sizes.text(group.outer), sizes.text(group.inner), calls));
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
  std::string ops;
  for (uint32_t c : group.calls) ops += (ops.empty() ? "" : ", ") + program.calls[c].pir_name;
  v.set("comment", fmt::format("fused group {}: {} at {}", group.index, ops, where));
  v.set("args", Value(std::move(args)));
  v.set("traces", Value(std::move(traces)));
  return v;
}

}  // namespace kforge::codegen
