// Library-wide settings of kforge_kernels.h: the thread count and the constant-weights declarations. They matter
// only to the oneDNN-backed kernels (kernels/onednn/); built without oneDNN they are kept or ignored.
#include <atomic>
#include <cstddef>

#include "kforge_kernels.h"

#if KFORGE_KERNELS_ONEDNN
#include "onednn/runtime.h"
#endif

namespace kforge::kernels {

namespace {
std::atomic<int> g_num_threads{1};
}  // namespace

void set_num_threads(int threads) { g_num_threads.store(threads < 1 ? 1 : threads, std::memory_order_relaxed); }

int num_threads() { return g_num_threads.load(std::memory_order_relaxed); }

bool has_onednn() {
#if KFORGE_KERNELS_ONEDNN
  return true;
#else
  return false;
#endif
}

const char* preferred_conv_layout() {
#if KFORGE_KERNELS_ONEDNN
  // The ISA masks are supersets of each other's bits (dnnl_types.h): avx2 0x7, avx512_core 0x27, avx2_vnni 0x407.
  const unsigned isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const unsigned avx2 = static_cast<unsigned>(dnnl_cpu_isa_avx2);
  const unsigned avx512_core = static_cast<unsigned>(dnnl_cpu_isa_avx512_core);
  // BENCHMARKS.md, "On an AVX2 machine: NCHW8c between layers": there oneDNN's k x k convolutions run on nChw8c and
  // reorder NHWC activations into it and back in every call; with AVX-512 its NHWC convolutions are the fastest.
  if ((isa & avx512_core) != avx512_core && (isa & avx2) == avx2) return "nchw8c";
#endif
  return "nhwc";
}

void declare_constant(const void* data, size_t bytes) {
#if KFORGE_KERNELS_ONEDNN
  onednn::declare_constant(data, bytes);
#else
  (void)data;
  (void)bytes;
#endif
}

void release_constant(const void* data) {
#if KFORGE_KERNELS_ONEDNN
  onednn::release_constant(data);
#else
  (void)data;
#endif
}

namespace {
// Generated classes reach the settings above through kforge_runtime.h's hooks (they declare only the kernels they
// call). Installed while the program starts, by this file's static initialisation: the oneDNN kernels call
// num_threads(), so this file is linked into every program that uses them.
[[maybe_unused]] const bool g_hooks_installed = [] {
  KernelLibraryHooks& hooks = kernel_library_hooks();
  hooks.declare_constant = &declare_constant;
  hooks.release_constant = &release_constant;
  hooks.set_num_threads = &set_num_threads;
  return true;
}();
}  // namespace

}  // namespace kforge::kernels
