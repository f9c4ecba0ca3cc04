// Timing of captured CUDA graphs for the kernel benchmarks of bench/transformers (qkv_bench.cu, logits_bench.cu).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                  \
  do {                                                                            \
    if (cudaError_t e_ = (x); e_ != cudaSuccess) {                                \
      std::printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));     \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

// Median us of `runs` replays of a graph of `layers` repetitions of `body`, per repetition.
template <typename F>
float time_graph(cudaStream_t s, int layers, int runs, F body) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  body();  // plans built outside the capture
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int l = 0; l < layers; ++l) body();
  CHECK(cudaStreamEndCapture(s, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < runs + 5; ++r) {
    CHECK(cudaEventRecord(a, s));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    if (r >= 5) t.push_back(ms * 1000 / layers);
  }
  std::sort(t.begin(), t.end());
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return t[t.size() / 2];
}
