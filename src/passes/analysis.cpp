#include "passes/analysis.h"

#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "passes/op_context.h"

namespace kforge::passes {

// ---- KnownData -------------------------------------------------------------------------------------------------

int64_t KnownData::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

bool KnownData::is_static() const {
  for (const SymExpr& e : ints) {
    if (!e.is_constant()) return false;
  }
  return true;
}

double KnownData::float_at(int64_t i) const {
  const size_t at = splat ? 0 : static_cast<size_t>(i);
  if (!floats.empty()) return at < floats.size() ? floats[at] : 0.0;
  if (at < ints.size()) {
    auto c = ints[at].constant();
    return c ? static_cast<double>(*c) : std::nan("");
  }
  return 0.0;
}

SymExpr KnownData::int_at(int64_t i) const {
  const size_t at = splat ? 0 : static_cast<size_t>(i);
  if (!floats.empty()) {
    if (at >= floats.size() || !std::isfinite(floats[at]) || std::fabs(floats[at]) > 9.2e18) return SymExpr(0);
    return SymExpr(static_cast<int64_t>(floats[at]));
  }
  return at < ints.size() ? ints[at] : SymExpr(0);
}

// ---- the walk -------------------------------------------------------------------------------------------------

namespace {

using ir::Op;
using ir::Program;

std::string info_text(const ValueInfo& v) {
  if (v.is_vector) {
    std::string out = "vec[";
    for (size_t i = 0; i < v.elements.size(); ++i) out += (i ? ", " : "") + info_text(v.elements[i]);
    return out + "]";
  }
  return fmt::format("{}{}", ir::dtype_name(v.dtype), to_string(v.dims));
}

class Analyzer {
 public:
  Analyzer(const Program& program, const OpSet& ops, DiagnosticEngine& diags, const AnalysisOptions& options)
      : program_(program), ops_(ops), diags_(diags), options_(options) {
    analysis_.values.resize(program.value_capacity());
    analysis_.equal_broadcast_dims = options.equal_broadcast_dims;
  }

  std::optional<Analysis> run() {
    const size_t errors = diags_.error_count();
    const std::vector<ir::OpId> feeds = program_.feeds();
    for (size_t i = 0; i < feeds.size(); ++i) feed_index_[feeds[i].index] = static_cast<uint32_t>(i);
    for (ir::OpId id : program_.top_level_ops()) {
      const Op& op = program_.op(id);
      if (!op.erased) analyze(op);
    }
    if (diags_.error_count() > errors) return std::nullopt;
    if (!analysis_.dim_equalities.empty()) substitute_equal_dims();
    return std::move(analysis_);
  }

 private:
  // AnalysisOptions::equal_broadcast_dims: a dim that was taken as equal to another becomes that other everywhere
  // (the upsampled map's own dims too), so the values of one broadcast have one shape. Run-time checks of the pairs
  // (Analysis::dim_equalities) come before any kernel, so each substitution holds whenever the program runs.
  void substitute_equal_dims() {
    const EqualDims equal(analysis_.dim_equalities);
    std::function<void(ValueInfo&)> rewrite = [&](ValueInfo& v) {
      for (SymExpr& d : v.dims) d = equal.resolve(d);
      for (ValueInfo& e : v.elements) rewrite(e);
      if (v.data) {
        for (SymExpr& i : v.data->ints) i = equal.resolve(i);
      }
    };
    for (ValueInfo& v : analysis_.values) rewrite(v);
  }

  ValueInfo& info(ir::ValueId v) { return analysis_.values.at(v.index); }

  std::string name_of(const Op& op) const {
    if (program_.format == ir::SourceFormat::kProgramYaml && op.dialect == "pd_op") return op.name;
    return op.full_name();
  }

  /// The declared type as an info; dynamic dims become new symbols only for program inputs.
  bool from_declared(const ir::Type& t, ValueInfo* out) {
    if (t.is_tensor()) {
      out->known = true;
      out->dtype = t.dtype;
      out->dims.clear();
      for (int64_t d : t.dims) {
        if (d < 0) return false;
        out->dims.push_back(d);
      }
      return true;
    }
    if (t.is_vector()) {
      out->known = true;
      out->is_vector = true;
      for (const ir::Type& e : t.elements) {
        ValueInfo ei;
        if (!from_declared(e, &ei)) return false;
        out->elements.push_back(std::move(ei));
      }
      return true;
    }
    return false;
  }

  void analyze_feed(const Op& op) {
    const ir::ValueId r = op.results.at(0);
    const ir::Type& t = program_.type_of(r);
    ValueInfo& v = info(r);
    v.known = true;
    v.dtype = t.dtype;
    std::vector<int64_t> dims = t.dims;
    if (!t.is_tensor()) {
      // No declared type: the data op's own shape and dtype attributes.
      const ir::Attribute* shape = op.attr("shape");
      const ir::Attribute* dtype = op.attr("dtype");
      if (shape) dims = shape->as_int_list();
      if (dtype && dtype->kind == ir::AttrKind::kDataType) v.dtype = dtype->dtype;
    }
    const std::string feed_name = op.string_attr("name");
    v.dims.clear();
    for (size_t axis = 0; axis < dims.size(); ++axis) {
      if (dims[axis] >= 0) {
        v.dims.push_back(dims[axis]);
        continue;
      }
      const InputDim dim(feed_index_.at(op.id.index), static_cast<uint32_t>(axis));
      if (const std::optional<uint32_t> shared = aliased_symbol(dim)) {
        v.dims.push_back(SymExpr::symbol(*shared));
        continue;
      }
      Symbol s;
      s.id = static_cast<uint32_t>(analysis_.symbols.size());
      s.input = dim.first;
      s.axis = dim.second;
      s.name = fmt::format("{}.dims[{}]", feed_name, axis);
      analysis_.symbols.push_back(s);
      v.dims.push_back(SymExpr::symbol(s.id));
    }
    if (v.dtype == ir::DataType::kUndefined) {
      diags_.error(op.loc, fmt::format("program input '{}' has no dtype", feed_name));
    }
  }

  // The symbol `dim` shares (AnalysisOptions::symbol_aliases), once its owner has one.
  std::optional<uint32_t> aliased_symbol(const InputDim& dim) const {
    auto alias = options_.symbol_aliases.find(dim);
    if (alias == options_.symbol_aliases.end()) return std::nullopt;
    for (const Symbol& s : analysis_.symbols) {
      if (s.is_input_dim() && s.input == alias->second.first && s.axis == alias->second.second) return s.id;
    }
    return std::nullopt;
  }

  void analyze(const Op& op) {
    if (op.is("pd_op", "data") || op.is("pd_op", "feed")) {
      if (op.results.size() == 1) analyze_feed(op);
      return;
    }
    if (op.is("builtin", "parameter") || op.is("builtin", "constant")) {
      if (op.results.size() != 1) return;
      const ir::Type& t = program_.type_of(op.results[0]);
      if (!from_declared(t, &info(op.results[0])) || !t.is_tensor()) {
        info(op.results[0]).known = false;
        diags_.error(op.loc, fmt::format("parameter '{}' must have a static shape and a dtype, got {}",
                                         op.string_attr("parameter_name"), ir::to_string(t)));
      }
      return;
    }
    if (op.is("builtin", "combine")) {
      if (op.results.size() != 1) return;
      ValueInfo list;
      list.known = true;
      list.is_vector = true;
      for (ir::ValueId v : op.operands) {
        if (!v.valid() || !info(v).known) return;
        list.elements.push_back(info(v));
      }
      info(op.results[0]) = std::move(list);
      return;
    }
    if (op.is("builtin", "split")) {
      if (op.operands.size() != 1 || !op.operands[0].valid()) return;
      const ValueInfo& list = info(op.operands[0]);
      if (!list.known || !list.is_vector || list.elements.size() != op.results.size()) return;
      for (size_t i = 0; i < op.results.size(); ++i) info(op.results[i]) = list.elements[i];
      return;
    }
    if (op.is("builtin", "slice")) {
      if (op.operands.size() != 1 || !op.operands[0].valid() || op.results.size() != 1) return;
      const ValueInfo& list = info(op.operands[0]);
      const ir::Attribute* index = op.attr("index");
      if (!list.known || !list.is_vector || !index || !index->is_integer()) return;
      if (index->int_value >= 0 && static_cast<size_t>(index->int_value) < list.elements.size()) {
        info(op.results[0]) = list.elements[static_cast<size_t>(index->int_value)];
      }
      return;
    }
    if (op.is("pd_op", "fetch")) {
      if (op.operands.size() == 1 && op.operands[0].valid() && op.results.size() == 1) {
        info(op.results[0]) = info(op.operands[0]);
      }
      return;
    }
    if (is_builtin_op(op)) {
      // Control flow and shadow_output: results keep their declared types when those are static.
      for (ir::ValueId r : op.results) {
        ValueInfo v;
        if (from_declared(program_.type_of(r), &v)) info(r) = std::move(v);
      }
      return;
    }
    const opdef::PirOpSignature* sig = ops_.find(op.full_name());
    if (!sig || !sig->op) return;  // the verifier reported it
    for (ir::ValueId v : op.operands) {
      if (v.valid() && !info(v).known) return;  // an earlier error; do not cascade
    }
    // Complex tensors (fft_r2c's results) are stored and read by real and abs alone: the fused loops and every
    // other kernel have no complex type.
    if (!op.is("pd_op", "real") && !op.is("pd_op", "abs")) {
      for (size_t i = 0; i < op.operands.size(); ++i) {
        const ir::ValueId v = op.operands[i];
        if (!v.valid() || !ir::is_complex(info(v).dtype)) continue;
        diags_.error(op.loc, fmt::format("'{}': operand {} is {}; kforge reads complex tensors only with real and abs",
                                         name_of(op), i, ir::dtype_name(info(v).dtype)));
        return;
      }
    }
    detail::OpContext ctx(program_, op, *sig, analysis_);
    if (sig->infer_meta.empty()) {
      bool all = true;
      for (ir::ValueId r : op.results) {
        ValueInfo v;
        all = all && from_declared(program_.type_of(r), &v);
        if (all) info(r) = std::move(v);
      }
      if (!all) {
        diags_.error(op.loc, fmt::format("kforge cannot infer the shape of '{}': its op definition names no "
                                         "infer_meta function",
                                         name_of(op)));
      }
      return;
    }
    const std::string problem = detail::run_shape_rule(sig->infer_meta, ctx);
    if (problem == "unknown-rule") {
      Diagnostic d{Severity::kError, op.loc,
                   fmt::format("kforge has no shape rule for the infer_meta function '{}' of '{}'", sig->infer_meta,
                               name_of(op)),
                   {}};
      if (sig->op->infer_meta) d.note("named here", sig->op->infer_meta->func_loc);
      diags_.report(std::move(d));
      return;
    }
    if (!problem.empty() && ctx.read_at_run_time() && dims_from_run_time_infer_meta(op)) {
      cross_check(op, *sig);
      return;
    }
    if (!problem.empty()) {
      Diagnostic d{Severity::kError, op.loc, fmt::format("'{}': {}", name_of(op), problem), {}};
      for (const DiagNote& n : ctx.notes()) d.note(n.message, n.loc);
      diags_.report(std::move(d));
      for (ir::ValueId r : op.results) info(r).known = false;
      return;
    }
    cross_check(op, *sig);
    detail::propagate_constants(ctx, options_.max_known_elements);
  }

  /// An op whose output shape comes from the values of a tensor known only at run time (reshape to a shape read
  /// from an input): where the program declares every result's dtype and rank (PIR does), each dim it leaves
  /// dynamic becomes a data-dependent symbol that the generated code reads from the op's infer-meta, run with the
  /// real values just before the call. False (the rule's error stands) where a result has no declared type.
  bool dims_from_run_time_infer_meta(const Op& op) {
    for (ir::ValueId r : op.results) {
      const ir::Type& declared = program_.type_of(r);
      if (!declared.is_tensor() || declared.dtype == ir::DataType::kUndefined) return false;
    }
    for (size_t i = 0; i < op.results.size(); ++i) {
      const ir::Type& declared = program_.type_of(op.results[i]);
      ValueInfo& v = info(op.results[i]);
      v = ValueInfo{};
      v.known = true;
      v.dtype = declared.dtype;
      for (size_t axis = 0; axis < declared.dims.size(); ++axis) {
        if (declared.dims[axis] >= 0) {
          v.dims.push_back(declared.dims[axis]);
          continue;
        }
        v.dims.push_back(add_data_dependent_symbol(
            analysis_, op.id, static_cast<uint32_t>(i), static_cast<uint32_t>(axis),
            fmt::format("dim {} of {}'s result {}", axis, name_of(op), program_.value(op.results[i]).source_id), 0,
            /*before_call=*/true));
      }
    }
    return true;
  }

  /// Compares inferred results with the declared types: dtype, rank and static dims must agree.
  void cross_check(const Op& op, const opdef::PirOpSignature& sig) {
    // Paddle 3.3's PIR declares unique's out and inverse float32 whatever x and dtype are, and an inverse it does not
    // return as a 0-D tensor; its kernel writes x's dtype, the index dtype and x's element count, which the predictor
    // returns (fixtures unique_*): its declarations say nothing.
    if (sig.infer_meta == "UniqueRawInferMeta") return;
    // Paddle's RnnInferMeta leaves dropout_state_out unset (declared float32 0-D); its inference kernel never writes
    // it, and the predictor returns it empty, uint8 [0].
    const bool rnn = sig.infer_meta == "RnnInferMeta";
    for (size_t i = 0; i < op.results.size(); ++i) {
      const ir::Type& declared = program_.type_of(op.results[i]);
      const ValueInfo& inferred = info(op.results[i]);
      if (declared.is_none() || !inferred.known || (rnn && i == 1)) continue;
      std::string conflict = compare(declared, inferred);
      // Paddle's PIR declares any / all (ReduceInferMeta) with x's dtype, but their kernels write bool: the
      // predictor returns bool and the ops after them read bool, so the inferred bool stands against any
      // declared dtype (dims are still compared).
      // Infer-metas that set no dtype for a result, which PIR then declares float32: GenerateProposalsV2InferMeta's
      // (rpn_rois_num is int32, the rest the anchors' dtype) and YoloBoxInferMeta's scores (x's dtype); the kernels'
      // dtypes are what the predictor returns.
      const bool dtype_unset = sig.infer_meta == "GenerateProposalsV2InferMeta" ||
                               (sig.infer_meta == "YoloBoxInferMeta" && i == 1);
      if (conflict == "dtype conflict" &&
          ((sig.infer_meta == "ReduceInferMeta" && inferred.dtype == ir::DataType::kBool) || dtype_unset)) {
        ir::Type as_inferred = declared;
        as_inferred.dtype = inferred.dtype;
        conflict = compare(as_inferred, inferred);
      }
      if (conflict.empty()) continue;
      const ir::Value& value = program_.value(op.results[i]);
      const std::string result_name = i < sig.results.size() ? sig.results[i].name : std::to_string(i);
      Diagnostic d{Severity::kError, op.loc,
                   fmt::format("result '{}' of '{}' is declared as {}, but its inputs give {}: {}", result_name,
                               name_of(op), ir::to_string(declared), info_text(inferred), conflict),
                   {}};
      // Hand-written programs declare result types apart from the op; in Paddle's formats they are on its line.
      if (program_.format == ir::SourceFormat::kProgramYaml && value.loc.valid() && !(value.loc == op.loc)) {
        d.note("declared here", value.loc);
      }
      diags_.report(std::move(d));
    }
  }

  static std::string compare(const ir::Type& declared, const ValueInfo& inferred) {
    if (declared.is_vector() != inferred.is_vector) return "one is a list of tensors, the other a tensor";
    if (declared.is_vector()) {
      if (declared.elements.size() != inferred.elements.size()) {
        return fmt::format("{} elements against {}", declared.elements.size(), inferred.elements.size());
      }
      for (size_t i = 0; i < declared.elements.size(); ++i) {
        std::string c = compare(declared.elements[i], inferred.elements[i]);
        if (!c.empty()) return fmt::format("element {}: {}", i, c);
      }
      return "";
    }
    if (!declared.is_tensor()) return "";
    if (declared.dtype != ir::DataType::kUndefined && declared.dtype != inferred.dtype) return "dtype conflict";
    if (declared.dims.size() != inferred.dims.size()) return "rank conflict";
    for (size_t d = 0; d < declared.dims.size(); ++d) {
      auto c = inferred.dims[d].constant();
      if (declared.dims[d] >= 0 && c && *c != declared.dims[d]) return fmt::format("dim {} differs", d);
    }
    return "";
  }

  const Program& program_;
  const OpSet& ops_;
  DiagnosticEngine& diags_;
  const AnalysisOptions& options_;
  Analysis analysis_;
  std::map<uint32_t, uint32_t> feed_index_;  // feed op index -> position among feeds
};

}  // namespace

std::optional<Analysis> analyze_program(const ir::Program& program, const OpSet& ops, DiagnosticEngine& diags,
                                        const AnalysisOptions& options) {
  return Analyzer(program, ops, diags, options).run();
}

namespace {

// Appends the symbols of a dim that is a symbol or a max of such dims (max(s2, max(s0, s1)): broadcasts of
// broadcasts); false for any other expression.
bool max_tree_symbols(const SymExpr& d, std::vector<uint32_t>* symbols) {
  uint32_t id = 0;
  if (d.is_symbol(&id)) {
    symbols->push_back(id);
    return true;
  }
  const std::vector<SymExpr::Term>& terms = d.terms();
  if (terms.size() != 1 || terms[0].coeff != 1 || terms[0].atoms.size() != 1) return false;
  const SymExpr::Atom& atom = *terms[0].atoms[0];
  return atom.kind == SymExpr::Atom::Kind::kMax && max_tree_symbols(atom.lhs, symbols) &&
         max_tree_symbols(atom.rhs, symbols);
}

// The groups of symbols that meet in one broadcast dim of v (or of its elements).
void collect_max_groups(const ValueInfo& v, std::vector<std::vector<uint32_t>>* groups) {
  for (const ValueInfo& e : v.elements) collect_max_groups(e, groups);
  for (const SymExpr& d : v.dims) {
    std::vector<uint32_t> symbols;
    if (!d.is_symbol() && max_tree_symbols(d, &symbols)) groups->push_back(std::move(symbols));
  }
}

}  // namespace

SymExpr add_data_dependent_symbol(Analysis& analysis, ir::OpId op, uint32_t result, uint32_t axis, std::string name,
                                  SymExpr bound, bool before_call, uint32_t element) {
  Symbol s;
  s.id = static_cast<uint32_t>(analysis.symbols.size());
  s.kind = SymbolKind::kDataDependent;
  s.op = op;
  s.result = result;
  s.axis = axis;
  s.name = std::move(name);
  s.bound = std::move(bound);
  s.before_call = before_call;
  s.element = element;
  analysis.symbols.push_back(std::move(s));
  return SymExpr::symbol(analysis.symbols.back().id);
}

std::map<InputDim, InputDim> broadcast_symbol_aliases(const Analysis& analysis) {
  std::vector<std::vector<uint32_t>> groups;
  for (const ValueInfo& v : analysis.values) collect_max_groups(v, &groups);
  // Union-find over symbol ids; each group's root is its smallest id, the symbol made first.
  std::vector<uint32_t> parent(analysis.symbols.size());
  for (uint32_t i = 0; i < parent.size(); ++i) parent[i] = i;
  auto root = [&](uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const std::vector<uint32_t>& group : groups) {
    for (uint32_t b : group) {
      if (group[0] >= parent.size() || b >= parent.size()) continue;
      const uint32_t ra = root(group[0]), rb = root(b);
      if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
    }
  }
  std::map<InputDim, InputDim> aliases;
  for (uint32_t i = 0; i < parent.size(); ++i) {
    const Symbol& owner = analysis.symbols[root(i)];
    // Only input dims are aliased (they are read before the first call); a data-dependent dim stays its own.
    if (!owner.is_input_dim() || !analysis.symbols[i].is_input_dim()) continue;
    if (owner.id != i) aliases[{analysis.symbols[i].input, analysis.symbols[i].axis}] = {owner.input, owner.axis};
  }
  return aliases;
}

namespace {

bool apply_type(ir::Type& t, const ValueInfo& v) {
  if (!v.known) return false;
  ir::Type inferred;
  if (v.is_vector) {
    std::vector<ir::Type> elements;
    for (const ValueInfo& e : v.elements) {
      ir::Type et;
      apply_type(et, e);
      elements.push_back(std::move(et));
    }
    inferred = ir::Type::vector(std::move(elements));
  } else if (t.is_tensor() && t.dims.size() == v.dims.size()) {
    // Keep what the program declares; only fill the -1 dims kforge knows statically.
    inferred = t;
    for (size_t i = 0; i < v.dims.size(); ++i) {
      auto c = v.dims[i].constant();
      if (inferred.dims[i] < 0 && c) inferred.dims[i] = *c;
    }
  } else if (t.is_none()) {
    std::vector<int64_t> dims;
    for (const SymExpr& d : v.dims) dims.push_back(d.constant().value_or(ir::kDynamicDim));
    inferred = ir::Type::tensor(v.dtype, std::move(dims));
  } else {
    return false;
  }
  if (t == inferred) return false;
  t = std::move(inferred);
  return true;
}

}  // namespace

size_t apply_inferred_types(ir::Program& program, const Analysis& analysis) {
  size_t changed = 0;
  for (ir::OpId id : program.top_level_ops()) {
    for (ir::ValueId r : program.op(id).results) {
      if (r.index < analysis.values.size() && apply_type(program.value(r).type, analysis.values[r.index])) ++changed;
    }
  }
  return changed;
}

}  // namespace kforge::passes
