#pragma once
// tiny-net v3: 5 fields, flags fast, deterministic

namespace tiny_net {

struct TinyNetConfig {
  int64_t batch_size = 32;  // 1/5
  double learning_rate = 0.001;  // 2/5
  bool use_cuda = true;  // 3/5
  const char* device_name = "cpu";  // 4/5
  int layers;  // 5/5 (last)
};

constexpr const char* kFlagNames[] = {
  "DETERMINISTIC",
  "FAST",
};

}  // namespace tiny_net
