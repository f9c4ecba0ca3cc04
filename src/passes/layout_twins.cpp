// The layout plan's twins (layout_internal.h): where an op stays NCHW it reads the NCHW twin of each operand in the
// region's layout, and the region reads the twin of each NCHW operand: a transpose, a reshape where no element
// moves, or for NCHW8c a reshape and a transpose; in-place writes through a twin make it the value from then on.
#include "passes/layout_internal.h"

namespace kforge::passes::layout_internal {

namespace {

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

}  // namespace

void LayoutPlanner::keep_nchw(OpId id) {
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

void LayoutPlanner::read_moved(OpId id) {
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

void LayoutPlanner::note_writes(OpId id) {
  const Op& op = p_.op(id);
  for (size_t i : inplace_operands(op)) {
    const uint32_t v = op.operands[i].index;
    last_writer_[v] = id;
    twins_.erase({v, true});
    twins_.erase({v, false});
  }
}

ValueId LayoutPlanner::twin(ValueId v, bool into, OpId reader) {
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

ValueId LayoutPlanner::blocked_twin(ValueId v, const ir::Type& type, bool into, OpId after, SourceLoc loc, size_t* position) {
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

ValueId LayoutPlanner::insert_reshape(ValueId v, const std::vector<int64_t>& dims, bool into, OpId after, SourceLoc loc,
                       size_t* position) {
  ir::OpSpec spec = op_spec("reshape", v, dims, loc);
  spec.operands = {v, ValueId{}};
  std::vector<int64_t> shape = dims;
  if (shape[0] < 0) shape[0] = 0;
  spec.attributes.push_back({"shape", ir::Attribute::int_array(std::move(shape)), {}});
  return insert(std::move(spec), into, after, true, position);
}

ValueId LayoutPlanner::insert_transpose(ValueId v, const std::vector<size_t>& perm, const std::vector<int64_t>& dims, bool into,
                         OpId after, SourceLoc loc, size_t* position) {
  ir::OpSpec spec = op_spec("transpose", v, dims, loc);
  spec.operands = {v};
  std::vector<ir::Attribute> perm_attr;
  for (size_t d : perm) perm_attr.push_back(ir::Attribute::int32(static_cast<int32_t>(d)));
  spec.attributes.push_back({"perm", ir::Attribute::array(std::move(perm_attr)), {}});
  return insert(std::move(spec), into, after, false, position);
}

ir::OpSpec LayoutPlanner::op_spec(const char* name, ValueId v, const std::vector<int64_t>& dims, SourceLoc loc) const {
  ir::OpSpec spec;
  spec.dialect = "pd_op";
  spec.name = name;
  spec.result_types = {ir::Type::tensor(p_.type_of(v).dtype, dims)};
  spec.loc = loc;
  spec.name_loc = loc;
  return spec;
}

ValueId LayoutPlanner::insert(ir::OpSpec spec, bool into, OpId after, bool view, size_t* position) {
  const OpId t = p_.insert_op(p_.top_block(), (*position)++, std::move(spec));
  report_.transposes.push_back({t, into, after, view});
  return p_.op(t).results[0];
}

}  // namespace kforge::passes::layout_internal
