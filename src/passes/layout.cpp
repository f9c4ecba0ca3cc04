// The layout plan (layout.h): one forward walk over the top-level block.
#include "passes/layout.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string_view>

#include <fmt/format.h>

namespace kforge::passes {

namespace {

using ir::Op;
using ir::OpId;
using ir::ValueId;

using Perm = std::array<size_t, 4>;
constexpr Perm kToNhwc = {0, 2, 3, 1};  // nhwc[i] = nchw[kToNhwc[i]]
constexpr Perm kToNchw = {0, 3, 1, 2};  // nchw[i] = nhwc[kToNchw[i]]
// Where NCHW axis a sits in NHWC, and NHWC axis a in NCHW.
constexpr std::array<int64_t, 4> kNhwcAxisOf = {0, 3, 1, 2};
constexpr std::array<int64_t, 4> kNchwAxisOf = {0, 2, 3, 1};
constexpr int64_t kBlock = 8;  // NCHW8c's channels per block

std::vector<int64_t> permuted(const std::vector<int64_t>& dims, const Perm& perm) {
  std::vector<int64_t> out(4);
  for (size_t i = 0; i < 4; ++i) out[i] = dims[perm[i]];
  return out;
}

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

/// Whether a static 4-D tensor's elements keep their order when its axes move to `position_of` (kNhwcAxisOf, or
/// kNchwAxisOf): the axes other than 1 stay in order ([1, C, 1, 1] <-> [1, 1, 1, C], [N, C, 1, 1] <-> [N, 1, 1, C]).
/// Then a reshape does what the transpose would. A dynamic dim may only be the batch.
bool same_order(const std::vector<int64_t>& dims, const std::array<int64_t, 4>& position_of) {
  int64_t last = -1;
  for (size_t a = 0; a < 4; ++a) {
    if (dims[a] < 0 && a != 0) return false;  // a dynamic batch stays first: the reshape copies it (shape 0)
    if (dims[a] == 1) continue;
    if (position_of[a] < last) return false;
    last = position_of[a];
  }
  return true;
}

bool is_4d(const ir::Type& t) { return t.is_tensor() && t.rank() == 4; }

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

class LayoutPlanner {
 public:
  LayoutPlanner(ir::Program& program, const OpSet& ops, const LayoutOptions& options, bool blocked)
      : p_(program), ops_(ops), options_(options), blocked_(blocked) {
    report_.format = blocked ? "NCHW8c" : "NHWC";
  }

  LayoutReport run() {
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

 private:
  const opdef::PirOpSignature* signature(const Op& op) const { return ops_.find(op.full_name()); }

  /// Operand indices an in-place op writes.
  std::vector<size_t> inplace_operands(const Op& op) const {
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

  /// The builtin.combine whose result only the concat `id` reads, or an invalid id.
  OpId concat_combine(OpId id) const {
    const Op& op = p_.op(id);
    if (rule_of(op, options_, blocked_).role != Role::kConcat || op.operands.empty() || !op.operands[0].valid()) return {};
    const OpId combine = p_.defining_op(op.operands[0]);
    if (!combine.valid() || !p_.op(combine).is("builtin", "combine") || p_.uses(op.operands[0]).size() != 1) return {};
    return combine;
  }

  /// For a builtin.combine read only by a concat: that concat.
  OpId concat_pieces(OpId id) const {
    const Op& op = p_.op(id);
    if (!op.is("builtin", "combine") || op.results.size() != 1) return {};
    const std::vector<ir::Use> uses = p_.uses(op.results[0]);
    if (uses.size() != 1 || concat_combine(uses[0].op) != id) return {};
    return uses[0].op;
  }

  int operand_index(const Op& op, std::string_view name) const {
    const opdef::PirOpSignature* sig = signature(op);
    if (!sig) return -1;
    for (size_t i = 0; i < sig->operands.size() && i < op.operands.size(); ++i) {
      if (sig->operands[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }

  /// Values an op that stays NCHW writes in place can never be NHWC: the write must land in the value itself.
  void mark_pinned() {
    for (OpId id : p_.top_level_ops()) {
      const Op& op = p_.op(id);
      if (rule_of(op, options_, blocked_).role != Role::kNone) continue;
      for (size_t i : inplace_operands(op)) pinned_.insert(op.operands[i].index);
    }
  }

  bool is_nhwc(ValueId v) const { return nhwc_.count(v.index) > 0; }

  /// Whether a value of type t can be in a region: 4-D; for NCHW8c also a static multiple of 8 channels and static
  /// spatial dims (the reshapes at a region's ends spell them out; only the batch may be dynamic).
  bool fits(const ir::Type& t) const {
    if (!is_4d(t)) return false;
    if (!blocked_) return true;
    return t.dims[1] > 0 && t.dims[1] % kBlock == 0 && t.dims[2] >= 0 && t.dims[3] >= 0;
  }

  /// A value in the region already, or a 4-D one.
  bool is_4d_or_region(ValueId v) const { return is_nhwc(v) || is_4d(p_.type_of(v)); }

  /// A region value's dims for NCHW dims: NHWC [N, H, W, C] or NCHW8c [N, C / 8, H, W, 8].
  std::vector<int64_t> region_dims(const std::vector<int64_t>& dims) const {
    if (!blocked_) return permuted(dims, kToNhwc);
    return {dims[0], dims[1] / kBlock, dims[2], dims[3], kBlock};
  }

  /// Where NCHW axis a of a concat or split sits in the region's layout (NCHW8c: axis 1 still holds the channels,
  /// in blocks; every piece's channel count is a multiple of 8).
  int64_t region_axis(int64_t a) const { return blocked_ ? a : kNhwcAxisOf[a]; }

  /// How operand v of a joining op is read in NHWC: as it is (already NHWC, or a scalar), or through a twin.
  enum class Read { kAsIs, kTwin, kNever };
  Read read_of(ValueId v) const {
    if (!v.valid() || is_nhwc(v)) return Read::kAsIs;
    const ir::Type& t = p_.type_of(v);
    if (all_ones(t)) return Read::kAsIs;
    return fits(t) ? Read::kTwin : Read::kNever;
  }

  // The Program's op arena may grow when a twin is inserted: ops are looked up again after every insertion.
  bool try_convert(OpId id) {
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

  /// concat(combine(a, b, ...), axis): every piece 4-D, the combine read by this concat alone, the axis a constant.
  bool convert_concat(OpId id) {
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

  /// The one op reading `v` (as its operand 0), if it is `full_name`; else an invalid id.
  OpId only_reader(ValueId v, std::string_view full_name) const {
    const std::vector<ir::Use> uses = p_.uses(v);
    if (uses.size() != 1 || uses[0].operand_index != 0 || p_.op(uses[0].op).full_name() != full_name) return {};
    return uses[0].op;
  }

  /// A reshape whose shape is an attribute (not computed), not in place; `out` its result (extra results unused).
  bool plain_reshape(OpId id, ValueId* out) const {
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

  /// A channel shuffle of an NHWC value x [N, H, W, C]: reshape to [N, G, C / G, H, W], transpose [0, 2, 1, 3, 4],
  /// reshape to [N, C, H, W], each read only by the next. In NHWC it is reshape to [N, H, W, G, C / G], transpose
  /// [0, 1, 2, 4, 3], reshape to [N, H, W, C]: the same channel order, no layout transpose around it (shufflenet's
  /// blocks left NHWC for it). The three ops are converted here; the walk skips the last two.
  bool convert_shuffle(OpId first) {
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

  /// split / split_with_num of an NHWC value along a constant axis, read only by the builtin.split that names its
  /// pieces: the axis moves (1 -> 3) and the pieces are NHWC.
  bool convert_split(OpId id) {
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

  /// An op that stays NCHW reads the NCHW twin of every NHWC operand. When it writes that operand in place, the
  /// write lands in the twin: from then on the twin is the value, and later readers read it (read_moved).
  void keep_nchw(OpId id) {
    const std::vector<size_t> written = inplace_operands(p_.op(id));
    for (size_t i = 0; i < p_.op(id).operands.size(); ++i) {
      const ValueId v = p_.op(id).operands[i];
      if (!v.valid() || !is_nhwc(v)) continue;
      const ValueId t = twin(v, false, id);
      p_.set_operand(id, static_cast<uint32_t>(i), t);
      if (std::count(written.begin(), written.end(), i)) {
        moved_[v.index] = t;
        twins_.erase({v.index, false});
      }
    }
  }

  /// Operands whose value an earlier NCHW in-place op wrote through its twin read that twin instead.
  void read_moved(OpId id) {
    for (size_t i = 0; i < p_.op(id).operands.size(); ++i) {
      ValueId v = p_.op(id).operands[i];
      bool moved = false;
      for (auto it = moved_.find(v.index); v.valid() && it != moved_.end(); it = moved_.find(v.index)) {
        v = it->second;
        moved = true;
      }
      if (moved) p_.set_operand(id, static_cast<uint32_t>(i), v);
    }
  }

  /// After an in-place write, twins made before it hold stale values: the next reader makes a fresh one after it.
  void note_writes(OpId id) {
    const Op& op = p_.op(id);
    for (size_t i : inplace_operands(op)) {
      const uint32_t v = op.operands[i].index;
      last_writer_[v] = id;
      twins_.erase({v, true});
      twins_.erase({v, false});
    }
  }

  ValueId nhwc_value(ValueId v, OpId reader) { return is_nhwc(v) ? v : twin(v, true, reader); }

  /// v's twin in (into) or out of the region's layout, made once after v's last writer: a transpose (NHWC), a
  /// reshape + transpose + (NCHW8c, out of a region: transpose + reshape), or one reshape where no element moves.
  ValueId twin(ValueId v, bool into, OpId reader) {
    if (auto it = twins_.find({v.index, into}); it != twins_.end()) return it->second;
    auto w = last_writer_.find(v.index);
    const OpId after = w != last_writer_.end() ? w->second : p_.defining_op(v);
    const std::vector<OpId>& ops = p_.block(p_.top_block()).ops;
    size_t position = 0;
    if (after.valid()) position = static_cast<size_t>(std::find(ops.begin(), ops.end(), after) - ops.begin()) + 1;
    const SourceLoc loc = p_.op(after.valid() ? after : reader).loc;
    const ir::Type type = p_.type_of(v);
    ValueId out;
    if (!blocked_) {
      const Perm& perm = into ? kToNhwc : kToNchw;
      const std::vector<int64_t> dims = permuted(type.dims, perm);
      if (has_reshape_ && same_order(type.dims, into ? kNhwcAxisOf : kNchwAxisOf)) {
        out = insert_reshape(v, dims, into, after, loc, &position);  // a view: no copy, a parameter stays put
      } else {
        out = insert_transpose(v, {perm.begin(), perm.end()}, dims, into, after, loc, &position);
      }
    } else {
      out = blocked_twin(v, type, into, after, loc, &position);
    }
    if (into) nhwc_.insert(out.index);
    twins_[{v.index, into}] = out;
    return out;
  }

  /// NCHW [N, C, H, W] <-> NCHW8c [N, C / 8, H, W, 8] through [N, C / 8, 8, H, W]; one reshape when H = W = 1.
  ValueId blocked_twin(ValueId v, const ir::Type& type, bool into, OpId after, SourceLoc loc, size_t* position) {
    const std::vector<int64_t>& d = type.dims;  // NCHW, or NCHW8c when leaving a region
    const int64_t n = d[0], c = into ? d[1] : d[1] * kBlock, h = d[2], w = d[3];
    const std::vector<int64_t> nchw = {n, c, h, w}, blocked = {n, c / kBlock, h, w, kBlock};
    if (h == 1 && w == 1) return insert_reshape(v, into ? blocked : nchw, into, after, loc, position);
    const std::vector<int64_t> split = {n, c / kBlock, kBlock, h, w};
    if (into) {
      const ValueId s = insert_reshape(v, split, into, after, loc, position);
      return insert_transpose(s, {0, 1, 3, 4, 2}, blocked, into, after, loc, position);
    }
    const ValueId t = insert_transpose(v, {0, 1, 4, 2, 3}, split, into, after, loc, position);
    return insert_reshape(t, nchw, into, after, loc, position);
  }

  /// Inserts `reshape(v, dims)` (a dynamic batch as reshape's 0: x's dim 0) at *position, which moves past it.
  ValueId insert_reshape(ValueId v, const std::vector<int64_t>& dims, bool into, OpId after, SourceLoc loc,
                         size_t* position) {
    ir::OpSpec spec = op_spec("reshape", v, dims, loc);
    spec.operands = {v, ValueId{}};
    std::vector<int64_t> shape = dims;
    if (shape[0] < 0) shape[0] = 0;
    spec.attributes.push_back({"shape", ir::Attribute::int_array(std::move(shape)), {}});
    return insert(std::move(spec), into, after, true, position);
  }

  ValueId insert_transpose(ValueId v, const std::vector<size_t>& perm, const std::vector<int64_t>& dims, bool into,
                           OpId after, SourceLoc loc, size_t* position) {
    ir::OpSpec spec = op_spec("transpose", v, dims, loc);
    spec.operands = {v};
    std::vector<ir::Attribute> perm_attr;
    for (size_t d : perm) perm_attr.push_back(ir::Attribute::int32(static_cast<int32_t>(d)));
    spec.attributes.push_back({"perm", ir::Attribute::array(std::move(perm_attr)), {}});
    return insert(std::move(spec), into, after, false, position);
  }

  /// An op of `v`'s dtype whose result has `dims`.
  ir::OpSpec op_spec(const char* name, ValueId v, const std::vector<int64_t>& dims, SourceLoc loc) const {
    ir::OpSpec spec;
    spec.dialect = "pd_op";
    spec.name = name;
    spec.result_types = {ir::Type::tensor(p_.type_of(v).dtype, dims)};
    spec.loc = loc;
    spec.name_loc = loc;
    return spec;
  }

  ValueId insert(ir::OpSpec spec, bool into, OpId after, bool view, size_t* position) {
    const OpId t = p_.insert_op(p_.top_block(), (*position)++, std::move(spec));
    report_.transposes.push_back({t, into, after, view});
    return p_.op(t).results[0];
  }

  ir::Program& p_;
  const OpSet& ops_;
  const LayoutOptions options_;
  const bool blocked_;  // NCHW8c regions, else NHWC
  LayoutReport report_;
  bool has_reshape_ = false;
  std::set<uint32_t> nhwc_;    // values in the region's layout (converted results and twins into it)
  std::set<uint32_t> done_;    // ops converted ahead of the walk (a channel shuffle's transpose and last reshape)
  std::set<uint32_t> pinned_;  // values written in place by ops that stay NCHW
  std::map<uint32_t, OpId> last_writer_;                    // in-place writers, by value
  std::map<std::pair<uint32_t, bool>, ValueId> twins_;      // (value, into the region) -> its twin
  std::map<uint32_t, ValueId> moved_;  // NHWC values an NCHW in-place op wrote through their twin -> that twin
};

}  // namespace

std::string LayoutReport::dump(const ir::Program& program) const {
  std::map<uint32_t, size_t> position;
  const std::vector<OpId>& order = program.top_level_ops();
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
  return LayoutPlanner(program, ops, options, choice == LayoutChoice::kNchw8c).run();
}

}  // namespace kforge::passes
