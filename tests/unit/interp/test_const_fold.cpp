// The generation-time constant folder (src/passes/const_rules.cpp) against the reference interpreter: for every op
// the folder folds and every pair of plain dtypes it can see, a small program of constants is analysed (the folded
// contents of its result) and run op by op by the interpreter (what the kernels compute), and each element must
// agree exactly. A fold that disagrees with run time is a silent wrong result in every generated program that
// contains it (a float -> int64 cast once folded to 0), so this checks the folder as a whole rather than cases.
// The folder may decline (a value it cannot know, or a conversion with no portable result); each case says whether
// it must fold, so that a folder that folds nothing cannot pass.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

#include "interpreter.h"
#include "opdef/op_compat.h"
#include "opdef/op_loader.h"
#include "passes/analysis.h"
#include "passes/op_set.h"
#include "passes/verify.h"
#include "program/program_reader.h"

namespace kforge {
namespace {

const std::vector<std::string> kPlainDtypes = {"bool",  "int8",  "uint8",   "int16",
                                               "int32", "int64", "float32", "float64"};

// What the reference kernels compute arithmetic in (and full_int_array fills): the folder's integer wrapping of
// narrower types is checked through cast above.
const std::vector<std::string> kNumberDtypes = {"int32", "int64", "float32", "float64"};

bool is_float(const std::string& dtype) { return dtype == "float32" || dtype == "float64"; }

/// Values an operand of `dtype` holds in these programs: negatives, fractions, zero, both ends of int8.
std::vector<double> sample_values(const std::string& dtype) {
  if (dtype == "bool") return {0, 1, 1, 0, 1, 0};
  if (dtype == "uint8") return {0, 1, 7, 200, 255, 3};
  if (is_float(dtype)) return {-2.75, -0.5, 0, 0.5, 3.25, 127.9};
  return {-128, -3, 0, 1, 2, 127};
}

std::string yaml_values(const std::string& dtype, const std::vector<double>& values) {
  std::ostringstream s;
  s.precision(17);
  s << "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) s << ", ";
    if (dtype == "bool") s << (values[i] != 0 ? "true" : "false");
    else if (is_float(dtype) && std::isnan(values[i])) s << ".nan";
    else if (is_float(dtype)) s << std::showpoint << values[i];
    else s << static_cast<int64_t>(values[i]);
  }
  s << "]";
  return s.str();
}

/// `assign_value_` of `values` as a constant of `dtype` and `dims`, named `name`.
std::string constant(const std::string& name, const std::string& dtype, const std::vector<double>& values,
                     const std::string& dims) {
  return "  - {op: assign_value_, in: [x], out: [" + name + "], attrs: {shape: " + dims + ", dtype: " + dtype +
         ", values: " + yaml_values(dtype, values) + "}}\n";
}

std::string program_text(const std::string& ops) {
  return "program: t\ninputs: [{name: x, dtype: float32, shape: [1]}]\nops:\n" + ops + "outputs: [r]\n";
}

/// The folder's and the interpreter's view of value `r` of one program.
struct Outcome {
  std::string errors;
  std::optional<passes::KnownData> folded;
  std::vector<double> floats;   // the interpreter's elements, for floating results
  std::vector<int64_t> ints;    // for integer and bool results
  bool ran = false;
};

class Oracle {
 public:
  Oracle() : diags_(sources_, out_) {
    const std::string root = KFORGE_SOURCE_ROOT;
    library_ = opdef::load_op_library({root + "/kernels/ops.yaml"}, sources_, diags_);
    compat_ = opdef::load_op_compat(root + "/kernels/op_compat.yaml", sources_, diags_);
    ops_ = std::make_unique<passes::OpSet>(library_, &compat_, diags_);
  }

  Outcome run(const std::string& text) {
    Outcome o;
    std::optional<ir::Program> program = ir::read_program(sources_, sources_.add_buffer("fold.yaml", text), diags_);
    if (program && passes::verify_program(*program, *ops_, diags_)) {
      std::optional<passes::Analysis> analysis = passes::analyze_program(*program, *ops_, diags_);
      const std::optional<ir::ValueId> r = find(*program, "r");
      if (analysis && r) o.folded = analysis->values.at(r->index).data;
      std::optional<interp::Interpreter> in = interp::Interpreter::prepare(*program, sources_, diags_);
      if (in) {
        float x = 0;
        Tensor feed;
        feed.dtype = DataType::kFloat32;
        (void)feed.set_dims({1});
        feed.data = &x;
        std::vector<bundle::NamedTensor> outputs;
        const Status s = in->run({{"x", feed}}, {}, &outputs);
        if (!s.ok()) out_ << "interpreter: " << s.message() << "\n";
        if (s.ok() && outputs.size() == 1) {
          read(outputs[0].tensor, &o);
          o.ran = true;
        }
      }
    }
    o.errors = out_.str();
    out_.str("");
    return o;
  }

 private:
  static std::optional<ir::ValueId> find(const ir::Program& p, const std::string& name) {
    for (size_t i = 0; i < p.value_capacity(); ++i) {
      const ir::ValueId id{static_cast<uint32_t>(i)};
      if (p.value(id).name == name) return id;
    }
    return std::nullopt;
  }

  static void read(const Tensor& t, Outcome* o) {
    const int64_t n = t.numel();
    for (int64_t i = 0; i < n; ++i) {
      switch (t.dtype) {
        case DataType::kBool: o->ints.push_back(t.data_as<const bool>()[i] ? 1 : 0); break;
        case DataType::kInt8: o->ints.push_back(t.data_as<const int8_t>()[i]); break;
        case DataType::kUInt8: o->ints.push_back(t.data_as<const uint8_t>()[i]); break;
        case DataType::kInt16: o->ints.push_back(t.data_as<const int16_t>()[i]); break;
        case DataType::kInt32: o->ints.push_back(t.data_as<const int32_t>()[i]); break;
        case DataType::kInt64: o->ints.push_back(t.data_as<const int64_t>()[i]); break;
        case DataType::kFloat32: o->floats.push_back(t.data_as<const float>()[i]); break;
        case DataType::kFloat64: o->floats.push_back(t.data_as<const double>()[i]); break;
        default: FAIL("unexpected result dtype");
      }
    }
  }

  SourceManager sources_;
  std::ostringstream out_;
  DiagnosticEngine diags_;
  opdef::OpLibrary library_;
  opdef::OpCompat compat_;
  std::unique_ptr<passes::OpSet> ops_;
};

Oracle& oracle() {
  static Oracle o;
  return o;
}

/// Runs `ops` (whose result is `r`) both ways; `must_fold`: the folder is required to know `r`.
void check(const std::string& ops, bool must_fold) {
  const std::string text = program_text(ops);
  INFO(text);
  Outcome o = oracle().run(text);
  INFO(o.errors);
  REQUIRE(o.ran);
  if (must_fold) REQUIRE(o.folded.has_value());
  if (!o.folded) return;
  const passes::KnownData& d = *o.folded;
  const int64_t n = static_cast<int64_t>(o.floats.empty() ? o.ints.size() : o.floats.size());
  REQUIRE(d.numel() == n);
  for (int64_t i = 0; i < n; ++i) {
    INFO("element " << i);
    if (!o.floats.empty()) {
      const double want = o.floats[static_cast<size_t>(i)], got = d.float_at(i);
      CHECK((got == want || (std::isnan(got) && std::isnan(want))));
      if (got != want) UNSCOPED_INFO("folded " << got << ", interpreter " << want);
    } else {
      const std::optional<int64_t> got = d.int_at(i).constant();
      REQUIRE(got.has_value());
      CHECK(*got == o.ints[static_cast<size_t>(i)]);
    }
  }
}

/// Whether converting `v` to `to` has one result every backend agrees on (else the folder declines).
bool portable(double v, const std::string& to) {
  if (to == "bool" || is_float(to)) return true;
  const double t = std::trunc(v);
  if (to == "int8") return t >= -128 && t < 128;
  if (to == "uint8") return t >= 0 && t < 256;
  if (to == "int16") return t >= -32768 && t < 32768;
  return true;
}

TEST_CASE("const fold: cast between every pair of plain dtypes agrees with the interpreter") {
  for (const std::string& from : kPlainDtypes) {
    for (const std::string& to : kPlainDtypes) {
      const std::vector<double> values = sample_values(from);
      bool all_portable = true;
      for (double v : values) all_portable = all_portable && (!is_float(from) || portable(v, to));
      check(constant("a", from, values, "[2, 3]") + "  - {op: cast, in: [a], out: [r], attrs: {dtype: " + to + "}}\n",
            all_portable);
    }
  }
}

TEST_CASE("const fold: the issue's case, float 3.0 cast to int64 is 3") {
  // x + cast(full([1], 3.0, float32), int64) once folded to x + 0.
  for (const char* to : {"int64", "int32", "bool"}) {
    check("  - {op: full, out: [f], attrs: {shape: [1], value: 3.0, dtype: float32}}\n"
          "  - {op: cast, in: [f], out: [r], attrs: {dtype: " + std::string(to) + "}}\n",
          true);
  }
}

TEST_CASE("const fold: full and full_like of a fractional, negative or large value in every dtype") {
  for (const std::string& dtype : kPlainDtypes) {
    for (const char* value : {"3.0", "-2.75", "0.5", "200.0", "1e30"}) {
      const double v = std::stod(value);
      const bool must = portable(v, dtype) && (dtype != "int32" || std::fabs(v) < 2e9) &&
                        (dtype != "int64" || std::fabs(v) < 9e18);
      check("  - {op: full, out: [r], attrs: {shape: [2], value: " + std::string(value) + ", dtype: " + dtype +
                "}}\n",
            must);
      check(constant("a", "int32", {1, 2}, "[2]") + "  - {op: full_like, in: [a], out: [r], attrs: {value: " +
                std::string(value) + ", dtype: " + dtype + "}}\n",
            must);
    }
  }
}

TEST_CASE("const fold: full_int_array and assign_value_ in every dtype") {
  for (const std::string& dtype : kNumberDtypes) {
    check("  - {op: full_int_array, out: [r], attrs: {value: [4, -1, 0, 7], dtype: " + dtype + "}}\n", true);
  }
  for (const std::string& dtype : kPlainDtypes) check(constant("r", dtype, sample_values(dtype), "[6]"), true);
}

TEST_CASE("const fold: arithmetic, min / max and scale in every numeric dtype, with broadcasting") {
  for (const std::string& dtype : kNumberDtypes) {
    const std::vector<double> a = sample_values(dtype);
    // Divisors with no zero (an integer division by zero is a run-time error, never folded).
    const std::vector<double> b = is_float(dtype) ? std::vector<double>{-1.5, 2, 0.25} : std::vector<double>{-3, 2, 5};
    const std::string inputs = constant("a", dtype, a, "[2, 3]") + constant("b", dtype, b, "[3]");
    for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum"}) {
      check(inputs + "  - {op: " + std::string(op) + ", in: [a, b], out: [r]}\n", true);
    }
    check(inputs + "  - {op: scale, in: [a], out: [r], attrs: {scale: 3.0, bias: -2.0, bias_after_scale: true}}\n",
          true);
    check(inputs + "  - {op: scale, in: [a], out: [r], attrs: {scale: 2.0, bias: 1.0, bias_after_scale: false}}\n",
          true);
    // A fractional scale of an integer tensor: Paddle computes in float and truncates; the folder declines.
    check(inputs + "  - {op: scale, in: [a], out: [r], attrs: {scale: 0.5, bias: 0.0, bias_after_scale: true}}\n",
          is_float(dtype));
    if (is_float(dtype)) check(inputs + "  - {op: floor, in: [a], out: [r]}\n", true);
  }
}

TEST_CASE("const fold: maximum / minimum give NaN when either operand is NaN, in both orders") {
  const double nan = std::nan("");
  for (const std::string dtype : {"float32", "float64"}) {
    const std::string inputs = constant("a", dtype, {nan, 1, nan, 0, -0.0, 2}, "[6]") +
                               constant("b", dtype, {2, nan, nan, -0.0, 0, 1}, "[6]");
    for (const char* op : {"maximum", "minimum"}) {
      check(inputs + "  - {op: " + std::string(op) + ", in: [a, b], out: [r]}\n", true);
      check(inputs + "  - {op: " + std::string(op) + ", in: [b, a], out: [r]}\n", true);
    }
  }
}

TEST_CASE("const fold: data movement (reshape, slice, concat, stack) in every dtype") {
  for (const std::string& dtype : kPlainDtypes) {
    const std::string a = constant("a", dtype, sample_values(dtype), "[2, 3]");
    check(a + "  - {op: full_int_array, out: [s], attrs: {value: [3, 2], dtype: int64}}\n"
              "  - {op: reshape, in: [a, s], out: [r]}\n",
          true);
    check(a + "  - {op: slice, in: [a], out: [r], attrs: {axes: [1], starts: [1], ends: [3], infer_flags: [1], "
              "decrease_axis: []}}\n",
          true);
    check(a + "  - {op: builtin.combine, in: [a, a], out: [l]}\n"
              "  - {op: concat, in: [l], out: [r], attrs: {axis: 1}}\n",
          true);
    check(a + "  - {op: builtin.combine, in: [a, a], out: [l]}\n"
              "  - {op: stack, in: [l], out: [r], attrs: {axis: 0}}\n",
          true);
  }
}

TEST_CASE("const fold: numel of every dtype and rank, of a constant and of an input of static dims") {
  for (const std::string& dtype : kPlainDtypes) {
    const std::vector<double> v = sample_values(dtype);
    check(constant("a", dtype, v, "[2, 3]") + "  - {op: numel, in: [a], out: [r]}\n", true);
    check(constant("a", dtype, {v[1]}, "[]") + "  - {op: numel, in: [a], out: [r]}\n", true);
  }
  check("  - {op: numel, in: [x], out: [r]}\n", true);  // the input's data is unknown, its dims are not
}

}  // namespace
}  // namespace kforge
