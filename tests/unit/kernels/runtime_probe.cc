// Compiled by check_runtime_header.py with every compiler at hand, with strict warnings: it exercises the whole
// runtime header the way generated code and kernel libraries do, and exits 0 when the results are right.
#include "kforge_runtime.h"

#include <cstdio>

namespace {

static_assert(KFORGE_RUNTIME_VERSION == 4, "the probe is written for runtime version 4");

// Kernel library hooks as a library installs them (plain function pointers, no captures).
size_t g_declared_bytes = 0;
void declare_hook(const void* data, size_t bytes) { g_declared_bytes += data != nullptr ? bytes : 0; }
void release_hook(const void* data) { g_declared_bytes = data != nullptr ? 0 : g_declared_bytes; }

// A kernel in the calling convention, with YAML-style defaults that must compile as written.
kforge::Status scale_like(const kforge::KernelContext& ctx, const kforge::Tensor& x, const kforge::Scalar& scale = 1.0,
                          const kforge::Scalar& stop = false, const kforge::IntArray& axis = {0, 0},
                          kforge::DataType dtype = kforge::DataType::FLOAT32,
                          const kforge::Place& place = kforge::CPUPlace(), kforge::Tensor* out = nullptr) {
  (void)axis;
  (void)stop;
  if (ctx.dtype != dtype || place != kforge::CPUPlace()) return kforge::Status::Error("bad dtype ", ctx.dtype);
  if (out == nullptr) return kforge::Status::Error("no output");
  const float* in = x.data_as<const float>();
  float* o = out->data_as<float>();
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] * scale.to<float>();
  return kforge::Status::OK();
}

kforge::Status run() {
  // Sizes as generated classes check them (codegen/size_table.h, the generated compute_sizes()).
  const int64_t s0 = int64_t{1} << 61;
  if (!(64 * kforge::checked_ceil_div(12 * kforge::CheckedInt(3), 64) + kforge::checked_max(kforge::CheckedInt(3), 1)).ok() ||
      (8 * kforge::CheckedInt(s0)).ok()) {
    return kforge::Status::Error("CheckedInt");
  }
  kforge::Tensor x;
  x.dtype = kforge::DataType::kFloat32;
  KFORGE_RETURN_IF_ERROR(x.set_dims({2, 3}));
  KFORGE_RETURN_IF_ERROR(x.allocate());
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = static_cast<float>(i);
  kforge::Tensor out = x;
  out.holder.reset();
  alignas(64) static unsigned char buffer[256];
  kforge::Workspace ws(buffer, sizeof buffer);
  out.data = ws.allocate(out.bytes());
  if (out.data == nullptr) return kforge::Status::Error("workspace too small");
  kforge::KernelContext ctx;
  ctx.dtype = kforge::DataType::kFloat32;
  ctx.scratch = &ws;
  KFORGE_RETURN_IF_ERROR(scale_like(ctx, x, 2, true, {}, kforge::DataType::FLOAT32, kforge::CPUPlace(), &out));
  if (out.data_as<float>()[5] != 10.0f) return kforge::Status::Error("wrong value ", out.data_as<float>()[5]);
  const kforge::Tensor* items[] = {&x, &out};
  kforge::TensorList list{items, 2};
  for (const kforge::Tensor* t : list) {
    if (!t->same_dims(x)) return kforge::Status::Error("dims ", t->dims_string());
  }
  kforge::DataType parsed = kforge::DataType::kUndefined;
  if (!kforge::parse_data_type("DataType::INT64", &parsed) || kforge::size_of(parsed) != 8) {
    return kforge::Status::Error("parse_data_type");
  }
  kforge::Scalar s;
  kforge::Tensor one = x;
  KFORGE_RETURN_IF_ERROR(one.set_dims({1}));
  KFORGE_RETURN_IF_ERROR(kforge::scalar_from_tensor(one, &s));
  kforge::declare_constant(x);  // no hooks installed: nothing happens
  kforge::kernel_library_hooks().declare_constant = &declare_hook;
  kforge::kernel_library_hooks().release_constant = &release_hook;
  kforge::declare_constant(x);
  if (g_declared_bytes != x.bytes()) return kforge::Status::Error("declare_constant hook: ", g_declared_bytes);
  kforge::release_constant(x);
  if (g_declared_bytes != 0) return kforge::Status::Error("release_constant hook");
  kforge::Status copy = kforge::Status::Error("a");
  kforge::Status moved = copy;
  moved = kforge::Status::OK();
  return moved;
}

}  // namespace

int main() {
  kforge::Status s = run();
  if (!s.ok()) {
    std::printf("runtime probe failed: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}
