// The per-model half of tools/run-model's runner: the generated class behind runner_model.h. Compiled with
//   -DKFORGE_PROGRAM_HEADER='"NAME.h"' -DKFORGE_PROGRAM_CLASS=NAME -I GEN
#include <memory>

#include "runner_model.h"
#include KFORGE_PROGRAM_HEADER

namespace {

using Program = KFORGE_PROGRAM_CLASS;

class Adapter final : public kforge::runner::Model {
 public:
  size_t num_inputs() const override { return Program::kNumInputs; }
  size_t num_outputs() const override { return Program::kNumOutputs; }
  size_t num_parameters() const override { return Program::kNumParameters; }
  const char* input_name(size_t i) const override { return Program::kInputNames[i]; }
  const char* output_name(size_t i) const override { return Program::kOutputNames[i]; }
  kforge::DataType input_dtype(size_t i) const override { return Program::kInputSpecs[i].dtype; }
  int32_t input_rank(size_t i) const override { return Program::kInputSpecs[i].rank; }
  const int64_t* input_dims(size_t i) const override { return Program::kInputSpecs[i].dims; }
  kforge::Status load_parameters(const char* path) override { return program_.load_parameters(path); }
  kforge::Status set_num_threads(int threads) override { return program_.set_num_threads(threads); }
  kforge::Status run(kforge::TensorList inputs, kforge::MutableTensorList outputs) override {
    return program_.run(inputs, outputs);
  }

 private:
  Program program_;  // the object lives on the heap (make_model): a static workspace can be large
};

}  // namespace

std::unique_ptr<kforge::runner::Model> kforge::runner::make_model() { return std::make_unique<Adapter>(); }
