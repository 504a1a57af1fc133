// The per-contract templates of `cudojo stage new` (scaffold.cc assembles them): each reference
// kernel in its language, with @ID@ where the stage's id goes; empty for an unknown contract.
#pragma once

#include <string_view>

namespace cudojo {

std::string_view cuda_reference_template(std::string_view contract);    // scaffold_cuda.cc
std::string_view python_reference_template(std::string_view contract);  // scaffold_python.cc
std::string_view rust_reference_template(std::string_view contract);    // scaffold_rust.cc

}  // namespace cudojo
