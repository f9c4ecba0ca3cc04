// The layout plan (layout.h): one forward walk over the top-level block.
// The twins at a region's ends are made in layout_twins.cpp; the planner's class is in layout_internal.h.
#include "passes/layout.h"

#include "passes/layout_internal.h"

namespace kforge::passes {

namespace layout_internal {

namespace {

/// What an op does in an NHWC region.
enum class Role {
  kNone,         // needs NCHW: its 4-D operands leave the region
  kConv,         // starts a region: data_format, one activation operand
  kFormatted,    // pooling, batch norm, interpolation: data_format, one activation operand; joins a region
  kElementwise,  // every 4-D operand and the result in one layout; joins a region
  kConcat,       // its axis moves; joins a region
  kShuffle,      // a reshape that may start a channel shuffle (reshape to 5-D, transpose, reshape back)
  kSplit,        // split / split_with_num: its axis moves; its pieces (builtin.split's results) join a region
};

struct Rule {
  Role role = Role::kNone;
  std::string_view operand;  // kConv / kFormatted: the activation operand's name
};

Rule rule_of(const Op& op, const LayoutOptions& options, bool blocked) {
  if (op.dialect != "pd_op") return {};
  std::string_view name = op.name;
  if (!name.empty() && name.back() == '_') name.remove_suffix(1);  // the in-place twin has the same layout rules
  if (name == "conv2d_transpose" && !options.transposed_convolutions) return {};
  // NCHW8c: the kernel library's conv2d / depthwise_conv2d, pooling and batch norm take it; nothing else formatted.
  if (blocked && (name == "conv2d_transpose" || name == "bilinear_interp" || name == "nearest_interp" ||
                  name == "reshape")) {
    return {};
  }
  static const std::map<std::string_view, Rule, std::less<>> rules = {
      {"conv2d", {Role::kConv, "input"}},
      {"depthwise_conv2d", {Role::kConv, "input"}},
      {"conv2d_transpose", {Role::kConv, "x"}},
      {"pool2d", {Role::kFormatted, "x"}},
      {"batch_norm", {Role::kFormatted, "x"}},
      {"bilinear_interp", {Role::kFormatted, "x"}},
      {"nearest_interp", {Role::kFormatted, "x"}},
      {"concat", {Role::kConcat, "x"}},
      {"reshape", {Role::kShuffle, "x"}},
      {"split", {Role::kSplit, "x"}},
      {"split_with_num", {Role::kSplit, "x"}},
  };
  if (auto it = rules.find(name); it != rules.end()) return it->second;
  // Elementwise ops with no axis attribute: the same formula on every element whatever the layout.
  static const std::set<std::string_view, std::less<>> elementwise = {
      "relu",      "relu6",   "sigmoid", "tanh",     "hardswish", "hardsigmoid", "swish",    "silu",
      "gelu",      "leaky_relu", "elu",  "mish",     "softplus",  "clip",        "scale",    "abs",
      "exp",       "sqrt",    "square",  "cast",     "assign",    "add",         "subtract", "multiply",
      "divide",    "maximum", "minimum", "elementwise_pow"};
  if (elementwise.count(name)) return {Role::kElementwise, {}};
  return {};
}

/// An integer array attribute (an int array, or an array of integers); false for anything else.
bool ints_of(const ir::Attribute* a, std::vector<int64_t>* out) {
  out->clear();
  if (a == nullptr) return false;
  if (a->kind == ir::AttrKind::kIntArray) {
    *out = a->ints;
    return true;
  }
  if (a->kind != ir::AttrKind::kArray) return false;
  for (const ir::Attribute& e : a->elements) {
    if (!e.is_integer()) return false;
    out->push_back(e.int_value);
  }
  return true;
}

/// An axis attribute: an integer or an integer scalar, as concat and split take it.
bool axis_of(const ir::Attribute* a) {
  return a != nullptr && (a->is_integer() || (a->kind == ir::AttrKind::kScalar && !ir::is_floating(a->dtype)));
}

/// A tensor every dim of which is statically 1 (a scalar of any rank): it broadcasts the same in either layout.
bool all_ones(const ir::Type& t) {
  return t.is_tensor() && std::all_of(t.dims.begin(), t.dims.end(), [](int64_t d) { return d == 1; });
}

}  // namespace

LayoutReport LayoutPlanner::run() {
  for (OpId id : p_.top_level_ops()) {
    if (!p_.op(id).regions.empty()) {
      report_.skipped = "control flow";
      return std::move(report_);
    }
  }
  if (ops_.find("pd_op.transpose") == nullptr) {  // the region's ends need it
    report_.skipped = "the op set has no transpose";
    return std::move(report_);
  }
  has_reshape_ = ops_.find("pd_op.reshape") != nullptr;
  if (blocked_ && !has_reshape_) {  // NCHW8c's ends split and merge the channel axis
    report_.skipped = "the op set has no reshape";
    return std::move(report_);
  }
  mark_pinned();
  const std::vector<OpId> order = p_.top_level_ops();  // the ops inserted below are not visited
  for (OpId id : order) {
    if (p_.op(id).erased || concat_pieces(id).valid()) continue;  // a concat's pieces: decided at the concat
    if (done_.count(id.index)) continue;  // converted with the channel shuffle it belongs to
    read_moved(id);
    if (const OpId pieces = concat_combine(id); pieces.valid()) read_moved(pieces);
    if (!try_convert(id)) {
      if (const OpId pieces = concat_combine(id); pieces.valid()) keep_nchw(pieces);
      keep_nchw(id);
    }
    note_writes(id);
  }
  return std::move(report_);
}

std::vector<size_t> LayoutPlanner::inplace_operands(const Op& op) const {
  std::vector<size_t> out;
  const opdef::PirOpSignature* sig = signature(op);
  if (!sig || !sig->op || !sig->inplace) return out;
  for (const opdef::InplacePair& pair : sig->op->inplace) {
    for (size_t i = 0; i < sig->operands.size() && i < op.operands.size(); ++i) {
      if (sig->operands[i].name == pair.input && op.operands[i].valid()) out.push_back(i);
    }
  }
  return out;
}

OpId LayoutPlanner::concat_combine(OpId id) const {
  const Op& op = p_.op(id);
  if (rule_of(op, options_, blocked_).role != Role::kConcat || op.operands.empty() || !op.operands[0].valid()) return {};
  const OpId combine = p_.defining_op(op.operands[0]);
  if (!combine.valid() || !p_.op(combine).is("builtin", "combine") || p_.uses(op.operands[0]).size() != 1) return {};
  return combine;
}

OpId LayoutPlanner::concat_pieces(OpId id) const {
  const Op& op = p_.op(id);
  if (!op.is("builtin", "combine") || op.results.size() != 1) return {};
  const std::vector<ir::Use> uses = p_.uses(op.results[0]);
  if (uses.size() != 1 || concat_combine(uses[0].op) != id) return {};
  return uses[0].op;
}

int LayoutPlanner::operand_index(const Op& op, std::string_view name) const {
  const opdef::PirOpSignature* sig = signature(op);
  if (!sig) return -1;
  for (size_t i = 0; i < sig->operands.size() && i < op.operands.size(); ++i) {
    if (sig->operands[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

void LayoutPlanner::mark_pinned() {
  for (OpId id : p_.top_level_ops()) {
    const Op& op = p_.op(id);
    if (rule_of(op, options_, blocked_).role != Role::kNone) continue;
    for (size_t i : inplace_operands(op)) pinned_.insert(op.operands[i].index);
  }
}

bool LayoutPlanner::fits(const ir::Type& t) const {
  if (!is_4d(t)) return false;
  if (!blocked_) return true;
  return t.dims[1] > 0 && t.dims[1] % kBlock == 0 && t.dims[2] >= 0 && t.dims[3] >= 0;
}

std::vector<int64_t> LayoutPlanner::region_dims(const std::vector<int64_t>& dims) const {
  if (!blocked_) return permuted(dims, kToNhwc);
  return {dims[0], dims[1] / kBlock, dims[2], dims[3], kBlock};
}

LayoutPlanner::Read LayoutPlanner::read_of(ValueId v) const {
  if (!v.valid() || is_nhwc(v)) return Read::kAsIs;
  const ir::Type& t = p_.type_of(v);
  if (all_ones(t)) return Read::kAsIs;
  return fits(t) ? Read::kTwin : Read::kNever;
}

bool LayoutPlanner::try_convert(OpId id) {
  const Rule rule = rule_of(p_.op(id), options_, blocked_);
  if (rule.role == Role::kShuffle) return convert_shuffle(id);
  if (rule.role == Role::kSplit) return convert_split(id);
  {
    const Op& op = p_.op(id);
    if (rule.role == Role::kNone || op.results.empty() || !fits(p_.type_of(op.results[0])) ||
        pinned_.count(op.results[0].index)) {
      return false;
    }
  }
  const std::vector<size_t> written = inplace_operands(p_.op(id));
  switch (rule.role) {
    case Role::kConv:
    case Role::kFormatted: {
      const Op& op = p_.op(id);
      const int x = operand_index(op, rule.operand);
      if (x < 0 || !op.operands[x].valid() || !is_4d_or_region(op.operands[x]) ||
          op.string_attr("data_format") != "NCHW") {
        return false;
      }
      if (rule.role == Role::kFormatted && !is_nhwc(op.operands[x])) return false;  // joins, never starts
      if (std::count(written.begin(), written.end(), static_cast<size_t>(x))) return false;
      // NCHW8c: a convolution of a 4-D value that cannot be blocked (a stem's 3 channels) reads it as it is and
      // writes NCHW8c (the kernels take that), instead of staying NCHW with its result transposed in.
      const bool stem = blocked_ && rule.role == Role::kConv && !is_nhwc(op.operands[x]) &&
                        !fits(p_.type_of(op.operands[x]));
      const ValueId input = stem ? op.operands[x] : nhwc_value(op.operands[x], id);
      p_.set_operand(id, static_cast<uint32_t>(x), input);
      p_.op(id).set_attr("data_format", ir::Attribute::string(report_.format));
      break;
    }
    case Role::kElementwise: {
      const Op& op = p_.op(id);
      if (op.results.size() != 1) return false;
      bool any_nhwc = false;
      for (size_t i = 0; i < op.operands.size(); ++i) {
        const ValueId v = op.operands[i];
        const Read r = read_of(v);
        if (r == Read::kNever) return false;
        // An in-place write must land in the operand itself, never in a twin.
        if (r == Read::kTwin && std::count(written.begin(), written.end(), i)) return false;
        any_nhwc = any_nhwc || (v.valid() && is_nhwc(v));
      }
      if (!any_nhwc) return false;
      for (size_t i = 0; i < p_.op(id).operands.size(); ++i) {
        const ValueId v = p_.op(id).operands[i];
        if (read_of(v) == Read::kTwin) {
          const ValueId t = twin(v, true, id);
          p_.set_operand(id, static_cast<uint32_t>(i), t);
        }
      }
      break;
    }
    case Role::kConcat:
      if (!convert_concat(id)) return false;
      break;
    case Role::kNone:
    case Role::kShuffle:
    case Role::kSplit: return false;
  }
  ir::Value& out = p_.value(p_.op(id).results[0]);
  out.type.dims = region_dims(out.type.dims);
  nhwc_.insert(out.id.index);
  report_.converted.push_back({id, p_.op(id).full_name()});
  return true;
}

bool LayoutPlanner::convert_concat(OpId id) {
  const Op& op = p_.op(id);
  if (op.operands.empty() || !op.operands[0].valid() || (op.operands.size() > 1 && op.operands[1].valid())) {
    return false;
  }
  const ir::Attribute* axis = op.attr("axis");
  if (axis == nullptr || !(axis->is_integer() || (axis->kind == ir::AttrKind::kScalar && !ir::is_floating(axis->dtype)))) {
    return false;
  }
  const OpId combine_id = concat_combine(id);
  if (!combine_id.valid()) return false;
  bool any_nhwc = false;
  for (ValueId v : p_.op(combine_id).operands) {
    if (!v.valid() || (!is_nhwc(v) && !fits(p_.type_of(v)))) return false;
    any_nhwc = any_nhwc || is_nhwc(v);
  }
  if (!any_nhwc) return false;
  const int64_t a = axis->int_value < 0 ? axis->int_value + 4 : axis->int_value;
  if (a < 0 || a > 3) return false;
  ir::Attribute moved = *axis;
  moved.int_value = region_axis(a);
  for (size_t i = 0; i < p_.op(combine_id).operands.size(); ++i) {
    const ValueId v = p_.op(combine_id).operands[i];
    if (is_nhwc(v)) continue;
    const ValueId t = twin(v, true, combine_id);
    p_.set_operand(combine_id, static_cast<uint32_t>(i), t);
  }
  ir::Type& pieces = p_.value(p_.op(combine_id).results[0]).type;
  for (ir::Type& t : pieces.elements) t.dims = region_dims(t.dims);
  p_.op(id).set_attr("axis", std::move(moved));
  return true;
}

OpId LayoutPlanner::only_reader(ValueId v, std::string_view full_name) const {
  const std::vector<ir::Use> uses = p_.uses(v);
  if (uses.size() != 1 || uses[0].operand_index != 0 || p_.op(uses[0].op).full_name() != full_name) return {};
  return uses[0].op;
}

bool LayoutPlanner::plain_reshape(OpId id, ValueId* out) const {
  const Op& op = p_.op(id);
  if (!op.is("pd_op", "reshape") || op.operands.empty() || !op.operands[0].valid() || op.results.empty()) return false;
  for (size_t i = 1; i < op.operands.size(); ++i) {
    if (op.operands[i].valid()) return false;
  }
  for (size_t i = 1; i < op.results.size(); ++i) {
    if (op.results[i].valid() && !p_.uses(op.results[i]).empty()) return false;
  }
  *out = op.results[0];
  return !pinned_.count(out->index);
}

bool LayoutPlanner::convert_shuffle(OpId first) {
  ValueId grouped, shuffled, out;
  if (!plain_reshape(first, &grouped) || !is_nhwc(p_.op(first).operands[0])) return false;
  const std::vector<int64_t> x = p_.type_of(p_.op(first).operands[0]).dims;  // NHWC
  const std::vector<int64_t> g5 = p_.type_of(grouped).dims;
  if (x.size() != 4 || g5.size() != 5 || g5[0] != x[0] || g5[3] != x[1] || g5[4] != x[2] || g5[1] <= 0 ||
      g5[2] <= 0 || g5[1] * g5[2] != x[3] || x[1] < 0 || x[2] < 0) {
    return false;
  }
  const OpId transpose = only_reader(grouped, "pd_op.transpose");
  std::vector<int64_t> perm;
  if (!transpose.valid() || !ints_of(p_.op(transpose).attr("perm"), &perm) ||
      perm != std::vector<int64_t>{0, 2, 1, 3, 4} || p_.op(transpose).results.size() != 1) {
    return false;
  }
  shuffled = p_.op(transpose).results[0];
  const OpId last = only_reader(shuffled, "pd_op.reshape");
  if (!last.valid() || !plain_reshape(last, &out) || p_.type_of(out).dims != permuted(x, kToNchw)) return false;
  std::vector<int64_t> first_shape, last_shape;
  if (!ints_of(p_.op(first).attr("shape"), &first_shape) || first_shape.size() != 5 ||
      !ints_of(p_.op(last).attr("shape"), &last_shape) || last_shape.size() != 4) {
    return false;
  }
  // The batch entry of each shape stays as written (a 0 or -1 for a dynamic batch); the rest is static.
  p_.op(first).set_attr("shape", ir::Attribute::int_array({first_shape[0], x[1], x[2], g5[1], g5[2]}));
  p_.value(grouped).type.dims = {x[0], x[1], x[2], g5[1], g5[2]};
  std::vector<ir::Attribute> nhwc_perm;
  for (int32_t d : {0, 1, 2, 4, 3}) nhwc_perm.push_back(ir::Attribute::int32(d));
  p_.op(transpose).set_attr("perm", ir::Attribute::array(std::move(nhwc_perm)));
  p_.value(shuffled).type.dims = {x[0], x[1], x[2], g5[2], g5[1]};
  p_.op(last).set_attr("shape", ir::Attribute::int_array({last_shape[0], x[1], x[2], x[3]}));
  p_.value(out).type.dims = x;
  nhwc_.insert(out.index);
  done_.insert(transpose.index);
  done_.insert(last.index);
  for (OpId id : {first, transpose, last}) report_.converted.push_back({id, p_.op(id).full_name()});
  return true;
}

bool LayoutPlanner::convert_split(OpId id) {
  const Op& op = p_.op(id);
  if (op.name.back() == '_' || op.operands.empty() || !op.operands[0].valid() || !is_nhwc(op.operands[0]) ||
      op.results.size() != 1 || !axis_of(op.attr("axis"))) {
    return false;
  }
  for (size_t i = 1; i < op.operands.size(); ++i) {
    if (op.operands[i].valid()) return false;  // sections or axis computed at run time
  }
  const OpId unpack = only_reader(op.results[0], "builtin.split");
  if (!unpack.valid()) return false;
  for (ValueId piece : p_.op(unpack).results) {
    if (!piece.valid() || !fits(p_.type_of(piece)) || pinned_.count(piece.index)) return false;
  }
  const int64_t a = op.attr("axis")->int_value < 0 ? op.attr("axis")->int_value + 4 : op.attr("axis")->int_value;
  if (a < 0 || a > 3) return false;
  // NCHW8c along the channels: split's sections count blocks (each piece's channels are a multiple of 8).
  std::vector<int64_t> sections;
  const bool blocked_sections = blocked_ && a == 1 && op.is("pd_op", "split");
  if (blocked_sections && !ints_of(op.attr("sections"), &sections)) return false;
  ir::Attribute moved = *op.attr("axis");
  moved.int_value = region_axis(a);
  p_.op(id).set_attr("axis", std::move(moved));
  if (blocked_sections) {
    for (int64_t& n : sections) n = n < 0 ? n : n / kBlock;  // -1: the rest, as before
    p_.op(id).set_attr("sections", ir::Attribute::int_array(std::move(sections)));
  }
  for (ir::Type& t : p_.value(p_.op(id).results[0]).type.elements) t.dims = region_dims(t.dims);
  for (ValueId piece : p_.op(unpack).results) {
    ir::Type& t = p_.value(piece).type;
    t.dims = region_dims(t.dims);
    nhwc_.insert(piece.index);
  }
  report_.converted.push_back({id, p_.op(id).full_name()});
  return true;
}

}  // namespace layout_internal

std::string LayoutReport::dump(const ir::Program& program) const {
  std::map<uint32_t, size_t> position;
  const std::vector<ir::OpId>& order = program.top_level_ops();
  for (size_t i = 0; i < order.size(); ++i) position[order[i].index] = i;
  std::map<size_t, std::string> lines;
  for (const Converted& c : converted) {
    if (position.count(c.op.index)) {
      lines[position[c.op.index]] = fmt::format("layout: op {} {} -> {}\n", position[c.op.index], c.name, format);
    }
  }
  for (const Transpose& t : transposes) {
    if (!position.count(t.op.index)) continue;
    const std::string after = t.after.valid() ? program.op(t.after).full_name() : "the block's start";
    lines[position[t.op.index]] =
        fmt::format("layout: op {} {} {} after {}\n", position[t.op.index], t.view ? "pd_op.reshape" : "pd_op.transpose",
                    t.into_region ? "NCHW -> " + format : format + " -> NCHW", after);
  }
  std::string out = fmt::format("layout: {}, {} ops converted, {} transposes{}\n", format, converted.size(),
                                transposes.size(), skipped.empty() ? "" : " (skipped: " + skipped + ")");
  for (const auto& [pos, line] : lines) out += line;
  return out;
}

LayoutReport plan_layouts(ir::Program& program, const OpSet& ops, LayoutChoice choice,
                          const LayoutOptions& options) {
  if (choice == LayoutChoice::kNchw) return {};
  if (program.find_ops("pd_op.conv2d").empty() && program.find_ops("pd_op.depthwise_conv2d").empty() &&
      program.find_ops("pd_op.conv2d_transpose").empty()) {
    return {};  // no region can start
  }
  return layout_internal::LayoutPlanner(program, ops, options, choice == LayoutChoice::kNchw8c).run();
}

}  // namespace kforge::passes