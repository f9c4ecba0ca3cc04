// The per-model half of tools/run-model's runner: the generated class behind runner_model.h. Compiled with
//   -DKFORGE_PROGRAM_HEADER='"NAME.h"' -DKFORGE_PROGRAM_CLASS=NAME -I GEN
#include "model_adapter.h"
#include KFORGE_PROGRAM_HEADER

// One class: --model is not needed, and any name other than empty is unknown.
std::unique_ptr<kforge::runner::Model> kforge::runner::make_model(const char* name) {
  if (name != nullptr && name[0] != '\0') return nullptr;
  return std::make_unique<Adapter<KFORGE_PROGRAM_CLASS>>();
}
