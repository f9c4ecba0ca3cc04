// Lowering, the buffers (lower_internal.h): which values share memory (views, in-place outputs, outputs that are
// their inputs) and the buffer of each, with its kind, size and the last call that reads it.
#include "passes/lower_internal.h"

namespace kforge::passes::lower_internal {

uint32_t Lowerer::find(std::vector<uint32_t>& parent, uint32_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

void Lowerer::assign_buffers() {
  const uint32_t n = static_cast<uint32_t>(out_.values.size());
  const uint32_t calls = static_cast<uint32_t>(out_.calls.size());
  std::vector<uint32_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0u);
  auto is_owned = [&](uint32_t v) { return out_.values[v].role == ValueRole::kComputed; };
  // A view or in-place output sized by a data-dependent dim that its input is not (a reshape to a shape read at run
  // time) keeps a buffer of its own: one buffer would be laid out at run time, after the input is written.
  auto sized_apart = [&](uint32_t in, uint32_t o) {
    return data_dependent(out_.values[in].bytes()) != data_dependent(out_.values[o].bytes());
  };

  // Reads and writes per value, in call order.
  std::vector<uint32_t> last_use(n, 0);
  std::vector<bool> has_use(n, false);
  for (uint32_t c = 0; c < calls; ++c) {
    for (const KernelArg& a : out_.calls[c].args) {
      if (a.value != kNone) {
        last_use[a.value] = c;
        has_use[a.value] = true;
      }
      for (uint32_t v : a.values) {
        if (v != kNone) {
          last_use[v] = c;
          has_use[v] = true;
        }
      }
    }
  }
  // In-place twins: the output shares its input's storage (when kforge owns that storage).
  struct Write {
    uint32_t call, input, output;
  };
  std::vector<Write> writes;
  auto pair_values = [&](const KernelCall& call, const opdef::InplacePair& p, uint32_t* in, uint32_t* out) {
    *in = *out = kNone;
    for (const KernelArg& a : call.args) {
      if (a.name == p.input && a.kind == ArgKind::kTensor) *in = a.value;
    }
    for (const CallOutput& o : call.outputs) {
      if (o.name == p.output && !o.is_list && !o.values.empty()) *out = o.values[0];
    }
  };
  for (uint32_t c = 0; c < calls; ++c) {
    const KernelCall& call = out_.calls[c];
    if (!call.inplace_twin) continue;
    for (const opdef::InplacePair& p : call.def->inplace) {
      uint32_t in, o;
      pair_values(call, p, &in, &o);
      if (in == kNone || o == kNone) continue;
      writes.push_back({c, in, o});
      if (is_owned(in) && !sized_apart(in, o)) parent[find(parent, o)] = find(parent, in);
    }
  }
  // Views share storage unless that storage is written in place after the view is made; so does a transpose that
  // moves no element (transpose_moves_no_element).
  for (uint32_t c = 0; c < calls; ++c) {
    const KernelCall& call = out_.calls[c];
    for (const opdef::InplacePair& p : view_pairs(call, out_.values)) {
      uint32_t in, o;
      pair_values(call, p, &in, &o);
      if (in == kNone || o == kNone || !is_owned(in) || sized_apart(in, o)) continue;
      bool written_later = false;
      for (const Write& w : writes) {
        const uint32_t g = find(parent, w.input);
        written_later = written_later || (w.call > c && (g == find(parent, in) || g == find(parent, o)));
      }
      if (!written_later) parent[find(parent, o)] = find(parent, in);
    }
  }

  // One buffer per group.
  std::map<uint32_t, uint32_t> buffer_of_root;
  for (uint32_t v = 0; v < n; ++v) {
    LoweredValue& value = out_.values[v];
    if (value.role == ValueRole::kComputed && value.defined_by == kNone) continue;
    const uint32_t root = find(parent, v);
    auto [it, inserted] = buffer_of_root.emplace(root, static_cast<uint32_t>(out_.buffers.size()));
    if (inserted) {
      Buffer b;
      b.index = it->second;
      switch (value.role) {
        case ValueRole::kInput: b.kind = BufferKind::kInput; break;
        case ValueRole::kParameter: b.kind = BufferKind::kParameter; break;
        case ValueRole::kConstant: b.kind = BufferKind::kConstant; break;
        case ValueRole::kComputed: b.kind = BufferKind::kWorkspace; break;
      }
      b.role_index = value.role_index;
      if (value.role == ValueRole::kComputed) {
        b.first_call = value.defined_by;
        b.last_call = value.defined_by;
      } else {
        b.first_call = 0;
        b.last_call = calls == 0 ? 0 : calls - 1;
      }
      out_.buffers.push_back(std::move(b));
    }
    Buffer& b = out_.buffers[it->second];
    value.buffer = b.index;
    b.values.push_back(v);
    // A data-dependent result's buffer holds its capacity, which its views (a reshape of it) never exceed.
    const SymExpr bytes = value.buffer_bytes();
    if (!value.capacity.empty()) {
      b.size_bytes = bytes;
    } else if (b.values.size() == 1) {
      b.size_bytes = bytes;
    } else if (!std::any_of(b.values.begin(), b.values.end(),
                            [&](uint32_t w) { return !out_.values[w].capacity.empty(); })) {
      b.size_bytes = SymExpr::max(b.size_bytes, bytes);
    }
    if (value.role == ValueRole::kComputed) {
      b.first_call = std::min(b.first_call, value.defined_by);
      b.last_call = std::max(b.last_call, value.defined_by);
      if (has_use[v]) b.last_call = std::max(b.last_call, last_use[v]);
    }
  }
  // Sized by a data-dependent dim: allocated at run time, once the dim is known.
  for (Buffer& b : out_.buffers) {
    if (b.kind == BufferKind::kWorkspace && data_dependent(b.size_bytes)) b.kind = BufferKind::kRuntime;
  }
  // Fetched values computed by a call live in the caller's output tensor: the first fetch of a workspace
  // buffer takes it over; any other fetch copies (so does a fetch of a data-dependent size: its dims are known
  // only after the call).
  for (uint32_t k = 0; k < out_.outputs.size(); ++k) {
    ProgramOutput& o = out_.outputs[k];
    Buffer& b = out_.buffers[out_.values[o.value].buffer];
    if (b.kind == BufferKind::kWorkspace && b.values.size() >= 1 &&
        out_.values[o.value].bytes() == b.size_bytes) {
      b.kind = BufferKind::kOutput;
      b.role_index = k;
      b.last_call = calls == 0 ? 0 : calls - 1;
      o.copy = false;
    } else {
      o.copy = true;
      // Copied after the last call: its memory must stay untouched until then.
      if (b.kind == BufferKind::kWorkspace || b.kind == BufferKind::kRuntime) b.last_call = calls == 0 ? 0 : calls - 1;
    }
  }
}

}  // namespace kforge::passes::lower_internal
