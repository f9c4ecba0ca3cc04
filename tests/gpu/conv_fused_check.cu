// GPU check of cuDNN's fused convolution + bias + ReLU (cudnnConvolutionBiasActivationForward), which
// kforge_cudnn.cuh offers as a method of a float32 convolution whose epilogue is a bias and a ReLU: for every forward
// algorithm cuDNN lists for a shape, in NCHW and NHWC, on kforge's kind of call (strict float32: FMA math; its own
// non-blocking stream, exactly the workspace the heuristics report, z = y with alpha2 = 0, y poisoned first) against cudnnConvolutionForward + a
// bias + ReLU kernel, twice:
//   - finite data: the sums must agree within 1e-4 of the largest output;
//   - a NaN in each image of x (what a convolution over infinities gives): Paddle's relu maps NaN to 0 (x > 0 ? x :
//     0), as kforge's epilogue kernel does, so a method whose ReLU lets NaN through disagrees with Paddle wherever a
//     model overflows (GraphNet's PP-HGNet_base with drawn weights: docs/model-zoo.md). cudnn_relu_keeps_nan() in
//     kforge_cudnn.cuh lists the methods this found so, which the dispatcher does not offer for a ReLU.
// Shapes: PP-HGNet_base's at batch 128 (224 x 224 input) and a zoo-sized one.
//   nvcc -arch=sm_90 -std=c++17 -O2 tests/gpu/conv_fused_check.cu -o conv_fused_check -lcudnn
//   ./conv_fused_check   (exit 0 when every method kforge offers agrees on both)
#include <cudnn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

#define CHECK_CUDA(x)                                                         \
  do {                                                                        \
    cudaError_t e_ = (x);                                                     \
    if (e_ != cudaSuccess) {                                                  \
      std::printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(2);                                                           \
    }                                                                         \
  } while (0)
#define CHECK_CUDNN(x)                                                         \
  do {                                                                         \
    cudnnStatus_t s_ = (x);                                                    \
    if (s_ != CUDNN_STATUS_SUCCESS) {                                          \
      std::printf("%s:%d: %s\n", __FILE__, __LINE__, cudnnGetErrorString(s_)); \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

struct Shape {
  int n, c, h, w, k, r, stride, pad;
};

// y = relu(y + bias[channel]) as Paddle computes it: NaN becomes 0.
__global__ void bias_relu(float* y, const float* bias, int64_t count, int k, int64_t plane, bool nhwc) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < count) {
    const float v = y[i] + bias[nhwc ? i % k : (i / plane) % k];
    y[i] = v > 0.0f ? v : 0.0f;
  }
}

__global__ void fill(float* p, int64_t count, float v) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < count) p[i] = v;
}

const char* kAlgoNames[] = {"implicit_gemm", "implicit_precomp_gemm", "gemm", "direct", "fft", "fft_tiling",
                            "winograd", "winograd_nonfused"};

// Whether kforge offers the fused method for a ReLU (kforge_cudnn.cuh: not FFT or Winograd, not a ReLU that keeps NaN).
bool offered(int algo) {
  return algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM ||
         algo == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
}

struct Buffers {
  float *x, *w, *b, *ref, *y;
  void* work;
  size_t work_bytes;
};

// max |y - ref| / max |ref| over the output (infinite where they differ in NaN), and the NaNs in y.
double compare(const std::vector<float>& want, const std::vector<float>& got, int64_t* nans) {
  double largest = 0.0, worst = 0.0;
  *nans = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    largest = std::fmax(largest, std::fabs(want[i]));
    *nans += std::isnan(got[i]);
    const double d = std::fabs(double(got[i]) - want[i]);
    worst = std::isnan(d) ? INFINITY : std::fmax(worst, d);
  }
  return worst / (largest > 0.0 ? largest : 1.0);
}

// Returns the number of offered methods that disagree.
int check(cudnnHandle_t handle, cudaStream_t stream, const Shape& s, bool nhwc, const Buffers& m) {
  const int oh = (s.h + 2 * s.pad - s.r) / s.stride + 1, ow = (s.w + 2 * s.pad - s.r) / s.stride + 1;
  const int64_t xs = int64_t(s.n) * s.c * s.h * s.w, ys = int64_t(s.n) * s.k * oh * ow;
  const cudnnTensorFormat_t format = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  cudnnTensorDescriptor_t xd, yd, bd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  cudnnActivationDescriptor_t ad;
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&xd));
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&yd));
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&bd));
  CHECK_CUDNN(cudnnCreateFilterDescriptor(&wd));
  CHECK_CUDNN(cudnnCreateConvolutionDescriptor(&cd));
  CHECK_CUDNN(cudnnCreateActivationDescriptor(&ad));
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(xd, format, CUDNN_DATA_FLOAT, s.n, s.c, s.h, s.w));
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(yd, format, CUDNN_DATA_FLOAT, s.n, s.k, oh, ow));
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(bd, format, CUDNN_DATA_FLOAT, 1, s.k, 1, 1));
  CHECK_CUDNN(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, format, s.k, s.c, s.r, s.r));
  CHECK_CUDNN(cudnnSetConvolution2dDescriptor(cd, s.pad, s.pad, s.stride, s.stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                              CUDNN_DATA_FLOAT));
  CHECK_CUDNN(cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH));  // before the heuristics, as kforge's describe()
  CHECK_CUDNN(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
  CHECK_CUDNN(cudnnSetStream(handle, stream));
  // The heuristics' list as kforge takes it for strict float32: FMA or default math, run as FMA.
  cudnnConvolutionFwdAlgoPerf_t perf[2 * CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  CHECK_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(handle, xd, wd, cd, yd, 2 * CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                     &returned, perf));
  std::printf("%s batch %d, %d -> %d channels, %d x %d at %d x %d (stride %d)\n", nhwc ? "NHWC" : "NCHW", s.n, s.c,
              s.k, s.r, s.r, s.h, s.w, s.stride);
  int bad = 0;
  std::vector<float> want(ys), got(ys);
  for (int with_nan = 0; with_nan < 2; ++with_nan) {
    if (with_nan) {  // one NaN per image, in its middle
      for (int b = 0; b < s.n; ++b) {
        const float nan = NAN;
        CHECK_CUDA(cudaMemcpy(m.x + int64_t(b) * (xs / s.n) + xs / s.n / 2, &nan, 4, cudaMemcpyHostToDevice));
      }
    }
    const float one = 1.0f, zero = 0.0f;
    CHECK_CUDNN(cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH));
    CHECK_CUDNN(cudnnConvolutionForward(handle, &one, xd, m.x, wd, m.w, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                                        m.work, m.work_bytes, &zero, yd, m.ref));
    bias_relu<<<unsigned((ys + 255) / 256), 256, 0, stream>>>(m.ref, m.b, ys, s.k, int64_t(oh) * ow, nhwc);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaMemcpy(want.data(), m.ref, ys * 4, cudaMemcpyDeviceToHost));
    for (int algo = 0; algo < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++algo) {
      const cudnnConvolutionFwdAlgoPerf_t* found = nullptr;
      for (int i = 0; i < returned && found == nullptr; ++i) {
        if (perf[i].algo == algo && perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= m.work_bytes &&
            (perf[i].mathType == CUDNN_FMA_MATH || perf[i].mathType == CUDNN_DEFAULT_MATH)) {
          found = &perf[i];
        }
      }
      if (found == nullptr) continue;
      // Strict float32, as kforge with TF32 off runs every listed method (kforge_cudnn.cuh, fill): FMA math. (With
      // CUDNN_DEFAULT_MATH the precomputed implicit GEMM runs TF32: 1.6e-4 to 2.8e-4 of the largest output off on an
      // H200.)
      CHECK_CUDNN(cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH));
      fill<<<unsigned((ys + 255) / 256), 256, 0, stream>>>(m.y, ys, 1000.0f);
      const cudnnStatus_t status = cudnnConvolutionBiasActivationForward(
          handle, &one, xd, m.x, wd, m.w, cd, static_cast<cudnnConvolutionFwdAlgo_t>(algo), m.work, found->memory,
          &zero, yd, m.y, bd, m.b, ad, yd, m.y);
      if (status != CUDNN_STATUS_SUCCESS) continue;
      CHECK_CUDA(cudaStreamSynchronize(stream));
      CHECK_CUDA(cudaMemcpy(got.data(), m.y, ys * 4, cudaMemcpyDeviceToHost));
      int64_t nans = 0;
      const double error = compare(want, got, &nans);
      const bool ok = error <= 1e-4;
      if (offered(algo)) bad += !ok;
      std::printf("  %-8s %-22s %s %.2e (%lld NaN)%s\n", with_nan ? "NaN in x" : "finite", kAlgoNames[algo],
                  ok ? "ok   " : "WRONG", error, static_cast<long long>(nans), offered(algo) ? "" : " (not offered)");
    }
  }
  CHECK_CUDNN(cudnnSetStream(handle, nullptr));
  cudnnDestroyTensorDescriptor(xd), cudnnDestroyTensorDescriptor(yd), cudnnDestroyTensorDescriptor(bd);
  cudnnDestroyFilterDescriptor(wd), cudnnDestroyConvolutionDescriptor(cd), cudnnDestroyActivationDescriptor(ad);
  return bad;
}

}  // namespace

int main() {
  cudnnHandle_t handle;
  CHECK_CUDNN(cudnnCreate(&handle));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::printf("cuDNN %zu\n", cudnnGetVersion());
  const Shape shapes[] = {
      {128, 3, 224, 224, 96, 3, 2, 1}, {128, 160, 56, 56, 192, 3, 1, 1}, {128, 1504, 56, 56, 320, 1, 1, 0},
      {128, 288, 7, 7, 288, 3, 1, 1},  {2, 160, 16, 16, 192, 3, 1, 1},
  };
  int bad = 0;
  for (const Shape& s : shapes) {
    const int oh = (s.h + 2 * s.pad - s.r) / s.stride + 1, ow = (s.w + 2 * s.pad - s.r) / s.stride + 1;
    const int64_t xs = int64_t(s.n) * s.c * s.h * s.w, ws = int64_t(s.k) * s.c * s.r * s.r;
    const int64_t ys = int64_t(s.n) * s.k * oh * ow;
    std::vector<float> hx(xs), hw(ws), hb(s.k);
    uint32_t seed = 12345;
    auto next = [&] {
      seed = seed * 1664525u + 1013904223u;
      return float(seed >> 8) / float(1u << 24) - 0.5f;
    };
    for (auto& v : hx) v = next();
    for (auto& v : hw) v = next() * 0.2f;
    for (auto& v : hb) v = next();
    Buffers m{};
    m.work_bytes = size_t(1) << 30;
    CHECK_CUDA(cudaMalloc(&m.x, xs * 4));
    CHECK_CUDA(cudaMalloc(&m.w, ws * 4));
    CHECK_CUDA(cudaMalloc(&m.b, s.k * 4));
    CHECK_CUDA(cudaMalloc(&m.ref, ys * 4));
    CHECK_CUDA(cudaMalloc(&m.y, ys * 4));
    CHECK_CUDA(cudaMalloc(&m.work, m.work_bytes));
    CHECK_CUDA(cudaMemcpy(m.w, hw.data(), ws * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(m.b, hb.data(), s.k * 4, cudaMemcpyHostToDevice));
    for (bool nhwc : {false, true}) {
      // The same values read in either layout: the comparison is within one layout.
      CHECK_CUDA(cudaMemcpy(m.x, hx.data(), xs * 4, cudaMemcpyHostToDevice));
      bad += check(handle, stream, s, nhwc, m);
    }
    cudaFree(m.x), cudaFree(m.w), cudaFree(m.b), cudaFree(m.ref), cudaFree(m.y), cudaFree(m.work);
  }
  cudaStreamDestroy(stream);
  cudnnDestroy(handle);
  std::printf("%d offered methods wrong\n", bad);
  return bad == 0 ? 0 : 1;
}
