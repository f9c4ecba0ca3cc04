// A generated class behind runner_model.h's interface, for any class Program that kforge compile wrote.
// model_adapter.cc instantiates it for one class; tests/paddle/check_fixture.py's batches instantiate it for each
// class of a unity file that holds several programs (each in the namespace kforge compile --namespace gave it).
#ifndef KFORGE_TOOLS_RUN_MODEL_MODEL_ADAPTER_H_
#define KFORGE_TOOLS_RUN_MODEL_MODEL_ADAPTER_H_

#include <memory>

#include "runner_model.h"

namespace kforge::runner {

// What the runner reads of a class without running it: its inputs, outputs and parameters (the CPU and the CUDA
// adapters share it).
template <typename Program>
class ProgramShape : public Model {
 public:
  size_t num_inputs() const override { return Program::kNumInputs; }
  size_t num_outputs() const override { return Program::kNumOutputs; }
  size_t num_parameters() const override { return Program::kNumParameters; }
  const char* input_name(size_t i) const override { return Program::kInputNames[i]; }
  const char* output_name(size_t i) const override { return Program::kOutputNames[i]; }
  kforge::DataType input_dtype(size_t i) const override { return Program::kInputSpecs[i].dtype; }
  int32_t input_rank(size_t i) const override { return Program::kInputSpecs[i].rank; }
  const int64_t* input_dims(size_t i) const override { return Program::kInputSpecs[i].dims; }
};

// A --target cpu class: parameters, threads and run() go straight to it.
template <typename Program>
class Adapter final : public ProgramShape<Program> {
 public:
  kforge::Status load_parameters(const char* path) override { return program_.load_parameters(path); }
  kforge::Status set_num_threads(int threads) override { return program_.set_num_threads(threads); }
  kforge::Status run(kforge::TensorList inputs, kforge::MutableTensorList outputs) override {
    return program_.run(inputs, outputs);
  }

 private:
  Program program_;  // the object lives on the heap (make_model): a static workspace can be large
};

}  // namespace kforge::runner

#endif  // KFORGE_TOOLS_RUN_MODEL_MODEL_ADAPTER_H_
