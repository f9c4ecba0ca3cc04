// Splits as views (split_views.h): one walk over the calls in order.
#include "passes/split_views.h"

#include <algorithm>

#include <fmt/format.h>

#include "passes/memory_plan.h"

namespace kforge::passes {

namespace {

class Viewer {
 public:
  Viewer(LoweredProgram& program, const std::vector<uint32_t>& call_group)
      : p_(program), call_group_(call_group), is_output_(program.values.size(), false) {
    for (const ProgramOutput& o : p_.outputs) is_output_[o.value] = true;
  }

  std::vector<SplitView> run() {
    for (uint32_t c = 0; c < p_.calls.size(); ++c) {
      const std::string& op = p_.calls[c].op;
      const bool grouped = c < call_group_.size() && call_group_[c] != kNone;
      if ((op == "split" || op == "split_with_num") && !grouped) view_pieces_of(c);
    }
    if (!views_.empty()) plan_memory(p_, p_.plan.alignment);
    return std::move(views_);
  }

 private:
  /// Whether call `c` only renames memory: a view op (reshape, squeeze, ...) that is no in-place twin.
  bool is_view_call(uint32_t c) const {
    return !view_pairs(p_.calls[c], p_.values).empty();
  }

  /// Whether a call after `c` writes buffer `b`: it defines a value there that is no view's.
  bool written_after(const Buffer& b, uint32_t c) const {
    return std::any_of(b.values.begin(), b.values.end(), [&](uint32_t m) {
      const LoweredValue& v = p_.value(m);
      return v.role == ValueRole::kComputed && v.defined_by != kNone && v.defined_by > c && !is_view_call(v.defined_by);
    });
  }

  /// A workspace buffer of the plan's values (no scratch, not the caller's output).
  static bool is_plain_workspace(const Buffer& b) { return b.kind == BufferKind::kWorkspace && b.scratch_at == kNone; }

  /// Whether piece `x` of split `c` can become a view: a workspace buffer of its own, shared only with its views (so
  /// nothing writes it after the split), no program output.
  bool viewable(uint32_t x, uint32_t c) const {
    const LoweredValue& v = p_.value(x);
    if (v.role != ValueRole::kComputed || v.defined_by != c || v.buffer == kNone || is_output_[x]) return false;
    const Buffer& b = p_.buffer_of(x);
    return is_plain_workspace(b) && std::all_of(b.values.begin(), b.values.end(), [&](uint32_t m) {
             return m == x || (p_.value(m).defined_by != kNone && is_view_call(p_.value(m).defined_by));
           });
  }

  void view_pieces_of(uint32_t c) {
    const KernelCall& call = p_.calls[c];
    const KernelArg* x = call.arg("x");
    const KernelArg* axis = call.arg("axis");
    if (x == nullptr || x->kind != ArgKind::kTensor || x->value == kNone || axis == nullptr ||
        axis->kind != ArgKind::kConstant || axis->constant.scalar.is_floating || call.outputs.size() != 1) {
      return;
    }
    const LoweredValue& in = p_.value(x->value);
    const int64_t rank = static_cast<int64_t>(in.dims.size());
    int64_t a = axis->constant.scalar.int_value;
    if (a < 0) a += rank;
    if (a < 0 || a >= rank || in.role != ValueRole::kComputed || in.buffer == kNone) return;
    const Buffer& b = p_.buffer_of(x->value);
    // Contiguous pieces: one element before the axis; their offsets need the dims from the axis on.
    const SymShape before(in.dims.begin(), in.dims.begin() + a);
    if (!is_plain_workspace(b) || sym_numel(before).constant() != std::optional<int64_t>(1) || written_after(b, c)) {
      return;
    }
    const int64_t esize = static_cast<int64_t>(ir::dtype_size(in.dtype));
    int64_t column = 0;  // elements of the input before this piece
    for (uint32_t piece : call.outputs[0].values) {
      if (piece == kNone) return;  // an absent piece: its extent is unknown here, and so the next one's offset
      const std::optional<int64_t> n = p_.value(piece).numel().constant();
      if (!n) return;
      const int64_t offset = column * esize;
      column += *n;
      if (!viewable(piece, c)) continue;
      move_into_slice(p_, piece, x->value, offset);
      views_.push_back({c, piece, offset});
    }
  }

  LoweredProgram& p_;
  const std::vector<uint32_t>& call_group_;
  std::vector<bool> is_output_;
  std::vector<SplitView> views_;
};

}  // namespace

std::vector<SplitView> make_split_views(LoweredProgram& program, const std::vector<uint32_t>& call_group) {
  return Viewer(program, call_group).run();
}

std::string dump_split_views(const std::vector<SplitView>& views) {
  std::string out;
  for (const SplitView& v : views) out += fmt::format("split call {}: v{} at +{}\n", v.split, v.value, v.offset);
  return out;
}

}  // namespace kforge::passes
