// The emitted text is real code: every expression below is emitted as C++, compiled with the system C++
// compiler under -Wall -Wextra -Werror, run on several value sets, and its results must equal the
// evaluator's bit for bit (same <cmath>, same float rounding). The CUDA text is emitted into a
// self-checking .cu program (expected values from the evaluator, with the CUDA math library's ulp
// tolerance) that must compile with nvcc under -Werror; with KFORGE_TEST_GPU=1 it is also run.
// KFORGE_EMIT_CU_OUT=PATH keeps a copy of that program (to run it on a GPU machine).
// A missing compiler skips its part with a warning.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unistd.h>

#include "harness.h"

using namespace kforge;
using namespace kforge::expr;
using namespace kforge::expr::testing;

namespace fs = std::filesystem;

namespace {

using ST = ScalarType;

ExprContext context() {
  return ExprContext("mixed")
      .input("x", ST::kFloat32)
      .input("h", ST::kFloat16)
      .input("d", ST::kFloat64)
      .input("i", ST::kInt32)
      .input("k", ST::kInt64)
      .input("c", ST::kBool)
      .input("e", ST::kBool)
      .attribute("alpha", ST::kFloat32)
      .attribute("beta", ST::kFloat64)
      .attribute("count", ST::kInt32)
      .attribute("flag", ST::kBool);
}

// Every operator, function and literal form, in float32, float64 and the integer types.
const std::vector<std::string> kExpressions = {
    "max(x, 0)", "min(d, 0)", "max(i, 0)", "min(k, 1)", "max(k, i)", "min(x, h)", "max(x, -inf)", "min(d, inf)",
    "x + h * alpha - d / beta", "i * 3 - count + 1", "k * 2 - i", "i / count", "i % count", "k / 2 + k % 3",
    "x % alpha", "d % 0.75", "-x", "- -i", "x - -x", "-(x * x)", "x * -2", "k + 3000000000",
    "rsqrt(x * x + 1)", "rsqrt(d * d + 1)", "sigmoid(x)", "sigmoid(-d)", "sigmoid(x + 1)",
    "exp(x)", "exp(d)", "exp(k)", "expm1(x)", "log(abs(x) + 1)", "log1p(abs(d))", "log2(abs(x) + 2)",
    "log10(abs(d) + 2)", "sqrt(abs(x))", "sqrt(abs(d))", "erf(x)", "erf(d)", "tanh(x)", "tanh(d)",
    "sin(x) + cos(x) + tan(x)", "sin(d) + cos(d) + tan(d)", "asin(x / 4) + acos(x / 4) + atan(x)",
    "asin(d / 4) + acos(d / 4) + atan(d)", "sinh(x) + cosh(x)", "sinh(d) + cosh(d)",
    "pow(abs(x), alpha)", "pow(abs(d), 2)", "pow(i, 2)", "abs(x)", "abs(d)", "abs(i)", "abs(k)",
    "floor(x) + ceil(x) + trunc(x)", "floor(d) + ceil(d) + trunc(d)", "floor(i) + ceil(k)",
    "isnan(x) || isinf(d) || !isfinite(h)", "isnan(log(x))", "x > 0", "d <= beta", "i == count", "k != i",
    "c && !e || flag", "c || e && flag", "(x > 0) == (i < 1)", "!c == e", "c ? x : 0", "select(e, d, i)",
    "c ? (e ? x : 1) : 2", "flag ? 1 : 2", "int32(x) / 2", "float16(i) * 0.5", "bool(x)", "int64(c) + k",
    "float64(x) * d", "int32(-inf) + 0 * i", "int64(inf) - 0 * k", "x * 1e-5 + 100000000", "d * 1e300",
    "x * beta + count", "h * alpha",
    "flag ? 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))) : 0.5 * x * (1 + erf(x * "
    "0.7071067811865476))",
    "x != x ? h : (h != h ? x : max(x, h))",
    "i % count != 0 && (i % count < 0) != (count < 0) ? i % count + count : i % count",
};

struct ValueSet {
  float x, h;
  double d;
  int32_t i;
  int64_t k;
  bool c, e;
  float alpha;
  double beta;
  int32_t count;
  bool flag;
};

const std::vector<ValueSet> kValueSets = {
    {1.5f, -2.0f, 0.1, 7, -9, true, false, 0.1f, 0.25, 3, false},
    {-0.75f, 0.5f, -3.25, -4, 12, false, true, -2.5f, 1e-3, -2, true},
    {0.0f, 3.0f, 2.5, 1, 1, true, true, 1.0f, -4.0, 5, true},
};

EvalBindings bindings(const ValueSet& v) {
  return EvalBindings::from_maps(
      {{"x", Value::of_float(v.x, ST::kFloat32)},
       {"h", Value::of_float(v.h, ST::kFloat32)},
       {"d", Value::of_float(v.d)},
       {"i", Value::of_int(v.i, ST::kInt32)},
       {"k", Value::of_int(v.k)},
       {"c", Value::of_bool(v.c)},
       {"e", Value::of_bool(v.e)}},
      {{"alpha", Value::of_float(v.alpha, ST::kFloat32)},
       {"beta", Value::of_float(v.beta)},
       {"count", Value::of_int(v.count, ST::kInt32)},
       {"flag", Value::of_bool(v.flag)}});
}

struct Emitted {
  std::string text;
  ScalarType type;
  std::vector<Value> expected;  // per value set
};

std::vector<Emitted> emit_all(EmitTarget target) {
  std::vector<Emitted> out;
  for (const std::string& text : kExpressions) {
    Harness h;
    std::optional<Expression> typed = h.typed(text, context());
    INFO(text << "\n" << h.out.str());
    REQUIRE(typed);
    Emitted e{emit(*typed->root, target), typed->root->type, {}};
    for (const ValueSet& v : kValueSets) {
      std::string error;
      std::optional<Value> value = evaluate(*typed->root, bindings(v), &error);
      INFO(error);
      REQUIRE(value);
      e.expected.push_back(*value);
    }
    out.push_back(std::move(e));
  }
  return out;
}

const char* kParams =
    "[[maybe_unused]] float x, [[maybe_unused]] float h, [[maybe_unused]] double d, [[maybe_unused]] int32_t i, "
    "[[maybe_unused]] int64_t k, [[maybe_unused]] bool c, [[maybe_unused]] bool e, [[maybe_unused]] const float alpha, "
    "[[maybe_unused]] const double beta, [[maybe_unused]] const int32_t count, [[maybe_unused]] const bool flag";

std::string value_sets_source() {
  std::string out = "struct ValueSet { float x, h; double d; int32_t i; int64_t k; bool c, e; float alpha; double beta; "
                    "int32_t count; bool flag; };\n";
  out += "static volatile int kSets = " + std::to_string(kValueSets.size()) + ";\n";
  // Not const: the compiler must not fold the math at compile time (GCC folds with MPFR, not libm).
  out += "ValueSet kValueSets[] = {\n";
  for (const ValueSet& v : kValueSets) {
    out += fmt::format("  {{{:a}f, {:a}f, {:a}, {}, {}, {}, {}, {:a}f, {:a}, {}, {}}},\n", v.x, v.h, v.d, v.i, v.k, v.c,
                       v.e, v.alpha, v.beta, v.count, v.flag);
  }
  return out + "};\n";
}

bool have_tool(const std::string& command) { return std::system((command + " --version > /dev/null 2>&1").c_str()) == 0; }

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / fmt::format("kforge_emit_{}", ::getpid());
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

}  // namespace

TEST_CASE("emitted C++ compiles warning-free and computes what the evaluator computes") {
  const std::string cxx = env_or("CXX", "c++");
  if (!have_tool(cxx)) {
    WARN("skipped: no C++ compiler '" << cxx << "'");
    return;
  }
  const std::vector<Emitted> all = emit_all(EmitTarget::kCpp);
  std::string src = "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n#include <cstdio>\n#include <limits>\n\n"
                    "#include \"kforge_math.h\"\n\n";  // exp and erf: the evaluator's too
  src += value_sets_source();
  for (size_t n = 0; n < all.size(); ++n) {
    src += fmt::format("static {} e{}({}) {{\n  return {};\n}}\n", cpp_type_name(all[n].type), n, kParams, all[n].text);
  }
  src += "int main() {\n  for (int s = 0; s < kSets; ++s) {\n    const ValueSet& v = kValueSets[s];\n";
  for (size_t n = 0; n < all.size(); ++n) {
    const std::string call = fmt::format("e{}(v.x, v.h, v.d, v.i, v.k, v.c, v.e, v.alpha, v.beta, v.count, v.flag)", n);
    if (is_float(all[n].type)) {
      src += fmt::format("    std::printf(\"{} %d %a\\n\", s, static_cast<double>({}));\n", n, call);
    } else {
      src += fmt::format("    std::printf(\"{} %d %lld\\n\", s, static_cast<long long>({}));\n", n, call);
    }
  }
  src += "  }\n  return 0;\n}\n";

  TempDir dir;
  std::ofstream(dir.path / "emitted.cpp") << src;
  const std::string compile = fmt::format("{} -std=c++17 -O2 -ffp-contract=off -Wall -Wextra -Werror -I {} {} -o {} 2> {}",
                                          cxx, KFORGE_RUNTIME_HEADER_DIR, (dir.path / "emitted.cpp").string(), (dir.path / "emitted").string(),
                                          (dir.path / "compile.log").string());
  INFO(compile << "\n" << read_all(dir.path / "compile.log"));
  REQUIRE(std::system(compile.c_str()) == 0);
  REQUIRE(std::system(fmt::format("{} > {}", (dir.path / "emitted").string(), (dir.path / "out.txt").string()).c_str()) == 0);

  std::istringstream lines(read_all(dir.path / "out.txt"));
  size_t compared = 0;
  size_t n = 0;
  int s = 0;
  std::string result;
  while (lines >> n >> s >> result) {
    REQUIRE(n < all.size());
    const Value& want = all[n].expected[static_cast<size_t>(s)];
    INFO(kExpressions[n] << " = " << all[n].text << "\nvalue set " << s << ": program " << result << ", evaluator "
                         << to_string(want));
    if (is_float(all[n].type)) {
      const double got = std::strtod(result.c_str(), nullptr);
      CHECK(((std::isnan(got) && std::isnan(want.f)) || got == want.f));
    } else {
      CHECK(std::strtoll(result.c_str(), nullptr, 10) == (want.type == ST::kBool ? (want.b ? 1 : 0) : want.i));
    }
    ++compared;
  }
  CHECK(compared == all.size() * kValueSets.size());
}

TEST_CASE("emitted CUDA compiles with nvcc under -Werror (and runs on a GPU when asked)") {
  std::string nvcc = env_or("NVCC", "nvcc");
  if (!have_tool(nvcc) && have_tool("/usr/local/cuda/bin/nvcc")) nvcc = "/usr/local/cuda/bin/nvcc";
  const std::vector<Emitted> all = emit_all(EmitTarget::kCuda);
  std::string src =
      "#include <cmath>\n#include <cstdint>\n#include <cstdio>\n#include <cuda_runtime.h>\n\n"
      "#include \"kforge_fused.cuh\"\n\n";
  src += value_sets_source();
  for (size_t n = 0; n < all.size(); ++n) {
    src += fmt::format("__device__ {} e{}({}) {{\n  return {};\n}}\n", cpp_type_name(all[n].type), n, kParams, all[n].text);
  }
  src += fmt::format("constexpr int kCount = {};\n", all.size());
  src += "__global__ void run_all(ValueSet v, double* out) {\n";
  for (size_t n = 0; n < all.size(); ++n) {
    src += fmt::format("  out[{}] = static_cast<double>(e{}(v.x, v.h, v.d, v.i, v.k, v.c, v.e, v.alpha, v.beta, v.count, v.flag));\n", n, n);
  }
  src += "}\n\n// expected[set][expression], from kforge's evaluator (C++ <cmath> semantics)\n";
  src += fmt::format("static const double kExpected[{}][kCount] = {{\n", kValueSets.size());
  for (size_t s = 0; s < kValueSets.size(); ++s) {
    src += "  {";
    for (size_t n = 0; n < all.size(); ++n) {
      const Value& v = all[n].expected[s];
      if (n) src += ", ";
      if (is_float(v.type) && std::isnan(v.f)) {
        src += "NAN";
      } else if (is_float(v.type) && std::isinf(v.f)) {
        src += v.f > 0 ? "HUGE_VAL" : "-HUGE_VAL";
      } else {
        src += fmt::format("{:a}", v.as_double());
      }
    }
    src += "},\n";
  }
  src += "};\nstatic const bool kIsFloat32[kCount] = {";
  for (size_t n = 0; n < all.size(); ++n) src += fmt::format("{}{}", n ? ", " : "", all[n].type == ST::kFloat32);
  src += "};\n";
  src += R"(
// CUDA's math functions are within a few ulp of the correctly rounded result, glibc's likewise, and the
// expressions compound them: compare with a relative tolerance of 2e-5 (float32) or 1e-12 (float64).
int main() {
  double* out = nullptr;
  if (cudaMalloc(&out, kCount * sizeof(double)) != cudaSuccess) { std::printf("no CUDA device\n"); return 2; }
  int failed = 0;
  for (int s = 0; s < kSets; ++s) {
    run_all<<<1, 1>>>(kValueSets[s], out);
    double got[kCount];
    if (cudaMemcpy(got, out, sizeof(got), cudaMemcpyDeviceToHost) != cudaSuccess) { std::printf("launch failed\n"); return 2; }
    for (int n = 0; n < kCount; ++n) {
      const double want = kExpected[s][n];
      const double tol = (kIsFloat32[n] ? 2e-5 : 1e-12) * std::fmax(1.0, std::fabs(want));
      const bool ok = (std::isnan(want) && std::isnan(got[n])) || want == got[n] || std::fabs(want - got[n]) <= tol;
      if (!ok) { std::printf("set %d expression %d: got %.17g, want %.17g\n", s, n, got[n], want); ++failed; }
    }
  }
  std::printf("%d of %d values differ\n", failed, kCount * kSets);
  return failed == 0 ? 0 : 1;
}
)";
  if (const char* keep = std::getenv("KFORGE_EMIT_CU_OUT")) std::ofstream(keep) << src;
  if (!have_tool(nvcc)) {
    WARN("skipped: nvcc not found (set NVCC)");
    return;
  }
  TempDir dir;
  std::ofstream(dir.path / "emitted.cu") << src;
  const bool run = std::getenv("KFORGE_TEST_GPU") != nullptr;
  const std::string compile =
      fmt::format("{} -std=c++17 -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror -I {} {} {} -o {} 2> {}", nvcc,
                  KFORGE_CUDA_HEADER_DIR, run ? "" : "-c", (dir.path / "emitted.cu").string(),
                  (dir.path / "emitted").string(),
                  (dir.path / "compile.log").string());
  INFO(compile << "\n" << read_all(dir.path / "compile.log"));
  REQUIRE(std::system(compile.c_str()) == 0);
  if (run) {
    const int status = std::system(fmt::format("{} > {}", (dir.path / "emitted").string(), (dir.path / "run.txt").string()).c_str());
    INFO(read_all(dir.path / "run.txt"));
    CHECK(status == 0);
  }
}
