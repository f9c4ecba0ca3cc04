#include "codegen/cuda_attention.h"

#include "codegen/cpp_text.h"

namespace kforge::codegen {

tmpl::Value cuda_attention_step(const passes::LoweredProgram& program, const passes::FusedGroup& g, size_t launch,
                                int64_t site, const std::string& description,
                                const std::function<std::string(uint32_t, const std::string&, bool)>& buffer,
                                const SizeExpr& size) {
  const passes::AttentionGroup& a = g.attention;
  const std::string type = *cuda_element_type(a.dtype);
  tmpl::Value s = tmpl::Value::map();
  s.set("kind", "attention");
  s.set("description", description);
  s.set("launch", static_cast<int64_t>(launch));
  s.set("type", type);
  s.set("float32", a.dtype == ir::DataType::kFloat32);
  s.set("site", site);
  s.set("head_dim", a.head_dim);
  const bool float_mask = a.mask != passes::kNone && program.value(a.mask).dtype == ir::DataType::kFloat32;
  s.set("mask_type", float_mask ? std::string("float") : type);
  s.set("q", buffer(a.q.value, type, true));
  s.set("k", buffer(a.k.value, type, true));
  s.set("v", buffer(a.v.value, type, true));
  s.set("out", buffer(a.out.value, type, false));
  s.set("mask", a.mask == passes::kNone ? std::string("nullptr") : buffer(a.mask, float_mask ? "float" : type, true));
  tmpl::List sizes;
  for (const passes::SymExpr* e : {&a.batch, &a.heads, &a.seq_q, &a.seq_k}) sizes.push_back(size(*e));
  s.set("sizes", tmpl::Value(std::move(sizes)));
  // q, k, v, out, then the mask: batch, head, position (and key for the mask) strides.
  tmpl::List strides;
  for (const passes::AttentionOperand* o : {&a.q, &a.k, &a.v, &a.out}) {
    for (const passes::SymExpr* e : {&o->batch_stride, &o->head_stride, &o->seq_stride}) strides.push_back(size(*e));
  }
  for (const passes::SymExpr* e : {&a.mask_batch_stride, &a.mask_head_stride, &a.mask_row_stride, &a.mask_col_stride}) {
    strides.push_back(size(*e));
  }
  s.set("strides", tmpl::Value(std::move(strides)));
  s.set("scale", cuda_device_constant(a.scale, "float"));
  s.set("causal", a.causal);
  s.set("diagonal", a.causal_diagonal);
  return s;
}

}  // namespace kforge::codegen
