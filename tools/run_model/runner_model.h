// The boundary between tools/run-model's runner (runner.cc, compiled once per build directory) and one generated
// class (model_adapter.cc, compiled with the class's header for each model): the runner sees the model only
// through this interface, so that a model costs one small compile besides its generated code.
#ifndef KFORGE_TOOLS_RUN_MODEL_RUNNER_MODEL_H_
#define KFORGE_TOOLS_RUN_MODEL_RUNNER_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kforge_runtime.h"

namespace kforge::runner {

class Model {
 public:
  virtual ~Model() = default;
  virtual size_t num_inputs() const = 0;
  virtual size_t num_outputs() const = 0;
  virtual size_t num_parameters() const = 0;
  virtual const char* input_name(size_t i) const = 0;
  virtual const char* output_name(size_t i) const = 0;
  // What run() accepts for input i: dtype, rank and dims (-1: any size).
  virtual DataType input_dtype(size_t i) const = 0;
  virtual int32_t input_rank(size_t i) const = 0;
  virtual const int64_t* input_dims(size_t i) const = 0;
  virtual Status load_parameters(const char* path) = 0;
  virtual Status set_num_threads(int threads) = 0;
  virtual Status run(TensorList inputs, MutableTensorList outputs) = 0;
};

// The model called `name` (the runner's --model; "" when not given), or null when there is none: model_adapter.cc
// defines it for the one class it is compiled with (name ""), a batch of several classes for each by name.
std::unique_ptr<Model> make_model(const char* name);

}  // namespace kforge::runner

#endif  // KFORGE_TOOLS_RUN_MODEL_RUNNER_MODEL_H_
