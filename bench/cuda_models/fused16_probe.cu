// Probe (issue 35, 16-bit CNNs): does cuDNN 9's legacy fused call (cudnnConvolutionBiasActivationForward: convolution
// + bias + residual + ReLU in one call) take 16-bit NHWC data with a 16-bit or a float32 bias, and what does it cost
// against the plain convolution, which kforge follows with its own epilogue kernel (kforge_channel_epilogue.cuh)?
// resnet50-like shapes, algorithms IMPLICIT_GEMM (0) and IMPLICIT_PRECOMP_GEMM (1), GPU time per call over 50 calls
// (CUDA events), zero-filled operands. BENCHMARKS.md, "16-bit CNNs on the H200, again".
//
//   source bench/cudnn_env.sh; use_wheel_cudnn
//   nvcc -arch=sm_90 -std=c++20 -O2 -I $CUDNN_DIR/include -L $CUDNN_DIR/lib bench/cuda_models/fused16_probe.cu \
//     -o fused16_probe -l:libcudnn.so.9 && ./fused16_probe
#include <cudnn.h>
#include <cuda_fp16.h>
#include <cstdio>
#include <vector>
#define CK(x) do { cudnnStatus_t s_ = (x); if (s_ != CUDNN_STATUS_SUCCESS) { printf("  %s -> %s\n", #x, cudnnGetErrorString(s_)); } } while (0)
static float time_it(cudaStream_t st, int reps, auto f) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 5; ++i) f();
  cudaEventRecord(a, st); for (int i = 0; i < reps; ++i) f(); cudaEventRecord(b, st); cudaEventSynchronize(b);
  float ms; cudaEventElapsedTime(&ms, a, b); return ms * 1000 / reps;
}
int main() {
  cudnnHandle_t h; cudnnCreate(&h); cudaStream_t st; cudaStreamCreate(&st); cudnnSetStream(h, st);
  struct S { int n, c, hw, k, r, stride; } shapes[] = {{10, 64, 56, 256, 1, 1}, {10, 64, 56, 64, 3, 1}, {10, 512, 28, 128, 1, 1}, {10, 256, 14, 1024, 1, 1}, {1, 64, 56, 256, 1, 1}, {10, 128, 28, 128, 3, 1}};
  for (cudnnDataType_t dt : {CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16}) for (auto s : shapes) {
    int pad = s.r / 2, oh = (s.hw + 2 * pad - s.r) / s.stride + 1;
    size_t xs = size_t(s.n) * s.c * s.hw * s.hw, ws = size_t(s.k) * s.c * s.r * s.r, ys = size_t(s.n) * s.k * oh * oh;
    void *x, *w, *y, *z, *bh, *bf, *work; cudaMalloc(&x, xs * 2); cudaMalloc(&w, ws * 2); cudaMalloc(&y, ys * 2); cudaMalloc(&z, ys * 2);
    cudaMalloc(&bh, s.k * 2); cudaMalloc(&bf, s.k * 4); size_t wsz = 256 << 20; cudaMalloc(&work, wsz);
    cudaMemset(x, 0, xs * 2); cudaMemset(w, 0, ws * 2); cudaMemset(z, 0, ys * 2); cudaMemset(bh, 0, s.k * 2); cudaMemset(bf, 0, s.k * 4);
    cudnnTensorDescriptor_t xd, yd, bhd, bfd; cudnnFilterDescriptor_t wd; cudnnConvolutionDescriptor_t cd; cudnnActivationDescriptor_t ad;
    cudnnCreateTensorDescriptor(&xd); cudnnCreateTensorDescriptor(&yd); cudnnCreateTensorDescriptor(&bhd); cudnnCreateTensorDescriptor(&bfd);
    cudnnCreateFilterDescriptor(&wd); cudnnCreateConvolutionDescriptor(&cd); cudnnCreateActivationDescriptor(&ad);
    CK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NHWC, dt, s.n, s.c, s.hw, s.hw));
    CK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NHWC, dt, s.n, s.k, oh, oh));
    CK(cudnnSetTensor4dDescriptor(bhd, CUDNN_TENSOR_NHWC, dt, 1, s.k, 1, 1));
    CK(cudnnSetTensor4dDescriptor(bfd, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 1, s.k, 1, 1));
    CK(cudnnSetFilter4dDescriptor(wd, dt, CUDNN_TENSOR_NHWC, s.k, s.c, s.r, s.r));
    CK(cudnnSetConvolution2dDescriptor(cd, pad, pad, s.stride, s.stride, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CK(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH));
    CK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0));
    printf("%s n%d c%d %dx%d k%d r%d:\n", dt == CUDNN_DATA_HALF ? "half" : "bf16", s.n, s.c, s.hw, s.hw, s.k, s.r);
    float one = 1, zero = 0;
    for (int algo : {0, 1}) {
      auto A = static_cast<cudnnConvolutionFwdAlgo_t>(algo);
      cudnnStatus_t plain = cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, A, work, wsz, &zero, yd, y);
      float tp = plain == CUDNN_STATUS_SUCCESS ? time_it(st, 50, [&] { cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, A, work, wsz, &zero, yd, y); }) : -1;
      cudnnStatus_t fh = cudnnConvolutionBiasActivationForward(h, &one, xd, x, wd, w, cd, A, work, wsz, &one, yd, z, bhd, bh, ad, yd, y);
      float th = fh == CUDNN_STATUS_SUCCESS ? time_it(st, 50, [&] { cudnnConvolutionBiasActivationForward(h, &one, xd, x, wd, w, cd, A, work, wsz, &one, yd, z, bhd, bh, ad, yd, y); }) : -1;
      cudnnStatus_t ff = cudnnConvolutionBiasActivationForward(h, &one, xd, x, wd, w, cd, A, work, wsz, &one, yd, z, bfd, bf, ad, yd, y);
      float tf = ff == CUDNN_STATUS_SUCCESS ? time_it(st, 50, [&] { cudnnConvolutionBiasActivationForward(h, &one, xd, x, wd, w, cd, A, work, wsz, &one, yd, z, bfd, bf, ad, yd, y); }) : -1;
      printf("  algo %d: plain %s %.1f us | fused half bias %s %.1f us | fused float bias %s %.1f us\n", algo,
             cudnnGetErrorString(plain), tp, cudnnGetErrorString(fh), th, cudnnGetErrorString(ff), tf);
    }
    cudaFree(x); cudaFree(w); cudaFree(y); cudaFree(z); cudaFree(bh); cudaFree(bf); cudaFree(work);
  }
  printf("cuda error: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
