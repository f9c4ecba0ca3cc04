// kforge's code-generation filters, registered through the engine's extension API (not built in):
//   c_ident       any text -> a valid C identifier ("conv2d-grad.v2" -> "conv2d_grad_v2", leading digit
//                 gets a '_' prefix, C++ keywords get a '_' suffix)
//   cpp_str       text -> a C++ string literal with quotes and escapes ("a\"b\n" -> "\"a\\\"b\\n\"")
//   snake_case    "Conv2DGrad" / "conv2d-grad" / "HTTPServer" -> "conv2d_grad" / "http_server"
//   camel_case    "conv2d_grad" -> "Conv2dGrad" (UpperCamelCase)
//   upper_snake   "Conv2dGrad" -> "CONV2D_GRAD"
//   fail(msg)     function: reports `msg` as an error at the call site and aborts the output
// Later issues add more here (e.g. dtype -> C++ type mapping).
#pragma once

namespace kforge::tmpl {

class Environment;

void register_codegen_filters(Environment& env);

}  // namespace kforge::tmpl
