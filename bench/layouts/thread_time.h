// The clock of the oneDNN layer benchmarks in this folder: thread CPU time (the machines are shared and noisy;
// a thread's own CPU time leaves out the time other processes take), and the median of a set of timings.
#pragma once

#include <algorithm>
#include <ctime>
#include <vector>

inline double now_ms() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
