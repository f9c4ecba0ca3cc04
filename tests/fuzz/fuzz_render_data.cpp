// Fuzz target: the data files of `kforge render`, read as YAML and as JSON, merged with themselves (as several
// --data files are) and rendered through a template that walks every value.
#include <string>

#include "driver/data_loader.h"
#include "fuzz_input.h"
#include "template/codegen_filters.h"
#include "template/environment.h"

using namespace kforge;

namespace {

// Walks the data recursively: maps by items, lists by index, scalars printed.
constexpr const char* kWalk = R"({% macro walk(v) %}{% if v is mapping %}{% for k, x in v | items %}{{ k }}:{{ walk(x) }};{% endfor %}{% elif v is string %}{{ v }}{% elif v is iterable %}[{% for x in v %}{{ walk(x) }},{% endfor %}]{% elif v is none %}null{% else %}{{ v }}{% endif %}{% endmacro %}{{ walk(data) }}
)";

void render(fuzz::FuzzInput& input, const tmpl::Value& data) {
  tmpl::Environment env(input.sources(), input.diags());
  tmpl::register_codegen_filters(env);
  const tmpl::Template* walk = env.load_string("walk.j2", kWalk);
  if (walk == nullptr) __builtin_trap();
  tmpl::Value context = tmpl::Value::map();
  context.set("data", data);
  std::string out;
  static_cast<void>(env.render(*walk, context, out));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const bool yaml : {true, false}) {
    fuzz::FuzzInput input(data, size, yaml ? "data.yaml" : "data.json");
    std::optional<tmpl::Value> parsed = yaml ? driver::parse_yaml_data(input.file(), input.sources(), input.diags())
                                             : driver::parse_json_data(input.file(), input.sources(), input.diags());
    if (parsed) {
      const tmpl::Value merged = driver::merge_data(*parsed, *parsed);
      render(input, merged);
    }
    input.require_located_errors();
  }
  return 0;
}
