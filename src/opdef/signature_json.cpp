// signatures_to_json: PIR signatures in the JSON structure of refdata/paddle/pir_op_signatures.json.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "opdef/pir_signature.h"

namespace kforge::opdef {

std::string signatures_to_json(const std::vector<PirOpSignature>& signatures, const SourceManager& sources) {
  nlohmann::ordered_json root = nlohmann::ordered_json::object();
  for (const PirOpSignature& sig : signatures) {
    nlohmann::ordered_json entry;
    entry["class"] = sig.class_name;
    std::string file;
    if (sig.op && sig.op->loc.valid()) {
      file = fmt::format("{}:{}", sources.path(sig.op->loc.file), sources.line_col(sig.op->loc).line);
    }
    entry["file"] = file;
    nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
    for (const PirOperand& o : sig.operands) {
      nlohmann::ordered_json j;
      j["name"] = o.name;
      j["type"] = o.type;
      j["optional"] = o.optional;
      j["no_need_buffer"] = o.no_need_buffer;
      j["mutable_attr"] = o.mutable_attr;
      inputs.push_back(std::move(j));
    }
    entry["inputs"] = std::move(inputs);
    nlohmann::ordered_json attrs = nlohmann::ordered_json::array();
    for (const PirAttribute& a : sig.attributes) {
      nlohmann::ordered_json j;
      j["name"] = a.name;
      j["type"] = a.type;
      j["data_type"] = a.data_type;
      attrs.push_back(std::move(j));
    }
    entry["attrs"] = std::move(attrs);
    nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
    for (const PirResult& r : sig.results) {
      nlohmann::ordered_json j;
      j["name"] = r.name;
      j["type"] = r.type;
      j["optional"] = r.optional;
      j["intermediate"] = r.intermediate;
      outputs.push_back(std::move(j));
    }
    entry["outputs"] = std::move(outputs);
    entry["infer_meta"] = sig.infer_meta;
    entry["kernel"] = sig.kernel;
    root[sig.name] = std::move(entry);
  }
  // Indent 0: one key or value per line and no indentation, as Paddle's file is written.
  return root.dump(0) + "\n";
}

}  // namespace kforge::opdef
