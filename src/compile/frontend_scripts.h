// The front-end scripts and the Rust device prelude, embedded in the binary at build time from
// src/compile/frontends/ (CMake writes frontend_scripts.cc), so a cudojo binary compiles Python and
// Rust wherever it is copied, without the source tree.
#pragma once

#include <string_view>

namespace cudojo {

std::string_view numba_frontend_script();
std::string_view rust_frontend_script();
std::string_view rust_prelude_source();

}  // namespace cudojo
