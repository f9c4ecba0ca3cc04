// The fusion pass: what one candidate group would look like (GroupBuilder) and the greedy, deterministic
// grouping in call order (plan_fusion). Which calls can fuse is fusion_classify.cpp. See docs/fusion.md for the rules.
#include "passes/fusion.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "scalar_expr/expr_rewrite.h"
#include "passes/fusion_internal.h"

namespace kforge::passes {

namespace {

// Whether call c is a member of one of `groups`.
bool taken(const std::vector<FusedGroup>& groups, uint32_t c) {
  return std::any_of(groups.begin(), groups.end(),
                     [c](const FusedGroup& g) { return std::find(g.calls.begin(), g.calls.end(), c) != g.calls.end(); });
}

using expr::ScalarType;
using namespace fusion_detail;

// ---- one candidate group ------------------------------------------------------------------------------------

/// Builds the FusedGroup of a set of calls, or nullopt when the set breaks a rule of docs/fusion.md.
class GroupBuilder {
 public:
  GroupBuilder(const LoweredProgram& program, const std::vector<CallInfo>& infos,
               const std::vector<std::vector<uint32_t>>& readers, const std::vector<bool>& is_output,
               bool keep_softmax_exps)
      : p_(program), infos_(infos), readers_(readers), is_output_(is_output), keep_softmax_exps_(keep_softmax_exps) {}

  std::optional<FusedGroup> build(std::vector<uint32_t> calls) const {
    std::sort(calls.begin(), calls.end());
    if (std::adjacent_find(calls.begin(), calls.end()) != calls.end()) return std::nullopt;  // a call twice
    FusedGroup g;
    g.calls = calls;
    g.position = calls.back();
    const std::set<uint32_t> members(calls.begin(), calls.end());
    if (!iteration_space(g)) return std::nullopt;

    // Which level each computed value is at: element (shape == g.shape) or row (numel == outer).
    std::map<uint32_t, bool> is_row_value;  // value -> row level
    std::map<uint32_t, std::string> local;  // value -> local name
    std::map<uint32_t, size_t> input_of;    // value -> index in g.inputs
    auto external = [&](uint32_t v, InputAccess want_row_or_any, bool row_level) -> std::optional<std::string> {
      std::vector<SymExpr> strides;
      std::optional<InputAccess> a = access_of(p_.value(v).dims, g.shape, split_, &strides);
      if (row_level) {
        // A row-level statement reads one element per row (kOuter) or a scalar.
        const SymShape& vd = p_.value(v).dims;
        if (sym_numel(vd) == 1) {
          a = InputAccess::kScalar;
        } else if (sym_numel(vd) == g.outer && want_row_or_any == InputAccess::kOuter) {
          a = InputAccess::kOuter;
        } else {
          return std::nullopt;
        }
      }
      if (!a) return std::nullopt;
      auto it = input_of.find(v);
      if (it != input_of.end()) {
        if (g.inputs[it->second].access != *a) return std::nullopt;
        return g.inputs[it->second].name;
      }
      GroupInput in;
      in.value = v;
      in.name = "in" + std::to_string(g.inputs.size());
      in.dtype = p_.value(v).dtype;
      in.storage = *scalar_of(in.dtype);
      in.type = expr::compute_type(in.storage);
      in.access = *a;
      if (*a == InputAccess::kStrided) in.strides = std::move(strides);
      in.needs_int64 = exceeds_int32(sym_numel(p_.value(v).dims)) || g.needs_int64;
      input_of[v] = g.inputs.size();
      g.inputs.push_back(std::move(in));
      return g.inputs.back().name;
    };

    for (uint32_t c : calls) {
      const CallInfo& info = infos_[c];
      const LoweredValue& out = p_.value(info.out);
      GroupStmt st;
      st.call = c;
      st.value = info.out;
      st.name = "v" + std::to_string(info.out);
      st.storage = *scalar_of(out.dtype);
      st.type = expr::compute_type(st.storage);
      if (info.kind == CallKind::kElementwise) {
        bool row_level = false;
        if (out.dims != g.shape) {
          if (g.kind != GroupKind::kRow || sym_numel(out.dims) != g.outer) return std::nullopt;
          row_level = true;
        }
        std::map<std::string, std::string> names;
        for (const auto& [arg, v] : info.inputs) {
          auto lit = local.find(v);
          if (lit != local.end()) {
            const bool operand_row = is_row_value.at(v);
            if (row_level) {
              if (!operand_row || p_.value(v).dims != out.dims) return std::nullopt;
            } else if (operand_row) {
              std::optional<InputAccess> a = access_of(p_.value(v).dims, g.shape, split_, nullptr);
              if (a != InputAccess::kOuter) return std::nullopt;
            } else if (p_.value(v).dims != g.shape) {
              return std::nullopt;
            }
            names[arg] = lit->second;
          } else {
            // A row-level statement reads inputs of its own shape (one per row) or scalars.
            if (row_level && sym_numel(p_.value(v).dims) != 1 && p_.value(v).dims != out.dims) return std::nullopt;
            std::optional<std::string> n = external(v, InputAccess::kOuter, row_level);
            if (!n) return std::nullopt;
            names[arg] = *n;
          }
        }
        st.kind = row_level ? StmtKind::kRowValue : StmtKind::kElement;
        st.expr = rename(*info.compute, names, row_level, input_of, g);
        is_row_value[info.out] = row_level;
      } else if (info.kind == CallKind::kReduce) {
        const uint32_t x = info.inputs[0].second;
        std::string source;
        auto lit = local.find(x);
        if (lit != local.end()) {
          if (is_row_value.at(x) || p_.value(x).dims != g.shape) return std::nullopt;
          source = lit->second;
        } else {
          std::optional<std::string> n = external(x, InputAccess::kContiguous, false);
          if (!n || g.inputs[input_of.at(x)].access != InputAccess::kContiguous) return std::nullopt;
          source = *n;
        }
        st.kind = StmtKind::kReduce;
        st.source = source;
        expr::TypedReduction r = *info.reduction;
        auto sub = [&](expr::Expression& e) {
          e.root = expr::substitute(*e.root, [&](const expr::Node& n) -> expr::NodePtr {
            if (n.name_kind != expr::NameKind::kInput || n.name != r.input) return nullptr;
            expr::NodePtr copy = expr::clone(n);
            copy->name = source;
            return copy;
          });
        };
        sub(r.combine);
        sub(r.merge);
        r.input = source;
        st.reduction = std::move(r);
        is_row_value[info.out] = true;
      } else {
        st.kind = StmtKind::kRowPattern;
        st.pattern = info.pattern;
        st.epsilon = info.epsilon;
        for (const auto& [arg, v] : info.inputs) {
          auto lit = local.find(v);
          std::string name;
          if (arg == "x") {
            if (lit != local.end()) {
              if (is_row_value.at(v) || p_.value(v).dims != g.shape) return std::nullopt;
              name = lit->second;
            } else {
              std::optional<std::string> n = external(v, InputAccess::kContiguous, false);
              if (!n || g.inputs[input_of.at(v)].access != InputAccess::kContiguous) return std::nullopt;
              name = *n;
            }
          } else {
            if (lit != local.end()) return std::nullopt;  // scale / bias computed in the group: not supported
            if (input_of.count(v) == 0) {
              // One row's worth, whatever its rank: read as kInner.
              GroupInput in;
              in.value = v;
              in.name = "in" + std::to_string(g.inputs.size());
              in.dtype = p_.value(v).dtype;
              in.storage = *scalar_of(in.dtype);
              in.type = expr::compute_type(in.storage);
              in.access = InputAccess::kInner;
              input_of[v] = g.inputs.size();
              g.inputs.push_back(std::move(in));
            } else if (g.inputs[input_of.at(v)].access != InputAccess::kInner) {
              return std::nullopt;
            }
            name = g.inputs[input_of.at(v)].name;
          }
          st.operands.push_back({arg, name});
        }
        if (st.pattern == RowPatternKind::kLayerNorm) {
          // Every operand slot, "" when absent, so backends need not search.
          std::vector<RowPatternOperand> all;
          for (const char* arg : {"x", "scale", "bias"}) {
            RowPatternOperand o{arg, ""};
            for (const RowPatternOperand& have : st.operands) {
              if (have.arg == arg) o.name = have.name;
            }
            all.push_back(o);
          }
          st.operands = std::move(all);
        }
        st.extra_outputs = info.extras;
        for (const GroupStmt::ExtraOutput& e : st.extra_outputs) {
          if (e.value == kNone) continue;
          local[e.value] = e.name;
          is_row_value[e.value] = e.per_row;
        }
        is_row_value[info.out] = false;
      }
      local[info.out] = st.name;
      g.stmts.push_back(std::move(st));
    }
    if (!dependencies_ok(g, members)) return std::nullopt;
    collect_stores(g, members, local, is_row_value);
    if (g.stores.empty()) return std::nullopt;
    if (g.kind == GroupKind::kRow && !assign_passes(g)) return std::nullopt;
    if (g.kind == GroupKind::kElementwise) {
      for (GroupStmt& st : g.stmts) st.passes = {0};
    }
    for (const GroupStmt& st : g.stmts) {
      g.has_expensive = g.has_expensive || infos_[st.call].expensive;
      g.label += (g.label.empty() ? "" : "+") + p_.calls[st.call].op;
    }
    return g;
  }

 private:
  /// The shape, split, outer and inner of the group.
  bool iteration_space(FusedGroup& g) const {
    bool row = false;
    for (uint32_t c : g.calls) {
      const CallInfo& info = infos_[c];
      if (info.kind == CallKind::kOpaque) return false;
      if (info.kind == CallKind::kElementwise) continue;
      const SymShape& in = p_.value(info.inputs[0].second).dims;
      if (row && (in != g.shape || info.split != split_)) return false;
      row = true;
      g.shape = in;
      split_ = info.split;
    }
    if (row) {
      g.kind = GroupKind::kRow;
    } else {
      g.kind = GroupKind::kElementwise;
      g.shape = p_.value(infos_[g.calls.front()].out).dims;
      // The split that makes the fewest strided inputs; ties: the largest inner part.
      size_t best = 0, best_strided = SIZE_MAX;
      for (size_t k = 0; k <= g.shape.size(); ++k) {
        size_t strided = 0;
        for (uint32_t c : g.calls) {
          for (const auto& in : infos_[c].inputs) {
            std::optional<InputAccess> a = access_of(p_.value(in.second).dims, g.shape, k, nullptr);
            strided += (!a || *a == InputAccess::kStrided) ? 1 : 0;
          }
        }
        if (strided < best_strided) {
          best = k;
          best_strided = strided;
        }
      }
      split_ = best;
    }
    g.outer = product(g.shape, 0, split_);
    g.inner = product(g.shape, split_, g.shape.size());
    g.numel = g.outer * g.inner;
    g.needs_int64 = exceeds_int32(g.numel);
    return true;
  }

  /// The compute expression with its input names replaced by locals.
  std::optional<expr::Expression> rename(const expr::Expression& e, const std::map<std::string, std::string>& names,
                                         bool, const std::map<uint32_t, size_t>&, const FusedGroup&) const {
    expr::Expression out = e;
    out.root = expr::substitute(*e.root, [&](const expr::Node& n) -> expr::NodePtr {
      if (n.name_kind != expr::NameKind::kInput) return nullptr;
      auto it = names.find(n.name);
      if (it == names.end()) return nullptr;
      expr::NodePtr copy = expr::clone(n);
      copy->name = it->second;
      return copy;
    });
    return out;
  }

  /// Every reader outside the group runs after the group's position, and no call between the group's first
  /// call and its position writes memory the group reads.
  bool dependencies_ok(const FusedGroup& g, const std::set<uint32_t>& members) const {
    for (uint32_t c : g.calls) {
      for (const CallOutput& o : p_.calls[c].outputs) {
        for (uint32_t v : o.values) {
          if (v == kNone) continue;
          for (uint32_t r : readers_[v]) {
            if (!members.count(r) && r < g.position) return false;
          }
        }
      }
    }
    std::set<uint32_t> read_buffers;
    std::map<uint32_t, int> inputs_in_buffer;
    for (const GroupInput& in : g.inputs) {
      read_buffers.insert(p_.value(in.value).buffer);
      ++inputs_in_buffer[p_.value(in.value).buffer];
    }
    // An input defined between the members (clip's bound sliced from a shape after the scale it clips) is written
    // there by its own definition, which the group, reading it at its position, comes after; unless another input
    // shares its buffer (one value overwriting the other).
    std::set<uint32_t> produced;
    for (const GroupInput& in : g.inputs) {
      if (inputs_in_buffer[p_.value(in.value).buffer] == 1) produced.insert(in.value);
    }
    return !written_between(p_, read_buffers, g.calls.front(), g.position, members, produced);
  }

  void collect_stores(FusedGroup& g, const std::set<uint32_t>& members, const std::map<uint32_t, std::string>& local,
                      const std::map<uint32_t, bool>& is_row_value) const {
    for (const auto& [v, name] : local) {
      bool escapes = is_output_[v];
      for (uint32_t r : readers_[v]) escapes = escapes || !members.count(r);
      const Buffer& b = p_.buffer_of(v);
      escapes = escapes || b.kind == BufferKind::kOutput;
      if (!escapes) {
        g.internal_values.push_back(v);
        continue;
      }
      GroupStore s;
      s.value = v;
      s.name = name;
      s.per_row = is_row_value.at(v);
      s.dtype = p_.value(v).dtype;
      s.storage = *scalar_of(s.dtype);
      g.stores.push_back(std::move(s));
    }
  }

  /// Row passes (fusion.h, GroupStmt::passes). False when an expensive element statement would be evaluated
  /// in more than one pass, or a row pattern's output is needed after its last pass.
  bool assign_passes(FusedGroup& g) const {
    std::map<std::string, uint32_t> ready;  // element locals: first pass they exist; row locals: first pass usable
    for (const GroupInput& in : g.inputs) ready[in.name] = 0;
    auto operands_ready = [&](const GroupStmt& st) {
      uint32_t r = 0;
      if (st.expr) {
        for (const std::string& n : expr::names_used(*st.expr->root, expr::NameKind::kInput)) r = std::max(r, ready.at(n));
      }
      return r;
    };
    std::vector<uint32_t> first(g.stmts.size(), 0), last(g.stmts.size(), 0);
    for (size_t i = 0; i < g.stmts.size(); ++i) {
      GroupStmt& st = g.stmts[i];
      switch (st.kind) {
        case StmtKind::kElement:
        case StmtKind::kRowValue:
          first[i] = last[i] = operands_ready(st);
          ready[st.name] = first[i];
          break;
        case StmtKind::kReduce:
          first[i] = last[i] = ready.at(st.source);
          ready[st.name] = first[i] + 1;
          break;
        case StmtKind::kRowPattern:
          first[i] = ready.at(st.operands[0].name);
          last[i] = first[i] + 2;  // softmax: max, sum, normalise; layer_norm: mean, variance, normalise
          ready[st.name] = last[i];
          for (const GroupStmt::ExtraOutput& e : st.extra_outputs) {
            if (e.value != kNone) ready[e.name] = last[i];
          }
          break;
      }
    }
    // Needed passes of element locals, from their consumers (last statement first).
    std::map<std::string, std::set<uint32_t>> needed;
    for (const GroupStore& s : g.stores) {
      if (!s.per_row) needed[s.name].insert(ready.at(s.name));
    }
    g.num_passes = 1;
    for (size_t i = g.stmts.size(); i-- > 0;) {
      GroupStmt& st = g.stmts[i];
      std::set<uint32_t> mine;
      if (st.kind == StmtKind::kElement) {
        mine = needed[st.name];
        if (mine.empty()) mine.insert(first[i]);
        if (infos_[st.call].expensive && mine.size() > 1) return false;
        for (const std::string& n : expr::names_used(*st.expr->root, expr::NameKind::kInput)) {
          needed[n].insert(mine.begin(), mine.end());
        }
      } else if (st.kind == StmtKind::kReduce) {
        mine = {first[i]};
        needed[st.source].insert(first[i]);
      } else if (st.kind == StmtKind::kRowPattern) {
        std::set<uint32_t> out = needed[st.name];
        if (out.size() > 1 || (out.size() == 1 && *out.begin() != last[i])) return false;
        for (uint32_t p = first[i]; p <= last[i]; ++p) mine.insert(p);
        st.exps_kept = keep_softmax_exps_ && st.pattern == RowPatternKind::kSoftmax;
        for (const RowPatternOperand& o : st.operands) {
          if (o.name.empty()) continue;
          if (o.arg == "x") {
            needed[o.name].insert(mine.begin(), st.exps_kept ? std::next(mine.begin()) : mine.end());
          } else {
            needed[o.name].insert(last[i]);
          }
        }
      } else {
        mine = {first[i]};
      }
      st.passes.assign(mine.begin(), mine.end());
      g.num_passes = std::max(g.num_passes, st.passes.back() + 1);
    }
    for (GroupStore& s : g.stores) s.pass = s.per_row ? g.num_passes - 1 : ready.at(s.name);
    return true;
  }

  const LoweredProgram& p_;
  const std::vector<CallInfo>& infos_;
  const std::vector<std::vector<uint32_t>>& readers_;
  const std::vector<bool>& is_output_;
  const bool keep_softmax_exps_;
  mutable size_t split_ = 0;
};

}  // namespace

FusionPlan plan_fusion(const LoweredProgram& program, const FusionOptions& options) {
  FusionPlan plan;
  const uint32_t n = static_cast<uint32_t>(program.calls.size());
  plan.call_group.assign(n, kNone);
  // --no-fuse: nothing, unless the target has no per-op kernels (single_call_groups): then one group per call.
  if ((!options.enabled && !options.single_call_groups) || n == 0) return plan;

  // Targets without per-op kernels (single_call_groups) also fuse values that later views alias (v8).
  std::vector<CallInfo> infos = classify_calls(program, options.half_floats, options.single_call_groups);

  // Who reads each value (calls, ascending), and which values are program outputs.
  const std::vector<std::vector<uint32_t>> readers = program.value_readers();
  std::vector<bool> is_output(program.values.size(), false);
  for (const ProgramOutput& o : program.outputs) is_output[o.value] = true;

  // Attention groups first: their matmuls, softmax and transposes are then no candidates for the others.
  std::vector<FusedGroup> built;
  if (options.enabled && options.attention_groups) {
    built = plan_attention_groups(program, readers, is_output);
    for (const FusedGroup& g : built) {
      for (uint32_t c : g.calls) infos[c] = CallInfo{};
    }
  }
  // GEMM groups next: their bias add and gelu are then no longer candidates for elementwise groups.
  if (options.gemm_groups) {
    for (FusedGroup& g : plan_gemm_groups(program, infos, readers, is_output, options.enabled)) {
      // (A matmul an attention group took is no GEMM: its info was cleared above, but plan_gemm_groups
      // looks at the calls themselves.)
      if (std::any_of(g.calls.begin(), g.calls.end(), [&](uint32_t c) { return taken(built, c); })) continue;
      for (uint32_t c : g.calls) infos[c] = CallInfo{};
      built.push_back(std::move(g));
    }
  }

  // Convolution groups: their bias add, batch norm and activation are no longer candidates either.
  if (options.enabled && options.conv_fused != nullptr) {
    for (FusedGroup& g : plan_conv_groups(program, options.conv_fused, readers, is_output, options.half_floats)) {
      for (uint32_t c : g.calls) infos[c] = CallInfo{};
      built.push_back(std::move(g));
    }
  }

  GroupBuilder builder(program, infos, readers, is_output, options.keep_softmax_exps);
  std::vector<std::vector<uint32_t>> groups;  // call sets; empty once merged away
  std::vector<uint32_t> group_of(n, kNone);
  for (uint32_t c = 0; c < n; ++c) {
    if (infos[c].kind == CallKind::kOpaque || !builder.build({c})) continue;
    std::vector<uint32_t> current = {c};
    std::vector<uint32_t> merged;
    for (const auto& [arg, v] : infos[c].inputs) {
      if (!options.enabled) break;  // --no-fuse with single_call_groups: every call alone
      const uint32_t producer = program.value(v).defined_by;
      if (producer == kNone || group_of[producer] == kNone) continue;
      // Already here: taken alone for an earlier input (subtract(b, b), or b read twice), while group_of still
      // names the group it left; taking it again would put it in the group twice (the same statement emitted
      // twice, a redeclared local).
      if (std::find(current.begin(), current.end(), producer) != current.end()) continue;
      const uint32_t g = group_of[producer];
      if (std::find(merged.begin(), merged.end(), g) != merged.end()) continue;
      std::vector<uint32_t> candidate = current;
      candidate.insert(candidate.end(), groups[g].begin(), groups[g].end());
      if (candidate.size() <= options.max_group_calls && builder.build(candidate)) {
        current = std::move(candidate);
        merged.push_back(g);
        continue;
      }
      // The whole group cannot come along (an expensive statement would run in several row passes, say):
      // take only the direct producer when the rest of its group stays a valid group without it (a residual
      // add joins the layer_norm after it, the gelu before it stays behind).
      if (groups[g].size() < 2) continue;
      std::vector<uint32_t> rest;
      for (uint32_t m : groups[g]) {
        if (m != producer) rest.push_back(m);
      }
      candidate = current;
      candidate.push_back(producer);
      if (candidate.size() > options.max_group_calls || !builder.build(candidate) || !builder.build(rest)) continue;
      current = std::move(candidate);
      groups[g] = std::move(rest);
    }
    const uint32_t index = static_cast<uint32_t>(groups.size());
    for (uint32_t g : merged) groups[g].clear();
    for (uint32_t m : current) group_of[m] = index;
    groups.push_back(std::move(current));
  }

  for (std::vector<uint32_t>& calls : groups) {
    if (calls.empty()) continue;
    if (calls.size() == 1 && infos[calls[0]].kind == CallKind::kElementwise && !options.single_call_groups) continue;
    std::optional<FusedGroup> g = builder.build(calls);
    if (!g) continue;  // cannot happen: every accepted set was built before
    built.push_back(std::move(*g));
  }
  plan.groups = std::move(built);
  // Positions are distinct (each group's is its last call, and a call is in one group at most).
  std::sort(plan.groups.begin(), plan.groups.end(),
            [](const FusedGroup& a, const FusedGroup& b) { return a.position < b.position; });
  for (uint32_t i = 0; i < plan.groups.size(); ++i) {
    plan.groups[i].index = i;
    for (uint32_t c : plan.groups[i].calls) plan.call_group[c] = i;
  }
  if (options.enabled && options.absorb_transposes) absorb_transposes(program, plan, readers, is_output);
  return plan;
}

}  // namespace kforge::passes
