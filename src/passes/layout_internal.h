// The LayoutPlanner of plan_layouts (layout.h), shared by the files that define its members: layout.cpp (the
// walk: which ops convert to the region's layout, concats, channel shuffles and splits) and layout_twins.cpp (the
// transposes and reshapes at a region's ends: an operand's twin in or out of the region's layout, in-place writes
// through twins). Internal to passes/.
#pragma once

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "passes/layout.h"

namespace kforge::passes::layout_internal {

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
inline std::vector<int64_t> permuted(const std::vector<int64_t>& dims, const Perm& perm) {
  std::vector<int64_t> out(4);
  for (size_t i = 0; i < 4; ++i) out[i] = dims[perm[i]];
  return out;
}

inline bool is_4d(const ir::Type& t) { return t.is_tensor() && t.rank() == 4; }

class LayoutPlanner {
 public:
  LayoutPlanner(ir::Program& program, const OpSet& ops, const LayoutOptions& options, bool blocked)
      : p_(program), ops_(ops), options_(options), blocked_(blocked) {
    report_.format = blocked ? "NCHW8c" : "NHWC";
  }

  LayoutReport run();

 private:
  const opdef::PirOpSignature* signature(const Op& op) const { return ops_.find(op.full_name()); }

  /// Operand indices an in-place op writes.
  std::vector<size_t> inplace_operands(const Op& op) const;

  /// The builtin.combine whose result only the concat `id` reads, or an invalid id.
  OpId concat_combine(OpId id) const;

  /// For a builtin.combine read only by a concat: that concat.
  OpId concat_pieces(OpId id) const;

  int operand_index(const Op& op, std::string_view name) const;

  /// Values an op that stays NCHW writes in place can never be NHWC: the write must land in the value itself.
  void mark_pinned();

  bool is_nhwc(ValueId v) const { return nhwc_.count(v.index) > 0; }

  /// Whether a value of type t can be in a region: 4-D; for NCHW8c also a static multiple of 8 channels and static
  /// spatial dims (the reshapes at a region's ends spell them out; only the batch may be dynamic).
  bool fits(const ir::Type& t) const;

  /// A value in the region already, or a 4-D one.
  bool is_4d_or_region(ValueId v) const { return is_nhwc(v) || is_4d(p_.type_of(v)); }

  /// A region value's dims for NCHW dims: NHWC [N, H, W, C] or NCHW8c [N, C / 8, H, W, 8].
  std::vector<int64_t> region_dims(const std::vector<int64_t>& dims) const;

  /// Where NCHW axis a of a concat or split sits in the region's layout (NCHW8c: axis 1 still holds the channels,
  /// in blocks; every piece's channel count is a multiple of 8).
  int64_t region_axis(int64_t a) const { return blocked_ ? a : kNhwcAxisOf[a]; }

  /// How operand v of a joining op is read in NHWC: as it is (already NHWC, or a scalar), or through a twin.
  enum class Read { kAsIs, kTwin, kNever };
  Read read_of(ValueId v) const;

  // The Program's op arena may grow when a twin is inserted: ops are looked up again after every insertion.
  bool try_convert(OpId id);

  /// concat(combine(a, b, ...), axis): every piece 4-D, the combine read by this concat alone, the axis a constant.
  bool convert_concat(OpId id);

  /// The one op reading `v` (as its operand 0), if it is `full_name`; else an invalid id.
  OpId only_reader(ValueId v, std::string_view full_name) const;

  /// A reshape whose shape is an attribute (not computed), not in place; `out` its result (extra results unused).
  bool plain_reshape(OpId id, ValueId* out) const;

  /// A channel shuffle of an NHWC value x [N, H, W, C]: reshape to [N, G, C / G, H, W], transpose [0, 2, 1, 3, 4],
  /// reshape to [N, C, H, W], each read only by the next. In NHWC it is reshape to [N, H, W, G, C / G], transpose
  /// [0, 1, 2, 4, 3], reshape to [N, H, W, C]: the same channel order, no layout transpose around it (shufflenet's
  /// blocks left NHWC for it). The three ops are converted here; the walk skips the last two.
  bool convert_shuffle(OpId first);

  /// split / split_with_num of an NHWC value along a constant axis, read only by the builtin.split that names its
  /// pieces: the axis moves (1 -> 3) and the pieces are NHWC.
  bool convert_split(OpId id);

  /// An op that stays NCHW reads the NCHW twin of every NHWC operand. When it writes that operand in place, the
  /// write lands in the twin: from then on the twin is the value, and later readers read it (read_moved).
  void keep_nchw(OpId id);

  /// Operands whose value an earlier NCHW in-place op wrote through its twin read that twin instead.
  void read_moved(OpId id);

  /// After an in-place write, twins made before it hold stale values: the next reader makes a fresh one after it.
  void note_writes(OpId id);

  ValueId nhwc_value(ValueId v, OpId reader) { return is_nhwc(v) ? v : twin(v, true, reader); }

  /// v's twin in (into) or out of the region's layout, made once after v's last writer: a transpose (NHWC), a
  /// reshape + transpose + (NCHW8c, out of a region: transpose + reshape), or one reshape where no element moves.
  ValueId twin(ValueId v, bool into, OpId reader);

  /// NCHW [N, C, H, W] <-> NCHW8c [N, C / 8, H, W, 8] through [N, C / 8, 8, H, W]; one reshape when H = W = 1.
  ValueId blocked_twin(ValueId v, const ir::Type& type, bool into, OpId after, SourceLoc loc, size_t* position);

  /// Inserts `reshape(v, dims)` (a dynamic batch as reshape's 0: x's dim 0) at *position, which moves past it.
  ValueId insert_reshape(ValueId v, const std::vector<int64_t>& dims, bool into, OpId after, SourceLoc loc,
                         size_t* position);

  ValueId insert_transpose(ValueId v, const std::vector<size_t>& perm, const std::vector<int64_t>& dims, bool into,
                           OpId after, SourceLoc loc, size_t* position);

  /// An op of `v`'s dtype whose result has `dims`.
  ir::OpSpec op_spec(const char* name, ValueId v, const std::vector<int64_t>& dims, SourceLoc loc) const;

  ValueId insert(ir::OpSpec spec, bool into, OpId after, bool view, size_t* position);

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

}  // namespace kforge::passes::layout_internal
