#include "interpreter.h"

#include <algorithm>
#include <set>

namespace kforge::interp {

using kforge::Status;
using kforge::Tensor;

std::string value_key(const ir::Program& program, ir::ValueId id) {
  const ir::Value& v = program.value(id);
  if (!v.source_id.empty()) return v.source_id;
  return "v" + std::to_string(id.index);
}

namespace {

std::string where(const SourceManager& sources, SourceLoc loc) {
  if (!loc.valid()) return "";
  const LineCol lc = sources.line_col(loc);
  return sources.path(loc.file) + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.col) + ": ";
}

TensorSlot slot_of(const std::string& name, const ir::Type& type) {
  TensorSlot slot;
  slot.name = name;
  slot.dtype = runtime_dtype(type.dtype);
  slot.dims = type.dims;
  return slot;
}

// splitmix64: a tiny, well-mixed generator that any language can reproduce.
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace

std::optional<Interpreter> Interpreter::prepare(const ir::Program& program, const SourceManager& sources,
                                                DiagnosticEngine& diags, const OpRegistry& registry) {
  Interpreter interp;
  interp.program_ = &program;
  interp.sources_ = &sources;
  interp.registry_ = &registry;
  interp.value_count_ = program.value_capacity();
  interp.keys_.resize(interp.value_count_);
  for (size_t i = 0; i < interp.value_count_; ++i) interp.keys_[i] = value_key(program, ir::ValueId{static_cast<uint32_t>(i)});

  // Values that reach batch_norm's `variance` operand get positive random values.
  std::set<uint32_t> positive;
  program.walk([&](const ir::Op& op) {
    if (op.dialect == "pd_op" && (op.name == "batch_norm" || op.name == "batch_norm_") && op.operands.size() > 2 &&
        op.operands[2].valid()) {
      positive.insert(op.operands[2].index);
    }
  });

  std::vector<std::string> unsupported;
  const size_t errors_before = diags.error_count();
  interp.compile_ops(program.top_level_ops(), positive, diags, &interp.instrs_, &unsupported);
  if (!unsupported.empty()) {
    std::sort(unsupported.begin(), unsupported.end());
    unsupported.erase(std::unique(unsupported.begin(), unsupported.end()), unsupported.end());
    std::string list;
    for (const std::string& name : unsupported) list += (list.empty() ? "" : ", ") + name;
    diags.error({}, "unsupported ops (no reference kernel): " + list);
  }
  if (diags.error_count() > errors_before) return std::nullopt;
  return interp;
}

void Interpreter::compile_ops(const std::vector<ir::OpId>& ops, const std::set<uint32_t>& positive,
                              DiagnosticEngine& diags, std::vector<Instr>* out, std::vector<std::string>* unsupported) {
  for (ir::OpId id : ops) {
    const ir::Op& op = program_->op(id);
    Instr in;
    in.full_name = op.full_name();
    in.loc = op.loc;
    for (ir::ValueId v : op.operands) in.operands.push_back(v.valid() ? static_cast<int64_t>(v.index) : -1);
    for (ir::ValueId v : op.results) in.results.push_back(v.index);
    const std::string full = op.full_name();
    if (full == "pd_op.if" && op.regions.size() == 2 && op.operands.size() == 1) {
      // Each block's ops, then what it yields (cf.yield) as the if's results.
      in.kind = Instr::Kind::kIf;
      bool ok = true;
      for (size_t b = 0; b < 2 && ok; ++b) {
        ok = op.regions[b].blocks.size() == 1;
        if (!ok) break;
        std::vector<ir::OpId> body_ops = program_->block(op.regions[b].blocks[0]).ops;
        if (body_ops.empty() || !program_->op(body_ops.back()).is("cf", "yield")) {
          ok = false;
          break;
        }
        for (ir::ValueId v : program_->op(body_ops.back()).operands) {
          in.yields[b].push_back(v.valid() ? static_cast<int64_t>(v.index) : -1);
        }
        body_ops.pop_back();
        compile_ops(body_ops, positive, diags, &in.branches[b], unsupported);
      }
      if (ok) {
        out->push_back(std::move(in));
        continue;
      }
    }
    if (!op.regions.empty()) {
      diags.error(op.name_loc.valid() ? op.name_loc : op.loc,
                  "the reference interpreter cannot run control flow ('" + full + "')");
      unsupported->push_back(full);
      continue;
    }
    if (full == "builtin.parameter") {
      in.kind = Instr::Kind::kParameter;
      in.name = op.string_attr("parameter_name");
      if (!op.results.empty()) {
        TensorSlot slot = slot_of(in.name, program_->type_of(op.results[0]));
        slot.positive = positive.count(op.results[0].index) != 0;
        parameters_.push_back(std::move(slot));
      }
    } else if (full == "pd_op.data" || full == "pd_op.feed") {
      in.kind = Instr::Kind::kFeed;
      in.name = op.string_attr("name");
      if (!op.results.empty()) {
        TensorSlot slot = slot_of(in.name, program_->type_of(op.results[0]));
        slot.positive = positive.count(op.results[0].index) != 0;
        feeds_.push_back(std::move(slot));
      }
    } else if (full == "pd_op.fetch" || full == "builtin.shadow_output") {
      in.kind = Instr::Kind::kFetch;
      in.name = op.string_attr(full == "pd_op.fetch" ? "name" : "output_name");
      output_names_.push_back(in.name);
    } else if (full == "builtin.combine") {
      in.kind = Instr::Kind::kCombine;
    } else if (full == "builtin.split") {
      in.kind = Instr::Kind::kSplit;
    } else if (full == "builtin.slice") {
      in.kind = Instr::Kind::kSlice;
      const ir::Attribute* index = op.attr("index");
      in.slice_index = index != nullptr && index->is_integer() ? index->int_value : 0;
    } else if (op.dialect == "pd_op" && registry_->find(op.name) != nullptr) {
      in.kind = Instr::Kind::kOp;
      in.name = op.name;
      in.attrs = AttrMap::from_attributes(op.attributes);
    } else {
      diags.error(op.name_loc.valid() ? op.name_loc : op.loc,
                  "the reference interpreter has no kernel for '" + full + "'");
      unsupported->push_back(full);
      continue;
    }
    out->push_back(std::move(in));
  }
}

size_t Interpreter::kernel_op_count() const {
  return static_cast<size_t>(std::count_if(instrs_.begin(), instrs_.end(),
                                           [](const Instr& in) { return in.kind == Instr::Kind::kOp; }));
}

struct Interpreter::RunState {
  std::vector<RtValue> values;
  const std::vector<bundle::NamedTensor>* feeds = nullptr;
  const std::vector<bundle::NamedTensor>* params = nullptr;
  std::vector<bundle::NamedTensor>* outputs = nullptr;
  std::vector<TraceEntry>* trace = nullptr;
  kforge::KernelContext ctx;
  size_t op_index = 0;
};

Status Interpreter::run(const std::vector<bundle::NamedTensor>& feeds, const std::vector<bundle::NamedTensor>& params,
                        std::vector<bundle::NamedTensor>* outputs, std::vector<TraceEntry>* trace) const {
  RunState s;
  s.values.resize(value_count_);
  s.feeds = &feeds;
  s.params = &params;
  s.outputs = outputs;
  s.trace = trace;
  outputs->clear();
  return run_instrs(instrs_, s);
}

Status Interpreter::run_instrs(const std::vector<Instr>& instrs, RunState& s) const {
  std::vector<RtValue>& values = s.values;
  std::vector<RtValue> inputs;
  std::vector<RtValue> results;
  for (const Instr& in : instrs) {
    switch (in.kind) {
      case Instr::Kind::kParameter: {
        const Tensor* t = bundle::find(*s.params, in.name);
        if (t == nullptr) return Status::Error(where(*sources_, in.loc), "parameter '", in.name, "' is not bound");
        for (uint32_t r : in.results) values[r] = RtValue::of(*t);
        continue;
      }
      case Instr::Kind::kFeed: {
        const Tensor* t = bundle::find(*s.feeds, in.name);
        if (t == nullptr) return Status::Error(where(*sources_, in.loc), "no value for input '", in.name, "'");
        for (uint32_t r : in.results) values[r] = RtValue::of(*t);
        continue;
      }
      case Instr::Kind::kFetch: {
        if (in.operands.empty() || in.operands[0] < 0 || values[in.operands[0]].kind != RtValue::Kind::kTensor) {
          return Status::Error(where(*sources_, in.loc), "fetch '", in.name, "' has no tensor operand");
        }
        const RtValue& v = values[in.operands[0]];
        s.outputs->push_back({in.name, v.tensor});
        for (uint32_t r : in.results) values[r] = v;
        continue;
      }
      case Instr::Kind::kCombine: {
        std::vector<Tensor> list;
        for (int64_t o : in.operands) {
          if (o < 0 || values[o].kind != RtValue::Kind::kTensor) {
            return Status::Error(where(*sources_, in.loc), "builtin.combine operand is not a tensor");
          }
          list.push_back(values[o].tensor);
        }
        for (uint32_t r : in.results) values[r] = RtValue::of_list(std::move(list));
        continue;
      }
      case Instr::Kind::kSplit:
      case Instr::Kind::kSlice: {
        if (in.operands.empty() || in.operands[0] < 0 || values[in.operands[0]].kind != RtValue::Kind::kList) {
          return Status::Error(where(*sources_, in.loc), in.full_name, " operand is not a vector");
        }
        const std::vector<Tensor>& list = values[in.operands[0]].list;
        if (in.kind == Instr::Kind::kSlice) {
          if (in.slice_index < 0 || static_cast<size_t>(in.slice_index) >= list.size() || in.results.empty()) {
            return Status::Error(where(*sources_, in.loc), "builtin.slice index ", in.slice_index, " out of range");
          }
          values[in.results[0]] = RtValue::of(list[in.slice_index]);
        } else {
          if (in.results.size() > list.size()) {
            return Status::Error(where(*sources_, in.loc), "builtin.split of a vector of ", list.size(), " into ",
                                 in.results.size());
          }
          for (size_t i = 0; i < in.results.size(); ++i) values[in.results[i]] = RtValue::of(list[i]);
        }
        continue;
      }
      case Instr::Kind::kIf: {
        if (in.operands.empty() || in.operands[0] < 0 || values[in.operands[0]].kind != RtValue::Kind::kTensor ||
            values[in.operands[0]].tensor.numel() != 1) {
          return Status::Error(where(*sources_, in.loc), "pd_op.if: the condition is not a one-element tensor");
        }
        const Tensor& cond = values[in.operands[0]].tensor;
        if (cond.dtype != kforge::DataType::kBool) {
          return Status::Error(where(*sources_, in.loc), "pd_op.if: the condition is ", cond.dtype, ", not bool");
        }
        const size_t branch = cond.data_as<const bool>()[0] ? 0 : 1;
        KFORGE_RETURN_IF_ERROR(run_instrs(in.branches[branch], s));
        if (in.yields[branch].size() != in.results.size()) {
          return Status::Error(where(*sources_, in.loc), "pd_op.if: a branch yields ", in.yields[branch].size(),
                               " values for ", in.results.size(), " results");
        }
        for (size_t i = 0; i < in.results.size(); ++i) {
          const int64_t y = in.yields[branch][i];
          values[in.results[i]] = y < 0 ? RtValue() : values[y];
        }
        continue;
      }
      case Instr::Kind::kOp: break;
    }
    // An executor's step: find the kernel by name, gather the operands, run, store the results.
    const OpFn* fn = registry_->find(in.name);
    if (fn == nullptr) return Status::Error(where(*sources_, in.loc), "no kernel for '", in.full_name, "'");
    inputs.clear();
    for (int64_t o : in.operands) inputs.push_back(o < 0 ? RtValue() : values[o]);
    results.clear();
    Status status = (*fn)(s.ctx, inputs, in.attrs, results);
    if (!status.ok()) return Status::Error(where(*sources_, in.loc), in.full_name, ": ", status.message());
    if (results.size() < in.results.size()) {
      return Status::Error(where(*sources_, in.loc), in.full_name, " has ", in.results.size(), " results but its kernel made ",
                           results.size());
    }
    for (size_t i = 0; i < in.results.size(); ++i) {
      values[in.results[i]] = std::move(results[i]);
      if (s.trace != nullptr && values[in.results[i]].kind == RtValue::Kind::kTensor) {
        TraceEntry entry{s.op_index, in.full_name, in.loc, keys_[in.results[i]], {}};
        KFORGE_RETURN_IF_ERROR(bundle::deep_copy(values[in.results[i]].tensor, &entry.tensor));
        s.trace->push_back(std::move(entry));
      } else if (s.trace != nullptr && values[in.results[i]].kind == RtValue::Kind::kList) {
        const std::vector<Tensor>& list = values[in.results[i]].list;
        for (size_t j = 0; j < list.size(); ++j) {
          TraceEntry entry{s.op_index, in.full_name, in.loc, keys_[in.results[i]] + "[" + std::to_string(j) + "]", {}};
          KFORGE_RETURN_IF_ERROR(bundle::deep_copy(list[j], &entry.tensor));
          s.trace->push_back(std::move(entry));
        }
      }
    }
    ++s.op_index;
  }
  return Status::OK();
}

Status random_tensors(const std::vector<TensorSlot>& slots, uint64_t seed,
                      const std::map<std::string, std::vector<int64_t>>& shapes,
                      std::vector<bundle::NamedTensor>* out) {
  out->clear();
  for (const TensorSlot& slot : slots) {
    std::vector<int64_t> dims = slot.dims;
    auto given = shapes.find(slot.name);
    if (given != shapes.end()) {
      if (given->second.size() != dims.size()) {
        return Status::Error("--shape ", slot.name, ": rank ", given->second.size(), " but '", slot.name, "' has rank ",
                             dims.size());
      }
      for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] >= 0 && dims[i] != given->second[i]) {
          return Status::Error("--shape ", slot.name, ": dim ", i, " is ", given->second[i], " but the program fixes it to ",
                               dims[i]);
        }
        dims[i] = given->second[i];
      }
    }
    for (int64_t& d : dims) {
      if (d < 0) d = 1;
    }
    Tensor t;
    t.dtype = slot.dtype;
    KFORGE_RETURN_IF_ERROR(t.set_dims(dims));
    KFORGE_RETURN_IF_ERROR(t.allocate());
    uint64_t state = seed ^ fnv1a(slot.name);
    const int64_t n = t.numel();
    auto unit = [&state] { return static_cast<double>(splitmix64(state) >> 40) / static_cast<double>(1ull << 24); };
    for (int64_t i = 0; i < n; ++i) {
      const double u = unit();  // [0, 1)
      const double f = slot.positive ? 0.5 + u : 2.0 * u - 1.0;
      const int64_t k = static_cast<int64_t>(u * 4.0);
      switch (t.dtype) {
        case kforge::DataType::kFloat32: t.data_as<float>()[i] = static_cast<float>(f); break;
        case kforge::DataType::kFloat64: t.data_as<double>()[i] = f; break;
        case kforge::DataType::kInt32: t.data_as<int32_t>()[i] = static_cast<int32_t>(k); break;
        case kforge::DataType::kInt64: t.data_as<int64_t>()[i] = k; break;
        case kforge::DataType::kInt16: t.data_as<int16_t>()[i] = static_cast<int16_t>(k); break;
        case kforge::DataType::kInt8: t.data_as<int8_t>()[i] = static_cast<int8_t>(k); break;
        case kforge::DataType::kUInt8: t.data_as<uint8_t>()[i] = static_cast<uint8_t>(k); break;
        case kforge::DataType::kBool: t.data_as<bool>()[i] = u >= 0.5; break;
        default:
          return Status::Error("cannot make random values of dtype ", t.dtype, " for '", slot.name, "'");
      }
    }
    out->push_back({slot.name, std::move(t)});
  }
  return Status::OK();
}

}  // namespace kforge::interp
