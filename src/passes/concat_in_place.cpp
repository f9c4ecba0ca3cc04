// The concat in place (concat_in_place.h): one walk over the calls in order.
#include "passes/concat_in_place.h"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "passes/memory_plan.h"

namespace kforge::passes {

namespace {

constexpr const char* kPixelStride = "out_pixel_stride";

class Placer {
 public:
  Placer(LoweredProgram& program, FusionPlan& plan, const ConcatInPlaceOptions& options)
      : p_(program), plan_(plan), options_(options), readers_(program.values.size()),
        is_output_(program.values.size(), false) {
    for (uint32_t c = 0; c < p_.calls.size(); ++c) {
      for (const KernelArg& a : p_.calls[c].args) {
        if (a.value != kNone) readers_[a.value].push_back(c);
        for (uint32_t v : a.values) readers_[v].push_back(c);
      }
    }
    for (const ProgramOutput& o : p_.outputs) is_output_[o.value] = true;
    if (plan_.call_group.size() < p_.calls.size()) plan_.call_group.resize(p_.calls.size(), kNone);
  }

  std::vector<ConcatPlacement> run() {
    for (uint32_t c = 0; c < p_.calls.size(); ++c) {
      if (p_.calls[c].op == "concat" && plan_.call_group[c] == kNone) place_inputs_of(c);
    }
    if (!placements_.empty()) {
      renumber_groups(plan_);
      plan_memory(p_, p_.plan.alignment);
    }
    return std::move(placements_);
  }

 private:
  static std::optional<int64_t> static_numel(const SymShape& dims, size_t from, size_t to) {
    int64_t n = 1;
    for (size_t i = from; i < to; ++i) {
      const std::optional<int64_t> d = dims[i].constant();
      if (!d) return std::nullopt;
      n *= *d;
    }
    return n;
  }

  /// Whether every value in v's buffer other than v was placed (in v, or in what was placed in v): v owns the
  /// memory, nothing but its own slices shares it. The buffer is workspace.
  bool owns_buffer(uint32_t v) const {
    const Buffer& b = p_.buffer_of(v);
    if (b.kind != BufferKind::kWorkspace || b.scratch_at != kNone) return false;
    return std::all_of(b.values.begin(), b.values.end(), [&](uint32_t m) { return m == v || placed_.count(m); });
  }

  /// What every placed input must be, contiguous or strided: computed by a call, of the output's dtype, in a
  /// workspace buffer it owns, no program output, not in a concat yet, not a value a fused group keeps in registers.
  bool placeable(uint32_t x, uint32_t out) const {
    const LoweredValue& v = p_.value(x);
    return x != out && v.role == ValueRole::kComputed && v.defined_by != kNone && v.buffer != kNone &&
           v.buffer != p_.value(out).buffer && v.dtype == p_.value(out).dtype &&
           !is_output_[x] && !placed_.count(x) && !is_fused_internal(plan_, x) && owns_buffer(x);
  }

  /// How a strided input is written: by the conv2d_fused of an existing convolution group, or of a group made here
  /// for a lone convolution.
  struct StridedWriter {
    uint32_t group = kNone;          // an existing group of plan_
    std::optional<FusedGroup> made;  // or a new one
  };

  /// How x would be written into a strided slice: the conv2d_fused of its convolution group (a lone convolution gets
  /// one), when the concat `c` is x's only reader and the call can write it (NHWC, no residual); nullopt otherwise.
  std::optional<StridedWriter> strided_writer(uint32_t x, uint32_t c) const {
    if (readers_[x] != std::vector<uint32_t>{c}) return std::nullopt;
    const uint32_t d = p_.value(x).defined_by;
    StridedWriter w;
    if (plan_.call_group[d] != kNone) {
      const FusedGroup& g = plan_.groups[plan_.call_group[d]];
      if (g.kind != GroupKind::kConv || g.stores.size() != 1 || g.stores[0].value != x) return std::nullopt;
      w.group = plan_.call_group[d];
    } else {
      w.made = lone_conv_group(p_, options_.conv_fused, d);
      if (!w.made) return std::nullopt;
    }
    const KernelCall& call = w.made ? w.made->conv_call : plan_.groups[w.group].conv_call;
    const KernelArg* format = call.arg("data_format");
    const KernelArg* residual = call.arg("residual");
    const KernelArg* stride = call.arg(kPixelStride);
    if (format == nullptr || format->kind != ArgKind::kConstant || format->constant.string_value != "NHWC" ||
        residual == nullptr || residual->kind != ArgKind::kAbsentTensor || stride == nullptr ||
        stride->kind != ArgKind::kConstant) {
      return std::nullopt;
    }
    return w;
  }

  void place_inputs_of(uint32_t c) {
    const KernelCall& call = p_.calls[c];
    const KernelArg* x = call.arg("x");
    const KernelArg* axis = call.arg("axis");
    if (x == nullptr || x->kind != ArgKind::kTensorList || axis == nullptr || axis->kind != ArgKind::kConstant ||
        axis->constant.scalar.is_floating || call.outputs.size() != 1 || call.outputs[0].values.size() != 1) {
      return;
    }
    const uint32_t out = call.outputs[0].values[0];
    if (out == kNone) return;
    const LoweredValue& o = p_.value(out);
    const int64_t rank = static_cast<int64_t>(o.dims.size());
    int64_t a = axis->constant.scalar.int_value;
    if (a < 0) a += rank;
    // The slices' offsets need the dims from the axis on; the dims before it may be dynamic (a batch).
    if (a < 0 || a >= rank || !static_numel(o.dims, static_cast<size_t>(a), o.dims.size()) || !owns_buffer(out)) return;
    const bool contiguous = static_numel(o.dims, 0, static_cast<size_t>(a)) == std::optional<int64_t>(1);
    const int64_t esize = static_cast<int64_t>(ir::dtype_size(o.dtype));
    // Strided: an NHWC concat over the channels of float32 values.
    const bool strided = !contiguous && options_.strided && options_.conv_fused != nullptr && rank == 4 && a == 3 &&
                         o.dtype == ir::DataType::kFloat32;
    if (!contiguous && !strided) return;
    struct Candidate {
      uint32_t value;
      int64_t offset;
      std::optional<StridedWriter> writer;
    };
    std::vector<Candidate> candidates;
    int64_t column = 0;  // elements of one output row (the axis and after) before this input's slice
    for (uint32_t v : x->values) {
      const int64_t offset = column * esize;
      const std::optional<int64_t> row = static_numel(p_.value(v).dims, static_cast<size_t>(a), o.dims.size());
      if (!row) return;  // the output's row is static, so is every input's: only a malformed program gets here
      column += *row;
      if (std::count(x->values.begin(), x->values.end(), v) > 1 || !placeable(v, out)) continue;
      std::optional<StridedWriter> writer;
      if (strided && !(writer = strided_writer(v, c))) continue;
      candidates.push_back({v, offset, std::move(writer)});
    }
    // A strided slice moves the copy into the convolution (oneDNN 2.6 writes a dense block and conv.cc copies it
    // into place) rather than removing it: only worth it when the concat then copies nothing at all (BENCHMARKS.md,
    // "Concat in place (issue 36)": densenet's partly placed concats ran 1 % slower, googlenet's whole ones 1 % faster).
    if (strided && candidates.size() != x->values.size()) return;
    const int64_t pixel_stride = strided ? *o.dims[3].constant() : 0;
    for (Candidate& cand : candidates) {
      if (cand.writer) {
        KernelCall& writer =
            cand.writer->made ? cand.writer->made->conv_call : plan_.groups[cand.writer->group].conv_call;
        for (KernelArg& arg : writer.args) {
          if (arg.name == kPixelStride) arg.constant.int_value = pixel_stride;
        }
      }
    }
    for (Candidate& cand : candidates) {
      if (cand.writer && cand.writer->made) add_group(std::move(*cand.writer->made));
      for (uint32_t m : move_into_slice(p_, cand.value, out, cand.offset)) placed_.insert(m);
      placements_.push_back({c, cand.value, cand.offset, pixel_stride});
    }
  }

  void add_group(FusedGroup g) {
    const uint32_t index = static_cast<uint32_t>(plan_.groups.size());
    for (uint32_t m : g.calls) plan_.call_group[m] = index;
    plan_.groups.push_back(std::move(g));
  }


  LoweredProgram& p_;
  FusionPlan& plan_;
  const ConcatInPlaceOptions& options_;
  std::vector<std::vector<uint32_t>> readers_;  // calls reading each value, ascending (possibly twice)
  std::vector<bool> is_output_;
  std::set<uint32_t> placed_;  // values put in a slice, and what lies in them
  std::vector<ConcatPlacement> placements_;
};

}  // namespace

std::vector<ConcatPlacement> place_concat_inputs(LoweredProgram& program, FusionPlan& plan,
                                                 const ConcatInPlaceOptions& options) {
  return Placer(program, plan, options).run();
}

std::string dump_placements(const std::vector<ConcatPlacement>& placements) {
  std::string out;
  for (const ConcatPlacement& p : placements) {
    out += fmt::format("concat call {}: v{} at +{}", p.concat, p.value, p.offset);
    out += p.pixel_stride != 0 ? fmt::format(" (pixel stride {})\n", p.pixel_stride) : std::string(" (contiguous)\n");
  }
  return out;
}

}  // namespace kforge::passes
