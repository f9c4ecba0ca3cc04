// What the fusion plan gives the rest of kforge: the memory re-plan, the Graphviz picture (--dump-groups) and
// the one-line-per-group dump.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "passes/fusion.h"
#include "passes/memory_plan.h"

namespace kforge::passes {

bool is_expensive(const expr::Node& typed) {
  bool found = false;
  expr::visit(typed, [&](const expr::Node& n) {
    if (n.kind != expr::NodeKind::kCall) return;
    switch (n.function) {
      case expr::Function::kMin:
      case expr::Function::kMax:
      case expr::Function::kAbs:
      case expr::Function::kFloor:
      case expr::Function::kCeil:
      case expr::Function::kTrunc:
      case expr::Function::kSqrt:
      case expr::Function::kRsqrt:
      case expr::Function::kIsnan:
      case expr::Function::kIsinf:
      case expr::Function::kIsfinite: break;
      default: found = true;
    }
  });
  return found;
}

std::string_view gemm_epilogue_name(GemmEpilogue epilogue) {
  switch (epilogue) {
    case GemmEpilogue::kNone: return "none";
    case GemmEpilogue::kBias: return "bias";
    case GemmEpilogue::kBiasGelu: return "bias_gelu";
    case GemmEpilogue::kBiasGeluTanh: return "bias_gelu_tanh";
  }
  return "?";
}

bool is_fused_internal(const FusionPlan& plan, uint32_t value) {
  for (const FusedGroup& g : plan.groups) {
    if (std::find(g.internal_values.begin(), g.internal_values.end(), value) != g.internal_values.end()) return true;
  }
  return false;
}

bool has_dynamic_strides(const FusedGroup& g) {
  for (size_t k = 1; k < g.shape.size(); ++k) {
    if (!g.shape[k].is_constant()) return true;
  }
  for (const GroupInput& in : g.inputs) {
    if (in.access != InputAccess::kStrided) continue;
    for (const SymExpr& s : in.strides) {
      if (!s.is_constant()) return true;
    }
  }
  for (const GroupStore& st : g.stores) {
    for (const SymExpr& s : st.strides) {
      if (!s.is_constant()) return true;
    }
  }
  return false;
}

void renumber_groups(FusionPlan& plan) {
  std::stable_sort(plan.groups.begin(), plan.groups.end(),
                   [](const FusedGroup& a, const FusedGroup& b) { return a.position < b.position; });
  std::fill(plan.call_group.begin(), plan.call_group.end(), kNone);
  for (uint32_t i = 0; i < plan.groups.size(); ++i) {
    FusedGroup& g = plan.groups[i];
    g.index = i;
    for (uint32_t m : g.calls) plan.call_group[m] = i;
    for (uint32_t m : g.absorbed) plan.call_group[m] = i;
  }
}

void apply_fusion_to_memory_plan(LoweredProgram& program, const FusionPlan& plan) {
  if (plan.empty()) return;
  const uint32_t n = static_cast<uint32_t>(program.calls.size());
  auto position = [&](uint32_t call) {
    const uint32_t g = call < plan.call_group.size() ? plan.call_group[call] : kNone;
    return g == kNone ? call : plan.groups[g].position;
  };
  std::set<uint32_t> internal;
  for (const FusedGroup& g : plan.groups) internal.insert(g.internal_values.begin(), g.internal_values.end());
  // Last reader of each value, at the positions the calls run at now.
  std::vector<uint32_t> last_read(program.values.size(), kNone);
  for (uint32_t c = 0; c < n; ++c) {
    for (const KernelArg& a : program.calls[c].args) {
      std::vector<uint32_t> vs = a.values;
      if (a.value != kNone) vs.push_back(a.value);
      for (uint32_t v : vs) {
        const uint32_t p = position(c);
        last_read[v] = last_read[v] == kNone ? p : std::max(last_read[v], p);
      }
    }
  }
  for (Buffer& b : program.buffers) {
    if (b.kind != BufferKind::kWorkspace && b.kind != BufferKind::kOutput) continue;
    bool all_internal = !b.values.empty();
    uint32_t first = kNone, last = 0;
    for (uint32_t v : b.values) {
      all_internal = all_internal && internal.count(v) != 0;
      const LoweredValue& val = program.values[v];
      if (val.defined_by == kNone) continue;
      const uint32_t p = position(val.defined_by);
      first = first == kNone ? p : std::min(first, p);
      last = std::max(last, p);
      if (last_read[v] != kNone) last = std::max(last, last_read[v]);
    }
    if (first == kNone) continue;
    b.first_call = first;
    b.last_call = b.kind == BufferKind::kOutput ? (n == 0 ? 0 : n - 1) : last;
    if (all_internal && b.kind == BufferKind::kWorkspace) b.size_bytes = 0;
  }
  plan_memory(program, program.plan.alignment);
}

namespace {

std::string dot_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string value_label(const LoweredProgram& program, uint32_t v) {
  const LoweredValue& val = program.value(v);
  if (!val.name.empty()) return val.name;
  return val.source_id.empty() ? "v" + std::to_string(v) : val.source_id;
}

std::string_view kind_name(GroupKind k) {
  switch (k) {
    case GroupKind::kElementwise: return "elementwise";
    case GroupKind::kRow: return "row";
    case GroupKind::kGemm: return "gemm";
    case GroupKind::kConv: return "conv";
    case GroupKind::kAttention: return "attention";
  }
  return "?";
}

// "gemm bias_gelu" for GEMM groups (the epilogue is what distinguishes them; "gemm batched" for a batch of
// products), the kind otherwise.
std::string kind_text(const FusedGroup& g) {
  std::string text(kind_name(g.kind));
  if (g.kind != GroupKind::kGemm) return text;
  if (g.gemm.packed()) return text + " packed " + std::to_string(g.gemm.outs.size()) + " " + std::string(gemm_epilogue_name(g.gemm.epilogue));
  text += " " + std::string(g.gemm.batched ? "batched" : gemm_epilogue_name(g.gemm.epilogue));
  return text;
}

}  // namespace

std::string fusion_dot(const LoweredProgram& program, const FusionPlan& plan) {
  std::string out = "digraph fusion {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";
  out += fmt::format("  label=\"{}: {} calls, {} fused groups\";\n", dot_escape(program.name), program.calls.size(),
                     plan.groups.size());
  std::set<uint32_t> internal;
  for (const FusedGroup& g : plan.groups) {
    internal.insert(g.internal_values.begin(), g.internal_values.end());
    out += fmt::format("  subgraph cluster_g{} {{\n    label=\"group {} ({}, {} x {})\";\n    style=rounded;\n", g.index,
                       g.index, kind_text(g), dot_escape(g.outer.to_string()), dot_escape(g.inner.to_string()));
    for (uint32_t c : g.calls) {
      out += fmt::format("    c{} [label=\"#{} {}\"];\n", c, c, dot_escape(program.calls[c].op));
    }
    for (uint32_t c : g.absorbed) {
      out += fmt::format("    c{} [label=\"#{} {} (index map)\"];\n", c, c, dot_escape(program.calls[c].op));
    }
    out += "  }\n";
  }
  for (uint32_t c = 0; c < program.calls.size(); ++c) {
    if (c < plan.call_group.size() && plan.call_group[c] != kNone) continue;
    out += fmt::format("  c{} [label=\"#{} {}\", style=dashed];\n", c, c, dot_escape(program.calls[c].op));
  }
  std::set<uint32_t> sources;
  std::string edges;
  for (uint32_t c = 0; c < program.calls.size(); ++c) {
    std::set<uint32_t> seen;
    for (const KernelArg& a : program.calls[c].args) {
      std::vector<uint32_t> vs = a.values;
      if (a.value != kNone) vs.push_back(a.value);
      for (uint32_t v : vs) {
        if (!seen.insert(v).second) continue;
        const LoweredValue& val = program.value(v);
        std::string from;
        if (val.defined_by != kNone) {
          from = "c" + std::to_string(val.defined_by);
        } else {
          from = "v" + std::to_string(v);
          sources.insert(v);
        }
        edges += fmt::format("  {} -> c{} [label=\"{}\"{}];\n", from, c, dot_escape(value_label(program, v)),
                             internal.count(v) ? ", style=dotted" : "");
      }
    }
  }
  for (uint32_t v : sources) {
    out += fmt::format("  v{} [label=\"{}\", shape=ellipse];\n", v, dot_escape(value_label(program, v)));
  }
  out += edges;
  for (const ProgramOutput& o : program.outputs) {
    const LoweredValue& val = program.value(o.value);
    if (val.defined_by == kNone) continue;
    out += fmt::format("  out_{} [label=\"{}\", shape=ellipse];\n  c{} -> out_{};\n", o.col, dot_escape(o.name),
                       val.defined_by, o.col);
  }
  out += "}\n";
  return out;
}

std::string dump_fusion(const LoweredProgram& program, const FusionPlan& plan) {
  std::string out;
  for (const FusedGroup& g : plan.groups) {
    std::string calls, stores, internal, absorbed;
    for (uint32_t c : g.calls) calls += (calls.empty() ? "" : ",") + std::to_string(c);
    for (uint32_t c : g.absorbed) absorbed += (absorbed.empty() ? " absorbs " : ",") + std::to_string(c);
    for (const GroupStore& s : g.stores) stores += (stores.empty() ? "" : ",") + ("v" + std::to_string(s.value));
    for (uint32_t v : g.internal_values) internal += (internal.empty() ? "" : ",") + ("v" + std::to_string(v));
    out += fmt::format("group {} {} {} outer {} inner {} passes {} calls {}{} stores {} internal {} ({})\n", g.index,
                       kind_text(g), to_string(g.shape), g.outer.to_string(), g.inner.to_string(), g.num_passes,
                       calls, absorbed, stores, internal.empty() ? "-" : internal, g.label);
    (void)program;
  }
  return out;
}

}  // namespace kforge::passes
