#include "codegen/cuda_index_text.h"

#include <fmt/format.h>

#include "codegen/cpp_text.h"

namespace kforge::codegen::index_text {

std::optional<std::string> move_type(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::kUInt16:
    case ir::DataType::kFloat16:
    case ir::DataType::kBFloat16: return "uint16_t";
    case ir::DataType::kUInt32: return "uint32_t";
    case ir::DataType::kUInt64: return "uint64_t";
    default: return element_type(dtype);
  }
}

tmpl::Value statements_of(const std::string& shape) {
  tmpl::Value s = tmpl::Value::map();
  s.set("shape", shape);
  return s;
}

tmpl::Value local(const std::string& type, const std::vector<std::pair<std::string, std::string>>& values) {
  tmpl::Value v = tmpl::Value::map();
  v.set("type", type);
  tmpl::List defs;
  for (const auto& [name, value] : values) {
    tmpl::Value d = tmpl::Value::map();
    d.set("name", name);
    d.set("value", value);
    defs.push_back(std::move(d));
  }
  v.set("defs", tmpl::Value(std::move(defs)));
  return v;
}

tmpl::Value store_statements(tmpl::Value coords, const std::string& value, tmpl::List locals) {
  tmpl::Value s = statements_of("store");
  s.set("coords", std::move(coords));
  s.set("locals", tmpl::Value(std::move(locals)));
  s.set("value", value);
  return s;
}

// ---- KernelText ----

std::string KernelText::size(const SymExpr& d) {
  if (std::optional<int64_t> c = d.constant()) return std::to_string(*c);
  return sizes_.text(d);
}

void KernelText::coordinates(const SymShape& dims, const std::string& index, const std::string& prefix) {
  coords_ = coordinates_context(dims, index, prefix);
}

void KernelText::aligned(const std::vector<std::string>& inputs) {
  tmpl::List names(inputs.begin(), inputs.end());
  aligned_ = tmpl::Value(std::move(names));
}

tmpl::Value KernelText::coordinates_context(const SymShape& dims, const std::string& index, const std::string& prefix) {
  tmpl::Value c = tmpl::Value::map();
  c.set("rank", static_cast<int64_t>(dims.size()));
  c.set("index", index);
  c.set("prefix", prefix);
  // The remainder is `r` for the output's coordinates, `<prefix>r` for any other walk (a reduction's inner loop).
  c.set("remainder", prefix == "c" ? "r" : prefix + "r");
  tmpl::List sizes;
  for (size_t d = dims.size(); d-- > 1;) {
    tmpl::Value s = tmpl::Value::map();
    s.set("dim", static_cast<int64_t>(d));
    s.set("size", size(dims[d]));
    sizes.push_back(std::move(s));
  }
  c.set("sizes", tmpl::Value(std::move(sizes)));
  return c;
}

std::string KernelText::offset(const std::vector<std::string>& coords, const SymShape& dims) {
  std::string out;
  SymExpr stride = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    const std::string& c = coords[d];
    if (c != "0") {
      std::string term = c;
      if (stride.constant() != std::optional<int64_t>(1)) {
        term = (c.find(' ') == std::string::npos ? c : "(" + c + ")") + " * " + size(stride);
      }
      out = out.empty() ? term : term + " + " + out;
    }
    stride = stride * dims[d];
  }
  return out.empty() ? "0" : out;
}

std::string KernelText::input(uint32_t v, const std::string& type) {
  const std::string name = "in" + std::to_string(inputs_++);
  params_.push_back(fmt::format("const {}* __restrict__ {}", type, name));
  args_.push_back(buffer_(v, type, true));
  return name;
}

std::string KernelText::output(uint32_t v, const std::string& type, const std::string& name) {
  params_.push_back(fmt::format("{}* __restrict__ {}", type, name));
  args_.push_back(buffer_(v, type, false));
  return name;
}

std::string KernelText::scratch(const std::string& pointer) {
  params_.push_back("int32_t* __restrict__ scratch");
  args_.push_back(fmt::format("static_cast<int32_t*>({})", pointer));
  return "scratch";
}

CudaIndexKernel KernelText::finish(std::string name, std::string description, const SymExpr& numel, bool interp) {
  CudaIndexKernel k;
  k.numel = size(numel);
  k.name = std::move(name);
  k.description = std::move(description);
  k.params = params_;
  k.args = args_;
  const std::vector<std::string> size_params = sizes_.params(), size_args = sizes_.args();
  k.params.insert(k.params.end(), size_params.begin(), size_params.end());
  k.args.insert(k.args.end(), size_args.begin(), size_args.end());
  k.aligned = aligned_;
  k.coords = coords_;
  k.statements = statements_;
  k.interp = interp;
  return k;
}

// ---- IndexBuilder ----

uint32_t IndexBuilder::out_value() const {
  return call_.outputs.empty() || call_.outputs[0].values.size() != 1 ? kNone : call_.outputs[0].values[0];
}

int64_t IndexBuilder::unit_elements(const SymShape& dims, ir::DataType dtype) {
  const auto bytes = static_cast<int64_t>(ir::dtype_size(dtype));
  const std::optional<int64_t> last = dims.empty() ? std::nullopt : dims.back().constant();
  return bytes > 0 && bytes < 16 && 16 % bytes == 0 && last && *last * bytes % 16 == 0 ? 16 / bytes : 1;
}

void IndexBuilder::add(KernelText& k, const SymExpr& numel, bool interp) {
  kernels_.push_back(k.finish(prefix_ + std::to_string(next_++), description_, numel, interp));
}

}  // namespace kforge::codegen::index_text
