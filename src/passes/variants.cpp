#include "passes/variants.h"

#include <algorithm>
#include <charconv>

namespace kforge::passes {

namespace {

constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

uint64_t fnv1a64(std::string_view text, uint64_t h) {
  for (char c : text) {
    h ^= static_cast<uint8_t>(c);
    h *= kFnvPrime;
  }
  return h;
}

std::optional<int64_t> const_int(const KernelCall& call, std::string_view name) {
  const KernelArg* arg = call.arg(name);
  if (arg == nullptr || arg->kind != ArgKind::kConstant) return std::nullopt;
  return arg->constant.int_value;
}

const LoweredValue* tensor_arg(const LoweredProgram& program, const KernelCall& call, std::string_view name) {
  const KernelArg* arg = call.arg(name);
  if (arg == nullptr || arg->kind != ArgKind::kTensor || arg->value == kNone) return nullptr;
  return &program.value(arg->value);
}

bool plannable_gemm(const LoweredProgram& program, const KernelCall& call) {
  if (call.op != "matmul" || call.kernel_dtype != ir::DataType::kFloat32) return false;
  const LoweredValue* x = tensor_arg(program, call, "x");
  const LoweredValue* y = tensor_arg(program, call, "y");
  std::optional<bool> tx = call.constant_bool("transpose_x");
  std::optional<bool> ty = call.constant_bool("transpose_y");
  if (x == nullptr || y == nullptr || !tx || !ty) return false;
  if (x->dtype != ir::DataType::kFloat32 || y->dtype != ir::DataType::kFloat32) return false;
  if (y->dims.size() != 2 || x->dims.size() < 2) return false;
  if (*tx && x->dims.size() != 2) return false;  // a transposed batch does not fold into M
  return call.outputs.size() == 1 && call.outputs[0].values.size() == 1 && call.outputs[0].values[0] != kNone;
}

bool plannable_softmax(const LoweredProgram& program, const KernelCall& call) {
  if (call.op != "softmax" || call.kernel_dtype != ir::DataType::kFloat32) return false;
  const LoweredValue* x = tensor_arg(program, call, "x");
  std::optional<int64_t> axis = const_int(call, "axis");
  if (x == nullptr || !axis || x->dtype != ir::DataType::kFloat32 || x->dims.empty()) return false;
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  return (*axis == -1 || *axis == rank - 1) && call.outputs.size() == 1 && call.outputs[0].values.size() == 1 &&
         call.outputs[0].values[0] != kNone;
}

std::vector<KernelVariant> gemm_variants(const std::vector<int64_t>& hints) {
  std::vector<KernelVariant> variants;
  KernelVariant library;
  library.name = "library";
  library.kind = VariantKind::kLibrary;
  library.rank = 0;
  library.config = "extern";
  variants.push_back(library);
  KernelVariant plain;
  plain.name = "gemm_plain";
  plain.kind = VariantKind::kGemmPlain;
  plain.rank = 1;
  plain.config = "ipj";
  variants.push_back(plain);
  for (int64_t hint : hints) {
    KernelVariant blocked = cpu_gemm_variant_for_hint(hint);
    auto same = std::find_if(variants.begin(), variants.end(),
                             [&](const KernelVariant& v) { return v.name == blocked.name; });
    if (same != variants.end()) continue;  // two hints, one tile: the first hint names it
    blocked.rank = static_cast<int>(variants.size());
    variants.push_back(blocked);
  }
  return variants;
}

std::vector<KernelVariant> softmax_variants(const std::vector<int64_t>& hints) {
  std::vector<KernelVariant> variants;
  KernelVariant library;
  library.name = "library";
  library.kind = VariantKind::kLibrary;
  library.config = "extern";
  variants.push_back(library);
  // The single-pass variant keeps the row's exponentials in a local buffer; it suits the short rows.
  KernelVariant single;
  single.name = "row_single_pass";
  single.kind = VariantKind::kRowSinglePass;
  single.rank = 1;
  single.config = "buffered";
  single.hint = {0, *std::min_element(hints.begin(), hints.end())};
  variants.push_back(single);
  for (int64_t hint : hints) {
    KernelVariant looped;
    looped.kind = VariantKind::kRowLooped;
    looped.chunk = row_chunk_for_hint(hint);
    looped.name = "row_looped_c" + std::to_string(looped.chunk);
    looped.config = "chunk=" + std::to_string(looped.chunk);
    looped.hint = {0, hint};
    auto same = std::find_if(variants.begin(), variants.end(),
                             [&](const KernelVariant& v) { return v.name == looped.name; });
    if (same != variants.end()) continue;
    looped.rank = static_cast<int>(variants.size());
    variants.push_back(looped);
  }
  return variants;
}

// The group's ops joined by '_' for a site name ("max_subtract_exp"), the first three and "etc" after them.
std::string label_name(const LoweredProgram& program, const FusedGroup& g) {
  std::string out;
  for (size_t k = 0; k < g.calls.size(); ++k) {
    if (k == 3) return out + "_etc";
    out += (k ? "_" : "") + program.calls[g.calls[k]].op;
  }
  return out;
}

}  // namespace

const MultiKernelSite* MultiKernelPlan::site_for_call(uint32_t call) const {
  for (const MultiKernelSite& site : sites) {
    if (site.call == call) return &site;
  }
  return nullptr;
}

const MultiKernelSite* MultiKernelPlan::site_for_group(uint32_t group) const {
  for (const MultiKernelSite& site : sites) {
    if (site.group == group) return &site;
  }
  return nullptr;
}

std::optional<std::vector<int64_t>> parse_multi_kernel_hints(std::string_view text, std::string& error,
                                                             size_t& error_offset) {
  std::vector<int64_t> hints;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    size_t end = comma == std::string_view::npos ? text.size() : comma;
    std::string_view item = text.substr(start, end - start);
    error_offset = start;
    if (item.empty()) {
      error = "empty size hint in --multi-kernel-hints (expected positive integers such as 64,256,4096)";
      return std::nullopt;
    }
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && ptr == item.data() + item.size() &&
                                                 value > (int64_t{1} << 31))) {
      error = "size hint '" + std::string(item) + "' is too large (at most 2147483648)";
      return std::nullopt;
    }
    if (ec != std::errc() || ptr != item.data() + item.size()) {
      error = "size hint '" + std::string(item) + "' is not an integer";
      return std::nullopt;
    }
    if (value <= 0) {
      error = "size hint '" + std::string(item) + "' must be positive";
      return std::nullopt;
    }
    if (std::find(hints.begin(), hints.end(), value) != hints.end()) {
      error = "size hint " + std::to_string(value) + " is given twice";
      return std::nullopt;
    }
    hints.push_back(value);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return hints;
}

KernelVariant cpu_gemm_variant_for_hint(int64_t hint) {
  KernelVariant v;
  v.kind = VariantKind::kGemmBlocked;
  // Register tiles: mr rows of C x nr columns kept in registers (nr a multiple of the 4/8-float SIMD width);
  // kc: the depth of the packed A and B panels, sized so the B panel (kc x nr floats) stays in L1.
  if (hint <= 32) {
    v.mr = 2, v.nr = 16, v.kc = 128;
  } else if (hint <= 128) {
    v.mr = 4, v.nr = 16, v.kc = 128;
  } else if (hint <= 1024) {
    v.mr = 4, v.nr = 32, v.kc = 256;
  } else {
    v.mr = 8, v.nr = 32, v.kc = 256;
  }
  v.name = "gemm_mr" + std::to_string(v.mr) + "_nr" + std::to_string(v.nr) + "_kc" + std::to_string(v.kc);
  v.config = "mr=" + std::to_string(v.mr) + " nr=" + std::to_string(v.nr) + " kc=" + std::to_string(v.kc);
  v.hint = {hint, 0, 0};
  return v;
}

KernelVariant cuda_simt_variant_for_hint(int64_t hint) {
  KernelVariant v;
  v.kind = VariantKind::kCudaSimt;
  // CTA tiles of 256 threads. Small M needs small tiles to give the GPU enough CTAs (M = 64, N = 4096: 2 x 64
  // CTAs of 32 x 64); large M wants register reuse (per k step and thread, shared-memory loads per FMA: small
  // 6 per 8, medium 8 per 16, large 16 per 64), at the cost of fewer CTAs.
  if (hint <= 128) {
    v.bm = 32, v.bn = 64, v.bk = 16, v.tm = 2, v.tn = 4;  // kSimtTileSmall
  } else if (hint <= 1024) {
    v.bm = 64, v.bn = 64, v.bk = 16, v.tm = 4, v.tn = 4;  // kSimtTileMedium
  } else {
    v.bm = 128, v.bn = 128, v.bk = 8, v.tm = 8, v.tn = 8;  // kSimtTileLarge
  }
  v.name = "simt" + std::to_string(v.bm) + "x" + std::to_string(v.bn) + "x" + std::to_string(v.bk);
  v.config = "bm=" + std::to_string(v.bm) + " bn=" + std::to_string(v.bn) + " bk=" + std::to_string(v.bk) +
             " tm=" + std::to_string(v.tm) + " tn=" + std::to_string(v.tn);
  v.hint = {hint, 0, 0};
  return v;
}

KernelVariant cuda_tensor_core_variant_for_hint(int64_t hint) {
  KernelVariant v;
  v.kind = VariantKind::kCudaTensorCore;
  // The tiles kforge_gemm_tc.cuh chose for the hints 64, 256 and 4096 (measured at N = K = 4096, BENCHMARKS.md:
  // each is the fastest of the tiles at its own hint), with the SIMT thresholds between them: small M wants
  // narrow tiles (enough CTAs to fill the SMs), large M the 128 x 128 tile (the wider 128 x 256 one lost to it
  // at M = 4096, so only the hand-built benchmark set keeps it).
  if (hint <= 128) {
    v.bm = 64, v.bn = 32, v.bk = 64, v.warps_m = 2, v.warps_n = 2, v.stages = 6;  // kTileForHint64
  } else if (hint <= 1024) {
    v.bm = 64, v.bn = 128, v.bk = 32, v.warps_m = 2, v.warps_n = 2, v.stages = 4;  // kTileForHint256
  } else {
    v.bm = 128, v.bn = 128, v.bk = 32, v.warps_m = 2, v.warps_n = 2, v.stages = 4;  // kTileForHint4096
  }
  v.name = "tc" + std::to_string(v.bm) + "x" + std::to_string(v.bn) + "x" + std::to_string(v.bk) + "s" +
           std::to_string(v.stages);
  v.config = "bm=" + std::to_string(v.bm) + " bn=" + std::to_string(v.bn) + " bk=" + std::to_string(v.bk) +
             " warps=" + std::to_string(v.warps_m) + "x" + std::to_string(v.warps_n) +
             " stages=" + std::to_string(v.stages);
  v.hint = {hint, 0, 0};
  return v;
}

int row_chunk_for_hint(int64_t hint) {
  if (hint <= 256) return 64;
  if (hint <= 2048) return 256;
  return 1024;
}

std::vector<KernelVariant> cuda_row_variants_for_hint(int64_t hint) {
  // Capacities in units of float32 elements (16-byte vectors of 4); a group of narrower types holds more.
  constexpr int kTeams[] = {32, 128, 256, 512, 1024};
  auto smallest_team = [&](int64_t elements_per_thread) {
    for (int team : kTeams) {
      if (hint <= static_cast<int64_t>(team) * elements_per_thread) return team;
    }
    return 0;
  };
  std::vector<KernelVariant> out;
  auto add = [&](VariantKind kind, int team, int regs) {
    KernelVariant v;
    v.kind = kind;
    v.team = team;
    v.regs = regs;
    v.name = kind == VariantKind::kCudaRowLooped ? "row_looped_t" + std::to_string(team)
                                                 : "row_regs_t" + std::to_string(team) + "_c" + std::to_string(regs);
    v.config = "team=" + std::to_string(team) + " regs=" + std::to_string(regs);
    v.hint = {0, hint};
    out.push_back(std::move(v));
  };
  // Dense: 4 vectors per thread, the fewest threads per row (more rows in flight per SM).
  if (int team = smallest_team(16); team != 0) add(VariantKind::kCudaRowRegisters, team, 4);
  // Wide: one vector per thread, 4x the threads per row (more parallelism per row when rows are few).
  if (int team = smallest_team(4); team != 0) add(VariantKind::kCudaRowRegisters, team, 1);
  // Looped: any length; a block of 256 up to 8192 elements, 1024 beyond (fewer trips per pass).
  add(VariantKind::kCudaRowLooped, hint <= 8192 ? 256 : 1024, 0);
  return out;
}

uint64_t variant_set_hash(SiteFamily family, const std::vector<KernelVariant>& variants, std::string_view site_config) {
  std::string prefix;
  switch (family) {
    case SiteFamily::kGemm: prefix = "kforge-gemm;"; break;
    case SiteFamily::kRowSoftmax: prefix = "kforge-row-softmax;"; break;
    case SiteFamily::kCudaGemmF32: prefix = std::string(kCudaGemmF32Version) + ";"; break;
    case SiteFamily::kCudaGemm16: prefix = std::string(kCudaGemm16Version) + ";"; break;
    case SiteFamily::kCudaRow: prefix = std::string(kCudaRowVersion) + ";"; break;
  }
  uint64_t h = fnv1a64(prefix, kFnvOffset);
  if (!site_config.empty()) h = fnv1a64("site:" + std::string(site_config) + ";", h);
  for (const KernelVariant& v : variants) {
    std::string part = v.name + ":" + std::to_string(v.rank) + ":" + v.config;
    for (int64_t d : v.hint) part += "," + std::to_string(d);
    h = fnv1a64(part + ";", h);
  }
  return h == 0 ? 1 : h;  // 0 means "compute it at run time" to the dispatcher
}

MultiKernelPlan plan_multi_kernels(const LoweredProgram& program, const std::vector<int64_t>& hints,
                                   const std::vector<uint32_t>& call_group) {
  MultiKernelPlan plan;
  plan.hints = hints;
  if (hints.empty()) return plan;
  for (uint32_t c = 0; c < program.calls.size(); ++c) {
    const KernelCall& call = program.calls[c];
    if (c < call_group.size() && call_group[c] != kNone) continue;  // fused: the group's loop replaces it
    MultiKernelSite site;
    site.call = c;
    if (plannable_gemm(program, call)) {
      site.family = SiteFamily::kGemm;
      site.variants = gemm_variants(hints);
    } else if (plannable_softmax(program, call)) {
      site.family = SiteFamily::kRowSoftmax;
      site.variants = softmax_variants(hints);
    } else {
      continue;
    }
    site.name = "mk_call_" + std::to_string(c) + "_" + call.op;
    site.set_hash = variant_set_hash(site.family, site.variants);
    plan.sites.push_back(std::move(site));
  }
  return plan;
}

MultiKernelPlan plan_cuda_gemm_variants(const FusionPlan& fusion,
                                        const std::vector<int64_t>& hints) {
  MultiKernelPlan plan;
  plan.hints = hints;
  if (hints.empty()) return plan;
  for (const FusedGroup& g : fusion.groups) {
    if (g.kind != GroupKind::kGemm) continue;
    const bool f32 = g.gemm.dtype == ir::DataType::kFloat32;
    MultiKernelSite site;
    site.call = g.gemm.matmul;
    site.group = g.index;
    site.family = f32 ? SiteFamily::kCudaGemmF32 : SiteFamily::kCudaGemm16;
    const std::string epilogue(gemm_epilogue_name(g.gemm.epilogue));
    site.name = "mk_call_" + std::to_string(g.gemm.matmul) + "_matmul" +
                (g.gemm.epilogue == GemmEpilogue::kNone ? "" : "_" + epilogue);
    // (float32 sites keep the config, and so the hash, they had before 16-bit sites existed.)
    site.config = (f32 ? "" : "dtype=" + std::string(ir::dtype_name(g.gemm.dtype)) + " ") + "epilogue=" + epilogue +
                  " transpose_x=" + (g.gemm.transpose_x ? "1" : "0") + " transpose_y=" + (g.gemm.transpose_y ? "1" : "0") +
                  (g.gemm.batched ? " batched=1" : "");
    const bool bf16 = g.gemm.dtype == ir::DataType::kBFloat16;
    const std::string lt_name = f32 ? "cublaslt_f32" : bf16 ? "cublaslt_bf16" : "cublaslt_f16";
    const std::string lt_config = f32 ? "extern compute=32F" : bf16 ? "extern type=16BF compute=32F" : "extern type=16F compute=32F";
    for (int algo = 0; algo < kCublasLtRanks; ++algo) {
      KernelVariant lt;
      lt.kind = VariantKind::kCublasLt;
      lt.algo = algo;
      lt.rank = algo;
      lt.name = algo == 0 ? lt_name : lt_name + "_alg" + std::to_string(algo);
      lt.config = algo == 0 ? lt_config : lt_config + " algo=" + std::to_string(algo);
      site.variants.push_back(lt);
    }
    // The tiles compute one product. The tensor-core kernel reads A [M, K] and B [K, N] as stored, in 16-byte
    // chunks: no transposes, and K and N multiples of 8. Where that is known not to hold, cuBLASLt is the only
    // candidate.
    auto multiple_of_8 = [](const SymExpr& d) {
      const std::optional<int64_t> c = d.constant();
      return !c || *c % 8 == 0;
    };
    const bool tiles = !g.gemm.batched && (f32 || (!g.gemm.transpose_x && !g.gemm.transpose_y &&
                                                   multiple_of_8(g.gemm.n) && multiple_of_8(g.gemm.k)));
    for (int64_t hint : tiles ? hints : std::vector<int64_t>{}) {
      KernelVariant tile = f32 ? cuda_simt_variant_for_hint(hint) : cuda_tensor_core_variant_for_hint(hint);
      auto same = std::find_if(site.variants.begin(), site.variants.end(),
                               [&](const KernelVariant& v) { return v.name == tile.name; });
      if (same != site.variants.end()) continue;  // two hints, one tile: the first hint names it
      tile.rank = static_cast<int>(site.variants.size());
      site.variants.push_back(tile);
    }
    site.set_hash = variant_set_hash(site.family, site.variants, site.config);
    plan.sites.push_back(std::move(site));
  }
  return plan;
}

MultiKernelPlan plan_cuda_row_variants(const LoweredProgram& program, const FusionPlan& fusion,
                                       const std::vector<int64_t>& hints) {
  MultiKernelPlan plan;
  plan.hints = hints;
  if (hints.empty()) return plan;
  for (const FusedGroup& g : fusion.groups) {
    if (g.kind != GroupKind::kRow || g.calls.empty()) continue;
    // The row variants' arguments (RowArgs) carry no shape parameters: a group whose launcher needs them (a
    // broadcast input over dims known only at run time, GPT's residual add + layer norm over [B, S, 768]) keeps
    // the launcher's own choice, as without hints.
    const bool broadcast = std::any_of(g.inputs.begin(), g.inputs.end(),
                                       [](const GroupInput& in) { return in.access == InputAccess::kStrided; });
    if (broadcast && has_dynamic_strides(g)) continue;
    MultiKernelSite site;
    site.call = g.calls.front();
    site.group = g.index;
    site.family = SiteFamily::kCudaRow;
    site.name = "mk_group_" + std::to_string(g.index) + "_" + label_name(program, g);
    // What the kernel's speed depends on besides the shape: its statements (label) and memory traffic.
    site.config = "label=" + g.label + " inputs=";
    for (const GroupInput& in : g.inputs) {
      site.config += std::string(expr::name_of(in.storage)) + ":" + std::to_string(static_cast<int>(in.access)) + ",";
    }
    site.config += " stores=";
    for (const GroupStore& st : g.stores) {
      site.config += std::string(expr::name_of(st.storage)) + (st.per_row ? ":row," : ":element,");
    }
    KernelVariant automatic;
    automatic.name = "row_auto";
    automatic.kind = VariantKind::kCudaRowAuto;
    automatic.config = "by row length";
    site.variants.push_back(automatic);
    for (int64_t hint : hints) {
      for (KernelVariant& v : cuda_row_variants_for_hint(hint)) {
        auto same = std::find_if(site.variants.begin(), site.variants.end(),
                                 [&](const KernelVariant& u) { return u.name == v.name; });
        if (same != site.variants.end()) continue;  // the first hint that chose it names it
        v.rank = static_cast<int>(site.variants.size());
        site.variants.push_back(std::move(v));
      }
    }
    site.set_hash = variant_set_hash(site.family, site.variants, site.config);
    plan.sites.push_back(std::move(site));
  }
  return plan;
}

}  // namespace kforge::passes
