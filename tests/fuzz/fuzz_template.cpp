// Fuzz target: a Jinja-style template, parsed, checked and rendered with kforge's filters and a small render
// context. The template can include and import two in-memory templates and itself (`self.j2`), so include
// recursion is reachable.
#include <string>

#include "driver/data_loader.h"
#include "fuzz_input.h"
#include "template/codegen_filters.h"
#include "template/environment.h"

using namespace kforge;

namespace {

constexpr const char* kContext = R"(
name: fuzz
count: 3
ratio: 0.5
flag: true
nothing: null
items: [1, two, 3.0, [4, 5], {six: 6}]
ops:
  - {name: relu, args: [x], attrs: {}}
  - {name: scale, args: [x], attrs: {scale: 2.0, bias: 0}}
)";

constexpr const char* kMacros = R"({% macro twice(x) %}{{ x }}{{ x }}{% endmacro %}
{% macro list(xs, sep=", ") %}{{ xs | join(sep) }}{% endmacro %}
)";

constexpr const char* kInclude = "{% for op in ops %}{{ op.name }}{% if not loop.last %},{% endif %}{% endfor %}\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput input(data, size, "fuzz.j2");
  const uint32_t context_file = input.sources().add_buffer("context.yaml", kContext);
  std::optional<tmpl::Value> context = driver::parse_yaml_data(context_file, input.sources(), input.diags());
  if (!context) __builtin_trap();
  tmpl::Environment env(input.sources(), input.diags());
  tmpl::register_codegen_filters(env);
  env.add_memory_template("macros.j2", kMacros);
  env.add_memory_template("inc.j2", kInclude);
  env.add_memory_template("self.j2", std::string(input.text()));
  const tmpl::Template* parsed = env.load_string("fuzz.j2", std::string(input.text()));
  std::string out;
  if (parsed != nullptr) static_cast<void>(env.render(*parsed, *context, out));
  input.require_located_errors();
  return 0;
}
