// The PIR signatures kforge derives from Paddle's ops.yaml + op_compat.yaml must equal the ones
// Paddle's own generator produced (refdata/paddle/pir_op_signatures.json), for every op of ops.yaml
// and its twins: names, order, types, optional / mutable / intermediate flags, infer_meta, kernel and
// the C++ class name. The oracle also covers Paddle's other op files; its entries from ops.yaml are the
// ones Paddle generated into pd_op1..4.cc (its "file" field), which is how they are selected here.
#include <catch2/catch.hpp>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "opdef/op_compat.h"
#include "opdef/op_loader.h"
#include "opdef/pir_signature.h"
#include "refdata.h"

using namespace kforge;
using namespace kforge::opdef;

namespace {

nlohmann::ordered_json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::ordered_json::parse(ss.str());
}

// Describes the first difference between two JSON values, for a readable failure.
std::string first_difference(const nlohmann::ordered_json& ours, const nlohmann::ordered_json& oracle,
                             const std::string& path) {
  if (ours.type() != oracle.type()) return path + ": " + ours.dump() + " vs oracle " + oracle.dump();
  if (ours.is_object()) {
    for (auto it = oracle.begin(); it != oracle.end(); ++it) {
      if (!ours.contains(it.key())) return path + "." + it.key() + ": missing";
      std::string d = first_difference(ours[it.key()], it.value(), path + "." + it.key());
      if (!d.empty()) return d;
    }
    return "";
  }
  if (ours.is_array()) {
    if (ours.size() != oracle.size()) return path + ": " + ours.dump() + " vs oracle " + oracle.dump();
    for (size_t i = 0; i < ours.size(); ++i) {
      std::string d = first_difference(ours[i], oracle[i], path + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
    return "";
  }
  return ours == oracle ? "" : path + ": " + ours.dump() + " vs oracle " + oracle.dump();
}

}  // namespace

TEST_CASE("PIR signatures of every ops.yaml op and twin equal Paddle's") {
  if (!testing::have_paddle_refdata()) {
    WARN("SKIPPED: Paddle refdata not found at " << testing::paddle_refdata_dir()
                                                 << " (set KFORGE_PADDLE_REFDATA); the oracle test did not run");
    return;
  }
  const std::string dir = testing::paddle_refdata_dir();
  SourceManager sources;
  std::ostringstream messages;
  DiagnosticEngine diags(sources, messages);
  OpLoader loader(sources, diags);
  loader.add_file(dir + "/ops.yaml");
  const OpLibrary library = std::move(loader).finish();
  const OpCompat compat = load_op_compat(dir + "/op_compat.yaml", sources, diags);
  INFO(messages.str());
  REQUIRE(diags.error_count() == 0);
  REQUIRE(library.size() == 474);

  const std::vector<PirOpSignature> sigs = derive_pir_signatures(library, &compat, diags);
  REQUIRE(diags.error_count() == 0);
  const nlohmann::ordered_json ours = nlohmann::ordered_json::parse(signatures_to_json(sigs, sources));
  const nlohmann::ordered_json oracle = read_json(dir + "/pir_op_signatures.json");

  // The oracle's ops.yaml entries, in its order.
  const std::regex ops_yaml_file(R"(pd_op[0-9]+\.cc\.tmp)");
  std::vector<std::string> oracle_names;
  for (auto it = oracle.begin(); it != oracle.end(); ++it) {
    if (std::regex_match(it.value()["file"].get<std::string>(), ops_yaml_file)) oracle_names.push_back(it.key());
  }
  std::vector<std::string> our_names;
  for (auto it = ours.begin(); it != ours.end(); ++it) our_names.push_back(it.key());
  CHECK(our_names.size() == oracle_names.size());
  CHECK(our_names == oracle_names);

  size_t equal = 0;
  std::vector<std::string> failures;
  for (auto it = ours.begin(); it != ours.end(); ++it) {
    if (!oracle.contains(it.key())) {
      failures.push_back(it.key() + ": not in the oracle");
      continue;
    }
    nlohmann::ordered_json expected = oracle[it.key()];
    nlohmann::ordered_json got = it.value();
    expected.erase("file");  // Paddle's generated .cc shard; kforge gives the YAML location instead
    got.erase("file");
    const std::string diff = first_difference(got, expected, it.key());
    if (diff.empty()) {
      ++equal;
    } else {
      failures.push_back(diff);
    }
  }
  for (const std::string& f : failures) UNSCOPED_INFO(f);
  CHECK(failures.empty());
  CHECK(equal == oracle_names.size());
  std::cout << "pir signature oracle: " << equal << " of " << oracle_names.size() << " ops.yaml signatures equal\n";
}

namespace {

// The .cc file (the oracle's "file") Paddle generates the ops of each YAML file into.
const std::vector<std::pair<std::string, std::regex>>& generated_files() {
  static const std::vector<std::pair<std::string, std::regex>> files = {
      {"ops.yaml", std::regex(R"(pd_op[0-9]+\.cc\.tmp)")},
      {"backward.yaml", std::regex(R"(pd_op_bwd[0-9]+\.cc\.tmp)")},
      {"fused_ops.yaml", std::regex(R"(pd_op_fused\.cc\.tmp)")},
      {"fused_backward.yaml", std::regex(R"(pd_op_fused_bwd\.cc\.tmp)")},
      {"static_ops.yaml", std::regex(R"(pd_pir_op\.cc\.tmp)")},
      {"static_backward.yaml", std::regex(R"(pd_pir_op_bwd\.cc\.tmp)")},
      {"update_ops.yaml", std::regex(R"(pd_pir_op_update\.cc\.tmp)")},
      {"sparse_ops.yaml", std::regex(R"(pd_op_sparse\.cc\.tmp)")},
      {"sparse_backward.yaml", std::regex(R"(pd_op_sparse_bwd\.cc\.tmp)")},
  };
  return files;
}

// "…/yaml/backward.yaml:12" -> "backward.yaml"
std::string yaml_file_of(const std::string& location) {
  const std::string path = location.substr(0, location.rfind(':'));
  return path.substr(path.rfind('/') + 1);
}

}  // namespace

TEST_CASE("PIR signatures of Paddle's 9 op files equal Paddle's, all 1483") {
  if (!testing::have_paddle_op_files()) {
    WARN("SKIPPED: Paddle's 9 op files, op_compat.yaml or pir_op_signatures.json not found under "
         << testing::paddle_refdata_dir() << " (set KFORGE_PADDLE_REFDATA); the 9-file oracle test did not run");
    return;
  }
  const std::string dir = testing::paddle_refdata_dir();
  SourceManager sources;
  std::ostringstream messages;
  DiagnosticEngine diags(sources, messages);
  OpLoader loader(sources, diags);
  for (const testing::PaddleOpFile& f : testing::kPaddleOpFiles) {
    loader.add_file(dir + "/" + f.path, f.sparse ? OpFileKind::kSparse : OpFileKind::kDense);
  }
  const OpLibrary library = std::move(loader).finish();
  const OpCompat compat = load_op_compat(dir + "/op_compat.yaml", sources, diags);
  INFO(messages.str());
  REQUIRE(diags.error_count() == 0);
  const std::vector<PirOpSignature> sigs = derive_pir_signatures(library, &compat, diags);
  REQUIRE(diags.error_count() == 0);
  const nlohmann::ordered_json ours = nlohmann::ordered_json::parse(signatures_to_json(sigs, sources));
  const nlohmann::ordered_json oracle = read_json(dir + "/pir_op_signatures.json");
  REQUIRE(oracle.size() == 1483);
  CHECK(ours.size() == oracle.size());

  // Per YAML file, the same ops in the same order (the oracle lists its .cc files in name order, so
  // the order across files differs from the command line's).
  for (const auto& [yaml, generated] : generated_files()) {
    std::vector<std::string> our_names, oracle_names;
    for (auto it = ours.begin(); it != ours.end(); ++it) {
      if (yaml_file_of(it.value()["file"].get<std::string>()) == yaml) our_names.push_back(it.key());
    }
    for (auto it = oracle.begin(); it != oracle.end(); ++it) {
      if (std::regex_match(it.value()["file"].get<std::string>(), generated)) oracle_names.push_back(it.key());
    }
    INFO(yaml);
    CHECK(!oracle_names.empty());
    CHECK(our_names == oracle_names);
  }

  size_t exact = 0, unrecorded = 0;
  std::vector<std::string> failures;
  for (auto it = oracle.begin(); it != oracle.end(); ++it) {
    if (!ours.contains(it.key())) {
      failures.push_back(it.key() + ": not derived");
      continue;
    }
    nlohmann::ordered_json expected = it.value();
    nlohmann::ordered_json got = ours[it.key()];
    expected.erase("file");
    got.erase("file");
    // The oracle has null (no string at all) for infer_meta and kernel of exactly the 11 sparse ops whose
    // infer_meta is namespaced (sparse::CastInferMeta): its dump did not read those OpRunTimeInfo lines.
    // For them the other fields must still agree, and ours must be the namespaced function and a kernel.
    const bool not_recorded = expected["infer_meta"].is_null() && expected["kernel"].is_null();
    if (not_recorded) {
      const std::string meta = got["infer_meta"].get<std::string>();
      if (meta.find("::") == std::string::npos || got["kernel"].get<std::string>().empty()) {
        failures.push_back(it.key() + ": the oracle records no infer_meta, ours is '" + meta + "'");
        continue;
      }
      expected.erase("infer_meta");
      expected.erase("kernel");
      got.erase("infer_meta");
      got.erase("kernel");
    }
    const std::string diff = first_difference(got, expected, it.key());
    if (!diff.empty()) {
      failures.push_back(diff);
    } else {
      ++(not_recorded ? unrecorded : exact);
    }
  }
  for (const std::string& f : failures) UNSCOPED_INFO(f);
  CHECK(failures.empty());
  CHECK(exact + unrecorded == 1483);
  CHECK(unrecorded == 11);
  std::cout << "pir signature oracle, 9 files: " << exact + unrecorded << " of " << oracle.size()
            << " signatures equal (" << unrecorded << " of them without the infer_meta / kernel the oracle "
            << "leaves null)\n";
}
