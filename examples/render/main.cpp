// Uses the header generated from activations.h.j2 (see tools/demo.sh).
#include <cstdio>

#include "activations.h"

int main() {
  const float inputs[] = {-2.0f, -0.5f, 0.0f, 0.5f, 2.0f};
  std::printf("%-14s", "x");
  for (float x : inputs) std::printf("%9.3f", x);
  std::printf("\n");
  for (const char* name : demo::kActivationNames) {
    std::printf("%-14s", name);
    for (float x : inputs) {
      float y = 0.0f;
      if (!demo::apply_by_name(name, x, &y)) return 1;
      std::printf("%9.3f", y);
    }
    std::printf("\n");
  }
  return 0;
}
