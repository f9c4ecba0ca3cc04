// shared header from the template's own directory
#include <cstdint>

int64_t add(int64_t a, int64_t b) {
  return a + b;
}
int64_t negate(int64_t x) {
  return -x;
}
// int64_t add(int64_t a, int64_t b)
