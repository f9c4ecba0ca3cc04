#include "codegen/cuda_index.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>

#include "codegen/cpp_text.h"
#include "passes/axis.h"

namespace kforge::codegen {

namespace {

using passes::ArgKind;
using passes::KernelArg;
using passes::KernelCall;
using passes::kNone;
using passes::LoweredProgram;
using passes::SymExpr;
using passes::SymShape;

constexpr std::array<std::string_view, 19> kIndexOps = {
    "dropout",        "transpose",      "concat",    "split",     "split_with_num", "slice",
    "strided_slice",  "pad3d",          "expand",    "tile",      "gather",         "index_select",
    "embedding",      "nearest_interp", "bilinear_interp", "triu", "tril",          "arange",
    "full_with_tensor"};

/// The type a data move copies an element as: element_type's, and the unsigned type of the same width for
/// float16, bfloat16 (their bits) and uint16/32/64.
std::optional<std::string> move_type(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::kUInt16:
    case ir::DataType::kFloat16:
    case ir::DataType::kBFloat16: return "uint16_t";
    case ir::DataType::kUInt32: return "uint32_t";
    case ir::DataType::kUInt64: return "uint64_t";
    default: return element_type(dtype);
  }
}


// A constant attribute, or null (then `why` says so).
const passes::AttrConstant* constant(const KernelCall& call, std::string_view name, std::string* why) {
  const KernelArg* a = call.arg(name);
  if (a != nullptr && a->kind == ArgKind::kConstant) return &a->constant;
  *why = fmt::format("its {} is not a constant known at generation time", name);
  return nullptr;
}

// An int or Scalar attribute's integer value.
std::optional<int64_t> constant_int(const KernelCall& call, std::string_view name, std::string* why) {
  const passes::AttrConstant* c = constant(call, name, why);
  if (c == nullptr) return std::nullopt;
  if (c->type == opdef::ArgType::kScalar || c->type == opdef::ArgType::kScalarInt ||
      c->type == opdef::ArgType::kScalarInt64 || c->type == opdef::ArgType::kScalarFloat ||
      c->type == opdef::ArgType::kScalarDouble) {
    return c->scalar.is_floating ? static_cast<int64_t>(c->scalar.float_value) : c->scalar.int_value;
  }
  return c->int_value;
}

std::optional<double> constant_float(const KernelCall& call, std::string_view name, std::string* why) {
  const passes::AttrConstant* c = constant(call, name, why);
  if (c == nullptr) return std::nullopt;
  if (c->type == opdef::ArgType::kFloat || c->type == opdef::ArgType::kDouble) return c->float_value;
  return c->scalar.is_floating ? c->scalar.float_value : static_cast<double>(c->scalar.int_value);
}

// Whether anything reads value v (a call's argument or a program output).
bool is_read(const LoweredProgram& p, uint32_t v) {
  for (const passes::ProgramOutput& o : p.outputs) {
    if (o.value == v) return true;
  }
  for (const KernelCall& call : p.calls) {
    for (const KernelArg& a : call.args) {
      if (a.value == v || std::find(a.values.begin(), a.values.end(), v) != a.values.end()) return true;
    }
  }
  return false;
}

// Builds one kernel: its parameters (pointers, then the symbols its expressions use) and its body.
class KernelText {
 public:
  KernelText(const CudaBufferExpr& buffer, SizeTable& table, const SizeTable::Spelling& argument)
      : buffer_(buffer), sizes_(table, argument) {}

  // A dim or any size as C++ text: the literal, a dim `s0`, or a parameter `z3` the launch passes from the
  // program's size table (codegen/size_table.h), so that no kernel spells out a size.
  std::string size(const SymExpr& d) {
    if (std::optional<int64_t> c = d.constant()) return std::to_string(*c);
    return sizes_.text(d);
  }

  // `const int64_t c<d>` for every dim of `dims`: the coordinate of output element e (row-major).
  void coordinates(const SymShape& dims) {
    if (dims.empty()) return;
    if (dims.size() == 1) {
      line("const int64_t c0 = e;");
      return;
    }
    line("int64_t r = e;");
    for (size_t d = dims.size() - 1; d > 0; --d) {
      const std::string n = size(dims[d]);
      line(fmt::format("[[maybe_unused]] const int64_t c{} = r % {};", d, n));
      line(fmt::format("r /= {};", n));
    }
    line("[[maybe_unused]] const int64_t c0 = r;");
  }

  // The row-major offset in a tensor of dims `dims` of the coordinate whose entries are `coords` (C++ text).
  std::string offset(const std::vector<std::string>& coords, const SymShape& dims) {
    std::string out;
    SymExpr stride = 1;
    for (size_t d = dims.size(); d-- > 0;) {
      const std::string& c = coords[d];
      if (c != "0") {
        std::string term = c;
        if (stride.constant() != std::optional<int64_t>(1)) {
          term = (c.find(' ') == std::string::npos ? c : "(" + c + ")") + " * " + size(stride);
        }
        out = out.empty() ? term : term + " + " + out;
      }
      stride = stride * dims[d];
    }
    return out.empty() ? "0" : out;
  }

  // A read-only pointer parameter for value v, as element type `type`; returns its name.
  std::string input(uint32_t v, const std::string& type) {
    const std::string name = "in" + std::to_string(inputs_++);
    params_.push_back(fmt::format("const {}* __restrict__ {}", type, name));
    args_.push_back(buffer_(v, type, true));
    return name;
  }
  std::string output(uint32_t v, const std::string& type) {
    params_.push_back(fmt::format("{}* __restrict__ out", type));
    args_.push_back(buffer_(v, type, false));
    return "out";
  }
  void line(std::string text) { body_.push_back(std::move(text)); }

  CudaIndexKernel finish(std::string name, std::string description, const SymExpr& numel, bool interp) {
    CudaIndexKernel k;
    k.numel = size(numel);
    k.name = std::move(name);
    k.description = std::move(description);
    k.params = params_;
    k.args = args_;
    const std::vector<std::string> size_params = sizes_.params(), size_args = sizes_.args();
    k.params.insert(k.params.end(), size_params.begin(), size_params.end());
    k.args.insert(k.args.end(), size_args.begin(), size_args.end());
    k.body = body_;
    k.interp = interp;
    return k;
  }

 private:
  const CudaBufferExpr& buffer_;
  SizeParams sizes_;
  std::vector<std::string> params_, args_, body_;
  int inputs_ = 0;
};

// Builds the kernels of one call.
class IndexCall {
 public:
  IndexCall(const LoweredProgram& p, const KernelCall& call, const std::string& prefix, size_t first,
            const std::string& description, const CudaBufferExpr& buffer, SizeTable& sizes,
            const SizeTable::Spelling& size_argument, std::string* why)
      : p_(p), call_(call), prefix_(prefix), next_(first), description_(description), buffer_(buffer),
        sizes_(sizes), size_argument_(size_argument), why_(why) {}

  std::optional<std::vector<CudaIndexKernel>> build() {
    const std::string& op = call_.op;
    bool ok = false;
    if (op == "dropout") ok = dropout();
    else if (op == "transpose") ok = transpose();
    else if (op == "concat") ok = concat();
    else if (op == "split" || op == "split_with_num") ok = split();
    else if (op == "slice") ok = slice();
    else if (op == "strided_slice") ok = strided_slice();
    else if (op == "pad3d") ok = pad3d();
    else if (op == "expand" || op == "tile") ok = broadcast();
    else if (op == "gather" || op == "index_select") ok = gather();
    else if (op == "embedding") ok = embedding();
    else if (op == "nearest_interp" || op == "bilinear_interp") ok = interpolate(op == "bilinear_interp");
    else if (op == "triu" || op == "tril") ok = triangle(op == "triu");
    else if (op == "arange") ok = arange();
    else if (op == "full_with_tensor") ok = fill();
    else if (op == "matmul" || op == "bmm") ok = batched_matmul();
    else fail("it is not an index-mapped op");
    if (!ok) return std::nullopt;
    return std::move(kernels_);
  }

 private:
  bool fail(std::string reason) {
    if (why_->empty()) *why_ = std::move(reason);
    return false;
  }

  const passes::LoweredValue& value(uint32_t v) const { return p_.values[v]; }

  // The first output's single value.
  uint32_t out_value() const {
    return call_.outputs.empty() || call_.outputs[0].values.size() != 1 ? kNone : call_.outputs[0].values[0];
  }

  // The element type of input x and output out, which must have the same dtype; "" after fail().
  std::string same_type(uint32_t x, uint32_t out, bool arithmetic) {
    if (x == kNone || out == kNone) {
      fail("it needs an input and an output");
      return "";
    }
    if (value(x).dtype != value(out).dtype) {
      fail(fmt::format("its input is {} and its output {}", ir::dtype_name(value(x).dtype),
                       ir::dtype_name(value(out).dtype)));
      return "";
    }
    const ir::DataType d = value(x).dtype;
    if (arithmetic && d != ir::DataType::kFloat32 && d != ir::DataType::kFloat64) {
      fail(fmt::format("it computes on {} values; the CUDA kernel computes float32 and float64 only", ir::dtype_name(d)));
      return "";
    }
    std::optional<std::string> t = move_type(d);
    if (!t) {
      fail(fmt::format("dtype {} has no CUDA kernel", ir::dtype_name(d)));
      return "";
    }
    return *t;
  }

  // A data-movement kernel cannot write the buffer it reads.
  bool own_buffer(uint32_t in, uint32_t out) {
    if (value(in).buffer == value(out).buffer) {
      return fail("its output shares its input's buffer (in place), which an index-mapped kernel cannot write");
    }
    return true;
  }

  KernelText text() const { return KernelText(buffer_, sizes_, size_argument_); }

  void add(KernelText& k, const SymExpr& numel, bool interp = false) {
    kernels_.push_back(k.finish(prefix_ + std::to_string(next_++), description_, numel, interp));
  }

  // Inference dropout: a copy (upscale_in_train) or x * (1 - p) (downgrade_in_infer), as kernels/creation.cc.
  bool dropout() {
    const uint32_t x = call_.tensor_arg("x"), out = out_value();
    const std::optional<bool> test = call_.constant_bool("is_test");
    if (!test || !*test) return fail("it is a training dropout (is_test is not true); only inference runs on the GPU");
    const passes::AttrConstant* mode = constant(call_, "mode", why_);
    const std::optional<double> prob = constant_float(call_, "p", why_);
    if (mode == nullptr || !prob) return false;
    const bool upscale = mode->string_value == "upscale_in_train";
    if (!upscale && mode->string_value != "downgrade_in_infer") {
      return fail("its mode is \"" + mode->string_value + "\" (upscale_in_train or downgrade_in_infer expected)");
    }
    if (call_.outputs.size() > 1) {
      for (uint32_t v : call_.outputs[1].values) {
        if (v != kNone && is_read(p_, v)) return fail("its mask is read, and the CUDA dropout computes out alone");
      }
    }
    const std::string type = same_type(x, out, !upscale);
    if (type.empty()) return false;
    KernelText k = text();
    const std::string in = k.input(x, type);
    k.output(out, type);
    if (upscale) {
      k.line(fmt::format("out[e] = {}[e];", in));
    } else {
      const double factor = 1.0 - *prob;
      const std::string f = type == "float" ? cpp_float(static_cast<float>(factor)) : fmt::format("{:.17g}", factor);
      k.line(fmt::format("out[e] = {}[e] * static_cast<{}>({});", in, type, f));
    }
    add(k, value(out).numel());
    return true;
  }

  bool transpose() {
    const uint32_t x = call_.tensor_arg("x"), out = out_value();
    const std::string type = same_type(x, out, false);
    const passes::AttrConstant* perm = constant(call_, "perm", why_);
    if (type.empty() || perm == nullptr || !own_buffer(x, out)) return false;
    const SymShape& xd = value(x).dims;
    if (perm->ints.size() != xd.size() || value(out).dims.size() != xd.size()) {
      return fail("its perm does not match the rank of its input");
    }
    std::vector<std::string> coords(xd.size());
    for (size_t i = 0; i < perm->ints.size(); ++i) {
      size_t axis = 0;
      if (!passes::normalize_axis(perm->ints[i], static_cast<int64_t>(xd.size()), &axis)) return fail("its perm names an axis out of range");
      coords[axis] = "c" + std::to_string(i);
    }
    KernelText k = text();
    const std::string in = k.input(x, type);
    k.output(out, type);
    k.coordinates(value(out).dims);
    k.line(fmt::format("out[e] = {}[{}];", in, k.offset(coords, xd)));
    add(k, value(out).numel());
    return true;
  }

  bool concat() {
    const KernelArg* xs = call_.arg("x");
    const uint32_t out = out_value();
    if (xs == nullptr || xs->kind != ArgKind::kTensorList || xs->values.empty() || out == kNone) {
      return fail("it needs a list of inputs and one output");
    }
    const std::optional<int64_t> given = constant_int(call_, "axis", why_);
    if (!given) return false;
    const SymShape& od = value(out).dims;
    size_t axis = 0;
    if (!passes::normalize_axis(*given, static_cast<int64_t>(od.size()), &axis)) return fail("its axis is out of range");
    KernelText k = text();
    std::string type;
    std::vector<std::string> names;
    for (uint32_t v : xs->values) {
      type = same_type(v, out, false);
      if (type.empty() || !own_buffer(v, out)) return false;
      if (value(v).dims.size() != od.size()) return fail("its inputs and output differ in rank");
      names.push_back(k.input(v, type));
    }
    k.output(out, type);
    k.coordinates(od);
    // Input j holds output coordinates [start_j, start_j + dims_j[axis]) along the axis.
    SymExpr start = 0;
    const std::string ca = "c" + std::to_string(axis);
    for (size_t j = 0; j < xs->values.size(); ++j) {
      const SymShape& xd = value(xs->values[j]).dims;
      std::vector<std::string> coords;
      for (size_t d = 0; d < od.size(); ++d) coords.push_back("c" + std::to_string(d));
      if (start.constant() != std::optional<int64_t>(0)) coords[axis] = ca + " - " + k.size(start);
      const SymExpr end = start + xd[axis];
      const std::string load = fmt::format("out[e] = {}[{}];", names[j], k.offset(coords, xd));
      if (j + 1 == xs->values.size()) {
        k.line(j == 0 ? load : "} else {");
        if (j > 0) k.line("  " + load);
      } else {
        k.line(fmt::format("{}if ({} < {}) {{", j == 0 ? "" : "} else ", ca, k.size(end)));
        k.line("  " + load);
      }
      start = end;
    }
    if (xs->values.size() > 1) k.line("}");
    add(k, value(out).numel());
    return true;
  }

  // split / split_with_num: output k is the slice of x along the axis after the earlier outputs.
  bool split() {
    const uint32_t x = call_.tensor_arg("x");
    const std::optional<int64_t> given = constant_int(call_, "axis", why_);
    if (x == kNone || !given || call_.outputs.empty()) return fail("it needs an input, a constant axis and outputs");
    const SymShape& xd = value(x).dims;
    size_t axis = 0;
    if (!passes::normalize_axis(*given, static_cast<int64_t>(xd.size()), &axis)) return fail("its axis is out of range");
    SymExpr start = 0;
    for (uint32_t out : call_.outputs[0].values) {
      if (out == kNone) return fail("one of its outputs is absent");
      const SymShape& od = value(out).dims;
      const std::string type = same_type(x, out, false);
      if (type.empty() || !own_buffer(x, out)) return false;
      if (od.size() != xd.size()) return fail("its outputs differ from its input in rank");
      KernelText k = text();
      const std::string in = k.input(x, type);
      k.output(out, type);
      k.coordinates(od);
      std::vector<std::string> coords;
      for (size_t d = 0; d < od.size(); ++d) coords.push_back("c" + std::to_string(d));
      if (start.constant() != std::optional<int64_t>(0)) coords[axis] += " + " + k.size(start);
      k.line(fmt::format("out[e] = {}[{}];", in, k.offset(coords, xd)));
      add(k, value(out).numel());
      start = start + od[axis];
    }
    return true;
  }

  // slice: x[starts:ends] along `axes`, with the decrease_axis dims dropped from the output.
  bool slice() {
    const uint32_t x = call_.tensor_arg("input"), out = out_value();
    const std::string type = same_type(x, out, false);
    const passes::AttrConstant* axes = constant(call_, "axes", why_);
    // Starts that are expressions of the dims (`x[:, x.shape[1] // 2 :]`) start where the shape rule put them.
    const KernelArg* symbolic_starts = call_.arg("starts");
    if (symbolic_starts != nullptr && symbolic_starts->kind != ArgKind::kSymbolic) symbolic_starts = nullptr;
    const passes::AttrConstant* starts =
        axes != nullptr && symbolic_starts == nullptr ? constant(call_, "starts", why_) : nullptr;
    const passes::AttrConstant* decrease =
        starts != nullptr || (axes != nullptr && symbolic_starts != nullptr) ? constant(call_, "decrease_axis", why_)
                                                                             : nullptr;
    if (type.empty() || decrease == nullptr || !own_buffer(x, out)) return false;
    const SymShape& xd = value(x).dims;
    const SymShape& od = value(out).dims;
    const size_t start_count = symbolic_starts != nullptr ? symbolic_starts->symbolic.size() : starts->ints.size();
    if (axes->ints.size() != start_count) return fail("its axes and starts differ in length");
    std::vector<SymExpr> begin(xd.size(), SymExpr(0));
    for (size_t i = 0; i < axes->ints.size(); ++i) {
      size_t a = 0;
      if (!passes::normalize_axis(axes->ints[i], static_cast<int64_t>(xd.size()), &a)) return fail("its axes name an axis out of range");
      if (symbolic_starts != nullptr) {
        begin[a] = passes::slice_bound(xd[a], symbolic_starts->symbolic[i], false);
        continue;
      }
      int64_t s = starts->ints[i];
      const std::optional<int64_t> dim = xd[a].constant();
      if (dim) {
        if (s < 0) s += *dim;
        s = std::clamp<int64_t>(s, 0, *dim);
      } else if (s < 0) {
        return fail("it starts from the end of a dim known only at run time");
      }
      begin[a] = s;
    }
    std::set<size_t> dropped;
    for (int64_t d : decrease->ints) {
      size_t a = 0;
      if (!passes::normalize_axis(d, static_cast<int64_t>(xd.size()), &a)) return fail("its decrease_axis names an axis out of range");
      dropped.insert(a);
    }
    const bool decreased = od.size() + dropped.size() == xd.size();
    if (!decreased && od.size() != xd.size()) return fail("its output's rank does not follow from its input's");
    KernelText k = text();
    const std::string in = k.input(x, type);
    k.output(out, type);
    k.coordinates(od);
    std::vector<std::string> coords;
    size_t next = 0;
    for (size_t d = 0; d < xd.size(); ++d) {
      const std::string b = begin[d].constant() == std::optional<int64_t>(0) ? "" : k.size(begin[d]);
      if (decreased && dropped.count(d) != 0) {
        coords.push_back(b.empty() ? "0" : b);
        continue;
      }
      const std::string c = "c" + std::to_string(next++);
      coords.push_back(b.empty() ? c : c + " + " + b);
    }
    k.line(fmt::format("out[e] = {}[{}];", in, k.offset(coords, xd)));
    add(k, value(out).numel());
    return true;
  }

  // strided_slice: x[start::step] along `axes` (negative steps too), with the CPU kernel's normalisation
  // (kernels/meta_manip.cc); the sliced dims must be known at generation time.
  bool strided_slice() {
    const uint32_t x = call_.tensor_arg("x"), out = out_value();
    const std::string type = same_type(x, out, false);
    const passes::AttrConstant* axes = constant(call_, "axes", why_);
    // Starts: constants, or expressions of the dims (the ends only shape the output, whose dims the kernel walks).
    std::vector<SymExpr> starts;
    bool have_starts = false;
    if (const KernelArg* sa = call_.arg("starts"); sa != nullptr && sa->kind == ArgKind::kSymbolic) {
      starts = sa->symbolic;
      have_starts = true;
    } else if (const passes::AttrConstant* c = axes != nullptr ? constant(call_, "starts", why_) : nullptr) {
      starts.assign(c->ints.begin(), c->ints.end());
      have_starts = true;
    }
    const passes::AttrConstant* strides = axes != nullptr && have_starts ? constant(call_, "strides", why_) : nullptr;
    if (type.empty() || strides == nullptr || !own_buffer(x, out)) return false;
    const SymShape& xd = value(x).dims;
    const SymShape& od = value(out).dims;
    const size_t n_axes = axes->ints.size();
    if (starts.size() != n_axes || strides->ints.size() != n_axes || od.size() != xd.size()) {
      return fail("its axes, starts and strides differ in length, or its output in rank");
    }
    std::vector<SymExpr> begin(xd.size(), SymExpr(0));
    std::vector<int64_t> step(xd.size(), 1);
    for (size_t i = 0; i < n_axes; ++i) {
      size_t a = 0;
      if (!passes::normalize_axis(axes->ints[i], static_cast<int64_t>(xd.size()), &a)) return fail("its axes name an axis out of range");
      const std::optional<int64_t> dim = xd[a].constant(), first = starts[i].constant();
      const int64_t st = strides->ints[i];
      if (st == 0) return fail("a stride is 0");
      step[a] = st;
      if (!dim || !first) {
        // A dynamic axis or a start from the dims: forward strides only, as the shape rule (passes/axis.h).
        if (st < 0) return fail("it steps backward through a dim known only at run time");
        begin[a] = passes::slice_bound(xd[a], starts[i], false);
        continue;
      }
      const int64_t n = *dim;
      int64_t start = *first;
      if (start < 0) start = std::max<int64_t>(start + n, 0);
      begin[a] = st > 0 ? std::min(start, n) : std::min(start + 1, n) - 1;
    }
    KernelText k = text();
    const std::string in = k.input(x, type);
    k.output(out, type);
    k.coordinates(od);
    std::vector<std::string> coords;
    for (size_t d = 0; d < xd.size(); ++d) {
      std::string c = "c" + std::to_string(d);
      if (step[d] != 1) c += " * " + std::to_string(step[d]);
      if (begin[d] != SymExpr(0)) c = k.size(begin[d]) + " + " + c;
      coords.push_back(c);
    }
    k.line(fmt::format("out[e] = {}[{}];", in, k.offset(coords, xd)));
    add(k, value(out).numel());
    return true;
  }

  // pad3d of a 5-D x (NCDHW or NDHWC): constant, reflect, replicate or circular, as kernels/movement.cc.
  bool pad3d() {
    const uint32_t x = call_.tensor_arg("x"), out = out_value();
    const std::string type = same_type(x, out, false);
    // Paddings are constants, or expressions of the dims (padding up to a multiple: `4 * ceil_div(h, 4) - h`).
    std::vector<SymExpr> pads;
    bool have_pads = false;
    const KernelArg* pad_arg = call_.arg("paddings");
    if (pad_arg != nullptr && pad_arg->kind == ArgKind::kSymbolic) {
      pads = pad_arg->symbolic;
      have_pads = true;
    } else if (const passes::AttrConstant* c = constant(call_, "paddings", why_)) {
      pads.assign(c->ints.begin(), c->ints.end());
      have_pads = true;
    }
    const passes::AttrConstant* mode = have_pads ? constant(call_, "mode", why_) : nullptr;
    const passes::AttrConstant* format = mode != nullptr ? constant(call_, "data_format", why_) : nullptr;
    const std::optional<double> fill = format != nullptr ? constant_float(call_, "pad_value", why_) : std::nullopt;
    if (type.empty() || !fill || !own_buffer(x, out)) return false;
    const std::string& m = mode->string_value;
    if (m != "constant" && m != "reflect" && m != "replicate" && m != "circular") {
      return fail("its mode is \"" + m + "\"");
    }
    const SymShape& xd = value(x).dims;
    const SymShape& od = value(out).dims;
    if (xd.size() != 5 || od.size() != 5 || pads.size() != 6) return fail("it needs a 5-D x and 6 paddings");
    if (m == "constant" && type == "uint16_t" && *fill != 0) return fail("a 16-bit float pad value is not supported");
    const bool last = format->string_value == "NDHWC";
    KernelText k = text();
    const std::string in = k.input(x, type);
    k.output(out, type);
    k.coordinates(od);
    std::vector<std::string> coords = {"c0", "c1", "c2", "c3", "c4"};
    std::vector<std::string> inside;
    for (size_t d = 0; d < 3; ++d) {
      const size_t axis = (last ? 1 : 2) + d;
      const std::string before = k.size(pads[2 * (2 - d)]);
      const std::string n = k.size(xd[axis]), i = "i" + std::to_string(d);
      k.line(fmt::format("const int64_t {}_ = c{} - {};", i, axis, before));
      if (m == "constant") {
        k.line(fmt::format("const int64_t {0} = {0}_;", i));
        inside.push_back(fmt::format("{0} >= 0 && {0} < {1}", i, n));
      } else if (m == "reflect") {
        k.line(fmt::format("const int64_t {0} = {0}_ < 0 ? -{0}_ : ({0}_ >= {1} ? 2 * ({1} - 1) - {0}_ : {0}_);", i, n));
      } else if (m == "replicate") {
        k.line(fmt::format("const int64_t {0} = {0}_ < 0 ? 0 : ({0}_ >= {1} ? {1} - 1 : {0}_);", i, n));
      } else {
        k.line(fmt::format("const int64_t {0} = (({0}_ % {1}) + {1}) % {1};", i, n));
      }
      coords[axis] = i;
    }
    const std::string load = fmt::format("{}[{}]", in, k.offset(coords, xd));
    if (m == "constant") {
      const std::string value = type == "bool" ? (*fill != 0 ? "true" : "false")
                                               : fmt::format("static_cast<{}>({:.17g})", type, *fill);
      k.line(fmt::format("out[e] = {} && {} && {} ? {} : {};", inside[0], inside[1], inside[2], load, value));
    } else {
      k.line(fmt::format("out[e] = {};", load));
    }
    add(k, value(out).numel());
    return true;
  }

  // expand / tile: x's dims align with the output's last dims; each x coordinate is the output's modulo x's dim.
  bool broadcast() {
    const uint32_t x = call_.tensor_arg("x"), out = out_value();
    const std::string type = same_type(x, out, false);
    if (type.empty() || !own_buffer(x, out)) return false;
    const SymShape& xd = value(x).dims;
    const SymShape& od = value(out).dims;
    if (xd.size() > od.size()) return fail("its input has a higher rank than its output");
    KernelText k = text();
    const std::string in = k.input(x, type);
    k.output(out, type);
    k.coordinates(od);
    std::vector<std::string> coords;
    const size_t lead = od.size() - xd.size();
    for (size_t d = 0; d < xd.size(); ++d) {
      const std::string c = "c" + std::to_string(d + lead);
      if (xd[d].constant() == std::optional<int64_t>(1)) coords.push_back("0");
      else if (xd[d] == od[d + lead]) coords.push_back(c);
      else coords.push_back(c + " % " + k.size(xd[d]));
    }
    k.line(fmt::format("out[e] = {}[{}];", in, k.offset(coords, xd)));
    add(k, value(out).numel());
    return true;
  }

  std::string index_type(uint32_t index) {
    const ir::DataType d = value(index).dtype;
    if (d != ir::DataType::kInt32 && d != ir::DataType::kInt64) {
      fail(fmt::format("its index is {} (int32 or int64 expected)", ir::dtype_name(d)));
      return "";
    }
    return *move_type(d);
  }

  // gather / index_select: x viewed as [outer, n, inner] around the axis; output [outer, k, inner] picks index's
  // k entries along it.
  bool gather() {
    const uint32_t x = call_.tensor_arg("x"), index = call_.tensor_arg("index"), out = out_value();
    const std::string type = same_type(x, out, false);
    const std::optional<int64_t> given = type.empty() ? std::nullopt : constant_int(call_, "axis", why_);
    if (!given || index == kNone || !own_buffer(x, out)) return index == kNone ? fail("it needs an index") : false;
    const std::string itype = index_type(index);
    if (itype.empty()) return false;
    const SymShape& xd = value(x).dims;
    size_t axis = 0;
    if (!passes::normalize_axis(*given, static_cast<int64_t>(xd.size()), &axis)) return fail("its axis is out of range");
    SymExpr inner = 1;
    for (size_t d = axis + 1; d < xd.size(); ++d) inner = inner * xd[d];
    KernelText k = text();
    const std::string in = k.input(x, type);
    const std::string idx = k.input(index, itype);
    k.output(out, type);
    const std::string n = k.size(xd[axis]), count = k.size(value(index).numel()), in_size = k.size(inner);
    k.line(fmt::format("const int64_t i = e % {};", in_size));
    k.line(fmt::format("const int64_t j = (e / {}) % {};", in_size, count));
    k.line(fmt::format("const int64_t o = e / {} / {};", in_size, count));
    k.line(fmt::format("const int64_t id = static_cast<int64_t>({}[j]);", idx));
    k.line(fmt::format("out[e] = id >= 0 && id < {0} ? {1}[(o * {0} + id) * {2} + i] : {3}(0);", n, in, in_size, type));
    add(k, value(out).numel());
    return true;
  }

  // embedding: row ids[e / D] of weight [V, D]; padding_idx rows are zeros (kernels/linalg.cc).
  bool embedding() {
    const uint32_t ids = call_.tensor_arg("x"), weight = call_.tensor_arg("weight"), out = out_value();
    const std::string type = same_type(weight, out, false);
    const std::optional<int64_t> padding = type.empty() ? std::nullopt : constant_int(call_, "padding_idx", why_);
    if (!padding || ids == kNone) return ids == kNone ? fail("it needs ids") : false;
    const std::string itype = index_type(ids);
    if (itype.empty()) return false;
    const SymShape& wd = value(weight).dims;
    if (wd.size() != 2 || !wd[0].constant()) return fail("its weight must be 2-D with a vocabulary known at generation time");
    const int64_t rows = *wd[0].constant();
    const int64_t pad = *padding == -1 ? -1 : (*padding < 0 ? *padding + rows : *padding);
    KernelText k = text();
    const std::string id = k.input(ids, itype);
    const std::string w = k.input(weight, type);
    k.output(out, type);
    const std::string width = k.size(wd[1]);
    k.line(fmt::format("const int64_t row = static_cast<int64_t>({}[e / {}]);", id, width));
    std::string keep = fmt::format("row >= 0 && row < {}", rows);
    if (pad >= 0) keep += fmt::format(" && row != {}", pad);
    k.line(fmt::format("out[e] = {} ? {}[row * {} + e % {}] : {}(0);", keep, w, width, width, type));
    add(k, value(out).numel());
    return true;
  }

  // nearest_interp / bilinear_interp of a 4-D x to the output's spatial size, with Paddle's source coordinates
  // (kernels/nn.cc, kernels/resize.cc): kforge_index.cuh's interp_ratio, nearest_source and bilinear_tap.
  bool interpolate(bool bilinear) {
    const uint32_t x = call_.tensor_arg("x"), out = out_value();
    const std::string type = same_type(x, out, bilinear);
    if (type.empty() || !own_buffer(x, out)) return false;
    for (std::string_view name : {"out_size", "size_tensor", "scale_tensor"}) {
      const KernelArg* a = call_.arg(name);
      if (a != nullptr && a->kind != ArgKind::kAbsentTensor && !(a->kind == ArgKind::kTensorList && a->values.empty())) {
        return fail(fmt::format("its {} is a tensor; the CUDA kernel takes the size from the output's dims", name));
      }
    }
    const passes::AttrConstant* format = constant(call_, "data_format", why_);
    const passes::AttrConstant* scale = format != nullptr ? constant(call_, "scale", why_) : nullptr;
    const std::optional<bool> align_corners = call_.constant_bool("align_corners");
    const std::optional<int64_t> align_mode = scale != nullptr ? constant_int(call_, "align_mode", why_) : std::nullopt;
    if (scale == nullptr || !align_mode) return false;
    if (!align_corners) return fail("its align_corners is not a constant known at generation time");
    const SymShape& xd = value(x).dims;
    const SymShape& od = value(out).dims;
    if (xd.size() != 4 || od.size() != 4) return fail("only 4-D inputs are supported");
    const bool nhwc = format->string_value == "NHWC";
    if (!nhwc && format->string_value != "NCHW") return fail("its data_format is \"" + format->string_value + "\"");
    const size_t h = nhwc ? 1 : 2, w = nhwc ? 2 : 3;
    double scale_h = -1, scale_w = -1;
    if (!scale->floats.empty()) {
      scale_h = scale->floats[0];
      scale_w = scale->floats.size() > 1 ? scale->floats[1] : scale->floats[0];
    }
    KernelText k = text();
    const std::string in = k.input(x, type);
    k.output(out, type);
    k.coordinates(od);
    const std::string in_h = k.size(xd[h]), in_w = k.size(xd[w]), out_h = k.size(od[h]), out_w = k.size(od[w]);
    const std::string ac = *align_corners ? "true" : "false";
    const bool known = xd[h].is_constant() && xd[w].is_constant() && od[h].is_constant() && od[w].is_constant();
    const bool same = known && xd[h] == od[h] && xd[w] == od[w];  // bilinear copies then
    if (!bilinear || !same) {
      k.line(fmt::format("const float rh = kforge::cuda_index::interp_ratio({}, {}, {}, {});", in_h, out_h,
                       cpp_float(static_cast<float>(scale_h)), ac));
      k.line(fmt::format("const float rw = kforge::cuda_index::interp_ratio({}, {}, {}, {});", in_w, out_w,
                         cpp_float(static_cast<float>(scale_w)), ac));
    }
    auto at = [&](const std::string& row, const std::string& col) {
      std::vector<std::string> coords = {"c0", "c1", "c2", "c3"};
      coords[h] = row;
      coords[w] = col;
      return fmt::format("{}[{}]", in, k.offset(coords, xd));
    };
    const std::string oh = "c" + std::to_string(h), ow = "c" + std::to_string(w);
    if (!bilinear) {
      k.line(fmt::format("const int64_t ih = kforge::cuda_index::nearest_source(rh, {}, {}, {});", oh, in_h, ac));
      k.line(fmt::format("const int64_t iw = kforge::cuda_index::nearest_source(rw, {}, {}, {});", ow, in_w, ac));
      k.line(fmt::format("out[e] = {};", at("ih", "iw")));
    } else {
      // Paddle copies when the size does not change (decided here when the sizes are known).
      const std::string flag = *align_mode == 0 && !*align_corners ? "true" : "false";
      const std::string pad = known ? "" : "  ";
      if (same || !known) {
        if (!known) k.line(fmt::format("if ({} == {} && {} == {}) {{", in_h, out_h, in_w, out_w));
        k.line(fmt::format("{}out[e] = {};", pad, at(oh, ow)));
      }
      if (!same) {
        if (!known) k.line("} else {");
        k.line(fmt::format("{}const kforge::cuda_index::Tap th = kforge::cuda_index::bilinear_tap({}, {}, rh, {});", pad,
                           oh, in_h, flag));
        k.line(fmt::format("{}const kforge::cuda_index::Tap tw = kforge::cuda_index::bilinear_tap({}, {}, rw, {});", pad,
                           ow, in_w, flag));
        k.line(fmt::format("{}out[e] = static_cast<{}>({} * th.w_lo * tw.w_lo + {} * th.w_hi * tw.w_lo + {} * th.w_lo * "
                           "tw.w_hi + {} * th.w_hi * tw.w_hi);",
                           pad, type, at("th.lo", "tw.lo"), at("th.hi", "tw.lo"), at("th.lo", "tw.hi"),
                           at("th.hi", "tw.hi")));
      }
      if (!known) k.line("}");
    }
    add(k, value(out).numel(), true);
    return true;
  }

  // triu / tril over the last two dims: an element kept or zeroed by its column minus its row.
  bool triangle(bool upper) {
    const uint32_t x = call_.tensor_arg("x"), out = out_value();
    const std::string type = same_type(x, out, false);
    const std::optional<int64_t> diagonal = type.empty() ? std::nullopt : constant_int(call_, "diagonal", why_);
    if (!diagonal) return false;
    const SymShape& xd = value(x).dims;
    if (xd.size() < 2) return fail("its input has fewer than 2 dims");
    KernelText k = text();
    const std::string in = k.input(x, type);
    k.output(out, type);
    const std::string cols = k.size(xd.back()), rows = k.size(xd[xd.size() - 2]);
    k.line(fmt::format("const int64_t col = e % {}, row = (e / {}) % {};", cols, cols, rows));
    k.line(fmt::format("out[e] = col - row {} {} ? {}[e] : {}(0);", upper ? ">=" : "<=", *diagonal, in, type));
    add(k, value(out).numel());
    return true;
  }

  // A matmul that no GEMM group computes (batched x and y, as attention's scores and context): one thread per
  // output element accumulates its dot product over K in the compute type (float, or double for float64), in k
  // order. The batch dims broadcast (a dim of 1 is read at 0). Slow for large K; correct for every size.
  bool batched_matmul() {
    const uint32_t x = call_.tensor_arg("x"), y = call_.tensor_arg("y"), out = out_value();
    const std::string type = same_type(x, out, true);
    if (type.empty() || y == kNone) return y == kNone ? fail("it needs x and y") : false;
    if (value(y).dtype != value(x).dtype) return fail("its x and y differ in dtype");
    // bmm: a matmul without transposes (it has no such attributes).
    const bool bmm = call_.op == "bmm";
    const std::optional<bool> tx = bmm ? std::optional<bool>(false) : call_.constant_bool("transpose_x");
    const std::optional<bool> ty = bmm ? std::optional<bool>(false) : call_.constant_bool("transpose_y");
    if (!tx || !ty) return fail("its transposes are not constants known at generation time");
    const SymShape& xd = value(x).dims;
    const SymShape& yd = value(y).dims;
    const SymShape& od = value(out).dims;
    if (xd.size() < 2 || yd.size() < 2 || od.size() < 2) return fail("a vector operand has no CUDA batched matmul");
    const size_t r = od.size();
    KernelText k = text();
    const std::string xs = k.input(x, type), ys = k.input(y, type);
    k.output(out, type);
    k.coordinates(od);
    const std::string m = k.size(*tx ? xd.back() : xd[xd.size() - 2]);
    const std::string depth = k.size(*tx ? xd[xd.size() - 2] : xd.back());
    const std::string n = k.size(*ty ? yd[yd.size() - 2] : yd.back());
    // The offset of an operand's matrix: its batch dims aligned with the output's last batch dims.
    auto base = [&](const SymShape& dims) {
      std::vector<std::string> coords;
      SymShape batch(dims.begin(), dims.end() - 2);
      const size_t lead = (r - 2) - batch.size();
      for (size_t d = 0; d < batch.size(); ++d) {
        coords.push_back(batch[d].constant() == std::optional<int64_t>(1) ? "0" : "c" + std::to_string(d + lead));
      }
      SymExpr matrix = dims[dims.size() - 2] * dims.back();
      const std::string off = batch.empty() ? "0" : k.offset(coords, batch);
      if (off == "0") return std::string("0");
      return (off.find(' ') == std::string::npos ? off : "(" + off + ")") + " * " + k.size(matrix);
    };
    if (r - 2 < xd.size() - 2 || r - 2 < yd.size() - 2) return fail("its operands have more batch dims than its output");
    const std::string i = "c" + std::to_string(r - 2), j = "c" + std::to_string(r - 1);
    const std::string acc = type == "double" ? "double" : "float";
    k.line(fmt::format("const {}* xm = {} + {};", type, xs, base(xd)));
    k.line(fmt::format("const {}* ym = {} + {};", type, ys, base(yd)));
    k.line(fmt::format("{} acc = 0;", acc));
    k.line(fmt::format("for (int64_t k = 0; k < {}; ++k) {{", depth));
    k.line(fmt::format("  acc += static_cast<{}>(xm[{}]) * static_cast<{}>(ym[{}]);", acc,
                       *tx ? fmt::format("k * {} + {}", m, i) : fmt::format("{} * {} + k", i, depth), acc,
                       *ty ? fmt::format("{} * {} + k", j, depth) : fmt::format("k * {} + {}", n, j)));
    k.line("}");
    k.line(fmt::format("out[e] = static_cast<{}>(acc);", type));
    add(k, value(out).numel());
    return true;
  }

  // arange with a constant step and a constant start, or one that is an expression of the dims
  // (`arange(n - 1, ...)`): out[e] = start + e * step in the output's type (Paddle's order).
  bool arange() {
    const uint32_t out = out_value();
    const KernelArg* start_arg = call_.arg("start");
    const bool symbolic_start =
        start_arg != nullptr && start_arg->kind == ArgKind::kSymbolic && start_arg->symbolic.size() == 1;
    const std::optional<double> start = symbolic_start ? std::optional<double>(0) : constant_float(call_, "start", why_);
    const std::optional<double> step = start ? constant_float(call_, "step", why_) : std::nullopt;
    if (!step || out == kNone) return out == kNone ? fail("it needs an output") : false;
    const ir::DataType d = value(out).dtype;
    const std::optional<std::string> type = move_type(d);
    if (!type || *type == "bool" || *type == "uint16_t") return fail(fmt::format("dtype {} has no CUDA arange", ir::dtype_name(d)));
    KernelText k = text();
    k.output(out, *type);
    const bool floating = ir::is_floating(d);
    auto literal = [&](double v) {
      return floating ? fmt::format("static_cast<{}>({:.17g})", *type, v)
                      : fmt::format("static_cast<{}>({})", *type, static_cast<int64_t>(v));
    };
    const std::string first = symbolic_start ? fmt::format("static_cast<{}>({})", *type, k.size(start_arg->symbolic[0]))
                                             : literal(*start);
    k.line(fmt::format("out[e] = {} + static_cast<{}>(e) * {};", first, *type, literal(*step)));
    add(k, value(out).numel());
    return true;
  }

  // full_with_tensor: every element is the value tensor's one (`paddle.full([n, n], -inf)` over a dynamic n, whose
  // dims the shape rule took from the shape tensor's known contents).
  bool fill() {
    const uint32_t v = call_.tensor_arg("value"), out = out_value();
    const std::string type = same_type(v, out, false);
    if (type.empty()) return false;
    KernelText k = text();
    const std::string in = k.input(v, type);
    k.output(out, type);
    k.line(fmt::format("out[e] = {}[0];", in));
    add(k, value(out).numel());
    return true;
  }

  const LoweredProgram& p_;
  const KernelCall& call_;
  const std::string& prefix_;
  size_t next_;
  const std::string& description_;
  const CudaBufferExpr& buffer_;
  SizeTable& sizes_;
  const SizeTable::Spelling& size_argument_;
  std::string* why_;
  std::vector<CudaIndexKernel> kernels_;
};

}  // namespace

bool is_cuda_batched_matmul(std::string_view op) { return op == "matmul" || op == "bmm"; }

const std::set<std::string>& cuda_float32_index_ops() {
  static const std::set<std::string> ops = {"dropout", "bilinear_interp"};
  return ops;
}

bool is_cuda_index_op(std::string_view op) {
  return std::find(kIndexOps.begin(), kIndexOps.end(), op) != kIndexOps.end();
}

std::optional<std::vector<CudaIndexKernel>> cuda_index_kernels(const LoweredProgram& program, const KernelCall& call,
                                                               const std::string& prefix, size_t first,
                                                               const std::string& description,
                                                               const CudaBufferExpr& buffer, SizeTable& sizes,
                                                               const SizeTable::Spelling& size_argument,
                                                               std::string* why) {
  std::string reason;
  IndexCall builder(program, call, prefix, first, description, buffer, sizes, size_argument, &reason);
  std::optional<std::vector<CudaIndexKernel>> kernels = builder.build();
  if (!kernels && why != nullptr) *why = reason;
  return kernels;
}

tmpl::Value cuda_index_kernel_context(const CudaIndexKernel& kernel) {
  tmpl::Value v = tmpl::Value::map();
  v.set("name", kernel.name);
  v.set("description", kernel.description);
  v.set("params", tmpl::Value(tmpl::List(kernel.params.begin(), kernel.params.end())));
  tmpl::List names;
  for (const std::string& p : kernel.params) names.push_back(p.substr(p.find_last_of(' ') + 1));
  v.set("param_names", tmpl::Value(std::move(names)));
  v.set("args", tmpl::Value(tmpl::List(kernel.args.begin(), kernel.args.end())));
  v.set("numel", kernel.numel);
  v.set("body", tmpl::Value(tmpl::List(kernel.body.begin(), kernel.body.end())));
  return v;
}

}  // namespace kforge::codegen
