// PIR JSON reader, program structure: base_code, regions, blocks, block arguments, ops, the parameter op.
// Types and attributes are in pir_json_values.cpp.
#include "program/pir_json_reader.h"

#include <fmt/format.h>

#include <filesystem>
#include <limits>

#include "program/pir_json_internal.h"

namespace kforge::ir {

namespace pir_json {

namespace {

// Paddle's DialectIdMap (schema.cc): op names are written as "<id>.<op>".
std::optional<std::string> dialect_of_id(std::string_view id) {
  if (id == "0") return "builtin";
  if (id == "1") return "pd_op";
  if (id == "2") return "cf";
  if (id == "3") return "custom_op";
  if (id == "4") return "pd_dist";
  if (id == "-1") return "test";
  if (id == "-2") return "test1";
  return std::nullopt;
}

bool is_number_text(std::string_view s) {
  if (s.empty()) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------- helpers

const Json* Reader::member(const Json& obj, std::string_view key, std::string_view role, std::string_view what,
                           bool required) {
  auto it = obj.find(key);
  if (it != obj.end()) return &*it;
  if (required) {
    error(obj, role.empty() ? fmt::format("missing key '{}' in {}", key, what)
                            : fmt::format("missing key '{}' ({}) in {}", key, role, what));
  }
  return nullptr;
}

void Reader::warn_unknown_keys(const Json& obj, std::initializer_list<std::string_view> known,
                               std::string_view what) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool found = false;
    for (std::string_view k : known) found = found || k == it.key();
    if (!found) diags_.warning(key_loc(it.value()), fmt::format("unknown key '{}' in {}; ignored", it.key(), what));
  }
}

bool Reader::expect_object(const Json& j, std::string_view what) {
  if (j.is_object()) return true;
  error(j, fmt::format("expected an object for {}, got {}", what, json_kind_name(j)));
  return false;
}

bool Reader::expect_array(const Json& j, std::string_view what) {
  if (j.is_array()) return true;
  error(j, fmt::format("expected an array for {}, got {}", what, json_kind_name(j)));
  return false;
}

bool Reader::expect_string(const Json& j, std::string_view what) {
  if (j.is_string()) return true;
  error(j, fmt::format("expected a string for {}, got {}", what, json_kind_name(j)));
  return false;
}

std::optional<int64_t> Reader::get_int(const Json& j, std::string_view what) {
  if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    error(j, fmt::format("integer {} for {} is too large", j.dump(), what));
    return std::nullopt;
  }
  if (j.is_number_integer()) return j.get<int64_t>();  // true for signed and unsigned integers
  error(j, fmt::format("expected an integer for {}, got {}", what, json_kind_name(j)));
  return std::nullopt;
}

std::optional<double> Reader::get_number(const Json& j, std::string_view what) {
  if (j.is_number()) return j.get<double>();
  error(j, fmt::format("expected a number for {}, got {}", what, json_kind_name(j)));
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------- program

std::optional<Program> Reader::read() {
  const size_t errors_before = diags_.error_count();
  if (!doc_.parse(sources_, file_, diags_)) return std::nullopt;
  const Json& root = doc_.root();
  if (!root.is_object()) {
    error(root, fmt::format("expected a PIR program object at the top level, got {}", json_kind_name(root)));
    return std::nullopt;
  }
  program_.format = SourceFormat::kPirJson;
  program_.file = file_;
  program_.name = std::filesystem::path(sources_.path(file_)).stem().string();

  warn_unknown_keys(root, {"base_code", "program"}, "PIR program file");
  const Json* base = member(root, "base_code", "", "PIR program file", true);
  const Json* prog = member(root, "program", "", "PIR program file", true);
  if (!base || !prog || !read_base_code(*base) || !expect_object(*prog, "'program'")) return std::nullopt;

  warn_unknown_keys(*prog, {"regions"}, "'program'");
  const Json* regions = member(*prog, "regions", "", "'program'", true);
  if (!regions || !expect_array(*regions, "'regions'")) return std::nullopt;
  if (regions->size() != 1) {
    error(*regions, fmt::format("a PIR program has exactly one top-level region, got {}", regions->size()));
    return std::nullopt;
  }
  const Json& region = (*regions)[0];
  if (!expect_object(region, "a region")) return std::nullopt;
  warn_unknown_keys(region, {"#", "blocks"}, "region");
  const Json* blocks = member(region, "blocks", "", "region", true);
  if (!blocks || !expect_array(*blocks, "'blocks'")) return std::nullopt;
  if (blocks->size() != 1) {
    error(*blocks, fmt::format("the top-level region of a PIR program has exactly one block, got {}",
                               blocks->size()));
    return std::nullopt;
  }
  read_block((*blocks)[0], program_.top_block(), 0);

  if (diags_.error_count() > errors_before) return std::nullopt;
  assign_value_names(program_);
  return std::move(program_);
}

bool Reader::read_base_code(const Json& base) {
  if (!expect_object(base, "'base_code'")) return false;
  warn_unknown_keys(base, {"magic", "version", "trainable"}, "'base_code'");
  const Json* magic = member(base, "magic", "", "'base_code'", true);
  const Json* version = member(base, "version", "", "'base_code'", true);
  if (!magic || !version) return false;
  if (!expect_string(*magic, "'magic'")) return false;
  if (magic->get<std::string>() != "pir") {
    error(*magic, fmt::format("not a PIR program: 'magic' is {}, expected \"pir\"", magic->dump()));
    return false;
  }
  const std::optional<int64_t> v = get_int(*version, "'version'");
  if (!v) return false;
  if (*v < 0) {
    error(*version, fmt::format("invalid PIR version {}", *v));
    return false;
  }
  if (*v > kNewestPirJsonVersion) {
    diags_.warning(loc(*version), fmt::format("PIR version {} is newer than the newest kforge knows ({}); reading "
                                              "it as version {}",
                                              *v, kNewestPirJsonVersion, kNewestPirJsonVersion));
  }
  program_.pir_version = *v;
  if (const Json* trainable = member(base, "trainable", "", "", false)) {
    if (!trainable->is_boolean()) {
      error(*trainable, fmt::format("expected a boolean for 'trainable', got {}", json_kind_name(*trainable)));
      return false;
    }
    program_.trainable = trainable->get<bool>();
  }
  return true;
}

void Reader::define_value(int64_t id, ValueId value, const Json& where) {
  Value& v = program_.value(value);
  v.source_id = std::to_string(id);
  v.loc = loc(where);
  auto [it, inserted] = defined_.emplace(id, &where);
  if (!inserted) {
    Diagnostic d{Severity::kError, loc(where), fmt::format("value id {} is defined twice", id), {}};
    d.note("first defined here", loc(*it->second));
    diags_.report(std::move(d));
    return;
  }
  visible_.emplace(id, std::make_pair(value, &where));
  scopes_.back().push_back(id);
}

void Reader::read_block(const Json& j, BlockId block, int depth) {
  if (!expect_object(j, "a block")) return;
  program_.block(block).loc = loc(j);
  warn_unknown_keys(j, {"#", "args", "kwargs", "ops"}, "block");
  scopes_.emplace_back();
  read_block_args(j, block);
  const Json* ops = member(j, "ops", "", "block", true);
  if (ops && expect_array(*ops, "'ops'")) {
    for (const Json& op : *ops) read_op(op, block, depth);
  }
  // What a block defines is not visible after it.
  for (int64_t id : scopes_.back()) visible_.erase(id);
  scopes_.pop_back();
}

void Reader::read_block_args(const Json& block_json, BlockId block) {
  const Json* args = member(block_json, "args", "block arguments", "block", true);
  std::vector<int64_t> arg_ids;
  auto read_arg = [&](const Json& a, bool keyword) {
    const std::string_view what = keyword ? "keyword block argument" : "block argument";
    if (!expect_object(a, std::string("a ") + std::string(what))) return;
    if (keyword) {
      warn_unknown_keys(a, {"#", "%", "TT", "key"}, what);
    } else {
      warn_unknown_keys(a, {"#", "%", "TT"}, what);
    }
    const Json* id_json = a.contains("#") ? &a["#"] : member(a, "%", "value id", what, false);
    if (!id_json) {
      error(a, fmt::format("missing key '#' (value id) in {}", what));
      return;
    }
    const std::optional<int64_t> id = get_int(*id_json, "a block argument id");
    const Json* tt = member(a, "TT", "type", what, true);
    if (!id || !tt) return;
    if (keyword && !a.contains("key") &&
        std::find(arg_ids.begin(), arg_ids.end(), *id) != arg_ids.end()) {
      // Paddle's writer (Feb 2025) stores `args` under `kwargs` by mistake; the keys are lost.
      diags_.warning(loc(a), "'kwargs' repeats 'args' (a known Paddle writer bug); keyword arguments are lost");
      return;
    }
    std::optional<Type> type = read_type(*tt);
    if (!type) return;
    ValueId v;
    if (keyword) {
      const Json* key = member(a, "key", "keyword", what, true);
      if (!key || !expect_string(*key, "'key'")) return;
      v = program_.add_block_kwarg(block, key->get<std::string>(), std::move(*type));
    } else {
      v = program_.add_block_argument(block, std::move(*type));
      arg_ids.push_back(*id);
    }
    if (*id == 0) {
      error(*id_json, "block argument id 0 is reserved for null values");
      return;
    }
    define_value(*id, v, a);
  };
  if (args && expect_array(*args, "'args' (block arguments)")) {
    for (const Json& a : *args) read_arg(a, false);
  }
  if (const Json* kwargs = member(block_json, "kwargs", "", "", false)) {
    if (expect_array(*kwargs, "'kwargs' (keyword block arguments)")) {
      bool warned = false;
      for (const Json& a : *kwargs) {
        const size_t warnings = diags_.warning_count();
        if (warned && !a.contains("key")) continue;  // one warning for the whole repeated list
        read_arg(a, true);
        warned = warned || diags_.warning_count() > warnings;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------- ops

std::optional<ValueId> Reader::operand(const Json& j, size_t index, const std::string& op_name) {
  if (!j.is_object()) {
    error(j, fmt::format("expected an operand object {{\"%\": id}}, got {}", json_kind_name(j)));
    return std::nullopt;
  }
  warn_unknown_keys(j, {"%"}, "operand");
  const Json* id_json = member(j, "%", "value id", "operand", true);
  if (!id_json) return std::nullopt;
  const std::optional<int64_t> id = get_int(*id_json, "an operand id");
  if (!id) return std::nullopt;
  if (*id == 0) return ValueId{};  // a null operand: an absent optional input
  auto it = visible_.find(*id);
  if (it == visible_.end()) {
    auto elsewhere = defined_.find(*id);
    if (elsewhere != defined_.end()) {
      Diagnostic d{Severity::kError, loc(j),
                   fmt::format("operand {} of '{}' refers to value {}, which is defined in another region", index,
                               op_name, *id),
                   {}};
      d.note("defined here", loc(*elsewhere->second));
      diags_.report(std::move(d));
    } else {
      error(j, fmt::format("operand {} of '{}' refers to value {}, which is not defined before it", index, op_name,
                           *id));
    }
    return std::nullopt;
  }
  return it->second.first;
}

void Reader::read_attribute_list(const Json& list, std::string_view key, std::vector<NamedAttribute>& out) {
  if (!expect_array(list, fmt::format("'{}' (attributes)", key))) return;
  for (const Json& entry : list) {
    if (!expect_object(entry, "an attribute {\"N\": name, \"AT\": value}")) continue;
    warn_unknown_keys(entry, {"N", "AT"}, "attribute");
    const Json* name = member(entry, "N", "attribute name", "attribute", true);
    if (!name || !expect_string(*name, "'N' (attribute name)")) continue;
    const Json* value = member(entry, "AT", "", "", false);
    if (!value) continue;  // Paddle's version patches delete an attribute by dropping its AT
    std::optional<Attribute> attr = read_attribute(*value);
    if (!attr) continue;
    const std::string attr_name = name->get<std::string>();
    auto previous = std::find_if(out.begin(), out.end(), [&](const NamedAttribute& a) { return a.name == attr_name; });
    if (previous != out.end()) {
      // Paddle inserts into a map, so the first one wins.
      Diagnostic d{Severity::kWarning, loc(*name),
                   fmt::format("attribute '{}' is given twice; the first one is used", attr_name), {}};
      d.note("first given here", previous->name_loc);
      diags_.report(std::move(d));
      continue;
    }
    out.push_back({attr_name, std::move(*attr), loc(*name)});
  }
}

void Reader::read_op(const Json& j, BlockId block, int depth) {
  if (!expect_object(j, "an op")) return;
  const Json* name_json = member(j, "#", "op name", "op", true);
  if (!name_json || !expect_string(*name_json, "'#' (op name)")) return;
  const std::string raw_name = name_json->get<std::string>();
  if (raw_name == "p") return read_parameter_op(j, block);

  OpSpec spec;
  spec.loc = loc(j);
  spec.name_loc = loc(*name_json);
  const size_t dot = raw_name.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == raw_name.size()) {
    error(*name_json, fmt::format("op name '{}' is not '<dialect>.<op>' (e.g. '1.conv2d')", raw_name));
    return;
  }
  const std::string prefix = raw_name.substr(0, dot);
  if (std::optional<std::string> dialect = dialect_of_id(prefix)) {
    spec.dialect = *dialect;
  } else if (is_number_text(prefix)) {
    error(*name_json, fmt::format("unknown dialect id '{}' in op name '{}' (known: 0 builtin, 1 pd_op, 2 cf, "
                                  "3 custom_op, 4 pd_dist)",
                                  prefix, raw_name));
    return;
  } else {
    spec.dialect = prefix;  // dialects without an id are written by their full name
  }
  spec.name = raw_name.substr(dot + 1);
  const std::string full_name = spec.dialect + "." + spec.name;
  const std::string what = fmt::format("op '{}'", raw_name);
  warn_unknown_keys(j, {"#", "I", "O", "A", "OA", "DA", "QA", "regions"}, what);

  const Json* operands = member(j, "I", "operands", what, true);
  const Json* results = member(j, "O", "results", what, true);
  const Json* attrs = member(j, "A", "attributes", what, true);
  if (!operands || !results || !attrs) return;
  if (!expect_array(*operands, "'I' (operands)") || !expect_array(*results, "'O' (results)")) return;

  std::vector<SourceLoc> operand_locs;
  for (size_t i = 0; i < operands->size(); ++i) {
    std::optional<ValueId> v = operand((*operands)[i], i, full_name);
    spec.operands.push_back(v.value_or(ValueId{}));
    operand_locs.push_back(loc((*operands)[i]));
  }

  // Results: read their types first; ids are bound after the regions, as Paddle does.
  std::vector<std::pair<std::optional<int64_t>, const Json*>> result_ids;
  for (const Json& r : *results) {
    if (!expect_object(r, "an op result {\"%\": id, \"TT\": type}")) {
      spec.result_types.push_back(Type::none());
      result_ids.push_back({std::nullopt, &r});
      continue;
    }
    warn_unknown_keys(r, {"%", "TT"}, "op result");
    std::optional<int64_t> id;
    if (const Json* id_json = member(r, "%", "", "", false)) id = get_int(*id_json, "a result id");
    const Json* tt = member(r, "TT", "type", "op result", true);
    std::optional<Type> type = tt ? read_type(*tt) : std::nullopt;
    spec.result_types.push_back(type.value_or(Type::none()));
    result_ids.push_back({id, &r});
  }

  read_attribute_list(*attrs, "A", spec.attributes);
  for (const char* key : {"DA", "QA", "OA"}) {
    if (const Json* extra = member(j, key, "", "", false)) read_attribute_list(*extra, key, spec.attributes);
  }

  const OpId op = program_.append_op(block, std::move(spec));
  program_.op(op).operand_locs = std::move(operand_locs);

  if (const Json* regions = member(j, "regions", "", "", false)) {
    if (depth + 1 > kMaxNesting) {
      error(*regions, fmt::format("regions nested more than {} deep", kMaxNesting));
    } else if (expect_array(*regions, "'regions'")) {
      for (const Json& region : *regions) {
        if (!expect_object(region, "a region")) continue;
        warn_unknown_keys(region, {"#", "blocks"}, "region");
        program_.op(op).regions.emplace_back();
        const uint32_t index = static_cast<uint32_t>(program_.op(op).regions.size() - 1);
        const Json* blocks = member(region, "blocks", "", "region", true);
        if (!blocks || !expect_array(*blocks, "'blocks'")) continue;
        for (const Json& b : *blocks) read_block(b, program_.add_block(op, index), depth + 1);
      }
    }
  }

  for (size_t i = 0; i < result_ids.size(); ++i) {
    const ValueId v = program_.op(op).results[i];
    program_.value(v).loc = loc(*result_ids[i].second);
    const std::optional<int64_t> id = result_ids[i].first;
    if (!id || *id == 0) continue;  // unnamed (no "%") or a null result: nothing can refer to it
    if (*id < 0) {
      error((*result_ids[i].second)["%"], fmt::format("op result ids are positive (negative ids are block "
                                                      "arguments), got {}",
                                                      *id));
      continue;
    }
    define_value(*id, v, *result_ids[i].second);
  }
}

void Reader::read_bool_flags(const Json& list, std::string_view key, std::initializer_list<const char*> names,
                             std::vector<NamedAttribute>& out) {
  // Reads the first names.size() entries of `list`; the caller has checked there are that many.
  size_t i = 0;
  for (const char* name : names) {
    const Json& flag = list[i++];
    bool value = false;
    if (flag.is_boolean()) {
      value = flag.get<bool>();
    } else if (flag.is_number_integer() && (flag.get<int64_t>() == 0 || flag.get<int64_t>() == 1)) {
      value = flag.get<int64_t>() == 1;
    } else {
      error(flag, fmt::format("expected 0 or 1 for '{}' in '{}' of a parameter op, got {}", name, key, flag.dump()));
      continue;
    }
    // Paddle stores these flags as one-element bool arrays.
    out.push_back({name, Attribute::array({Attribute::boolean(value).at(loc(flag))}).at(loc(flag)), loc(flag)});
  }
}

void Reader::read_parameter_op(const Json& j, BlockId block) {
  // {"#":"p","A":[is_distributed,is_parameter,need_clip,"name"],"DA":[...],"O":{"%":id,"TT":type},
  //  "OA":[persistable,stop_gradient,trainable],"QA":[...]}
  const std::string what = "parameter op 'p'";
  warn_unknown_keys(j, {"#", "A", "O", "OA", "DA", "QA"}, what);
  OpSpec spec;
  spec.dialect = "builtin";
  spec.name = "parameter";
  spec.loc = loc(j);
  spec.name_loc = loc(j["#"]);
  const Json* attrs = member(j, "A", "attributes", what, true);
  const Json* result = member(j, "O", "result", what, true);
  if (!attrs || !result) return;
  if (!expect_array(*attrs, "'A' of a parameter op")) return;
  if (attrs->size() != 4) {
    error(*attrs, fmt::format("the 'A' of a parameter op has {} entries, expected 4 (is_distributed, "
                              "is_parameter, need_clip, parameter_name)",
                              attrs->size()));
    return;
  }
  read_bool_flags(*attrs, "A", {"is_distributed", "is_parameter", "need_clip"}, spec.attributes);
  const Json& name = (*attrs)[3];
  if (!expect_string(name, "'parameter_name' of a parameter op")) return;
  spec.attributes.push_back({"parameter_name", Attribute::string(name.get<std::string>()).at(loc(name)), loc(name)});

  if (!expect_object(*result, "'O' of a parameter op (its single result)")) return;
  warn_unknown_keys(*result, {"%", "TT"}, "op result");
  const Json* id_json = member(*result, "%", "value id", "op result", true);
  const Json* tt = member(*result, "TT", "type", "op result", true);
  if (!id_json || !tt) return;
  const std::optional<int64_t> id = get_int(*id_json, "a result id");
  std::optional<Type> type = read_type(*tt);
  if (!id || !type) return;
  spec.result_types.push_back(std::move(*type));

  for (const char* key : {"DA", "QA"}) {
    if (const Json* extra = member(j, key, "", "", false)) read_attribute_list(*extra, key, spec.attributes);
  }
  if (const Json* oa = member(j, "OA", "", "", false)) {
    if (!expect_array(*oa, "'OA' of a parameter op")) return;
    if (oa->size() != 3) {
      error(*oa, fmt::format("the 'OA' of a parameter op has {} entries, expected 3 (persistable, stop_gradient, "
                             "trainable)",
                             oa->size()));
      return;
    }
    read_bool_flags(*oa, "OA", {"persistable", "stop_gradient", "trainable"}, spec.attributes);
  }
  const OpId op = program_.append_op(block, std::move(spec));
  if (*id <= 0) {
    error(*id_json, fmt::format("op result ids are positive, got {}", *id));
    return;
  }
  define_value(*id, program_.op(op).results[0], *result);
}

}  // namespace pir_json

std::optional<Program> read_pir_json(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags) {
  return pir_json::Reader(sources, file, diags).read();
}

}  // namespace kforge::ir
