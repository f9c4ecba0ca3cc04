// The forms of the losses no fused group takes (cuda_plan_index.h: plan_cuda_index_map), checked in the order their
// kernels (codegen/cuda_index_loss.cpp) read them: sigmoid_cross_entropy_with_logits (x, label and pos_weight of one
// dtype and size, a constant normalize and ignore_index) and cross_entropy_with_softmax (both outputs, a soft label
// of x's dtype or a hard one of an index type, the class axis normalised).
#include "passes/cuda_plan_index_checks.h"

namespace kforge::passes::cuda_plan_internal {

bool IndexChecks::sigmoid_cross_entropy() {
  const uint32_t x = call_.tensor_arg("x"), label = call_.tensor_arg("label"), weight = call_.tensor_arg("pos_weight"),
                 out = out_value();
  const bool typed = same_type(x, out, true);
  const std::optional<bool> normalize = call_.constant_bool("normalize");
  const std::optional<int64_t> ignore = typed ? constant_int("ignore_index") : std::nullopt;
  if (!ignore) return false;
  if (!normalize) return fail("its normalize is not a constant known at generation time");
  for (uint32_t v : {label, weight}) {
    if (v == kNone) continue;
    if (value(v).dtype != value(x).dtype || value(v).numel() != value(x).numel()) {
      return fail("its label and pos_weight are not of x's dtype and size");
    }
    // With normalize, one thread writes every loss before it reads the labels again to count them.
    if (value(v).buffer == value(out).buffer && *normalize) return fail("its label shares its output's buffer");
  }
  if (label == kNone) return fail("it needs a label");
  form_.ignore_index = *ignore;
  form_.normalize = *normalize;
  return true;
}

bool IndexChecks::softmax_cross_entropy() {
  const uint32_t x = call_.tensor_arg("input"), label = call_.tensor_arg("label"), prob = output(0), loss = output(1);
  if (!same_type(x, loss, true)) return false;
  const std::optional<bool> soft = call_.constant_bool("soft_label"), use_softmax = call_.constant_bool("use_softmax");
  const std::optional<int64_t> ignore = constant_int("ignore_index");
  const std::optional<int64_t> axis = ignore ? constant_int("axis") : std::nullopt;
  if (!axis) return false;
  if (!soft || !use_softmax) return fail("its soft_label or use_softmax is not a constant known at generation time");
  if (prob == kNone || value(prob).dtype != value(x).dtype) return fail("its softmax output is absent");
  if (label == kNone) return fail("it needs a label");
  for (uint32_t v : {prob, loss}) {
    if (value(v).buffer == value(x).buffer || value(v).buffer == value(label).buffer) {
      return fail("an output shares its input's buffer");
    }
  }
  // A soft label has x's dtype (same_type keeps it the form's), a hard one an index type.
  if (*soft ? !same_type(label, loss, true) : !index_type(label)) return false;
  const SymShape& xd = value(x).dims;
  if (xd.empty()) return fail("its input is 0-D");
  if (!axis_of(*axis, xd.size(), &form_.axis, "its axis is out of range")) return false;
  form_.ignore_index = *ignore;
  form_.soft_label = *soft;
  form_.use_softmax = *use_softmax;
  return true;
}

}  // namespace kforge::passes::cuda_plan_internal
