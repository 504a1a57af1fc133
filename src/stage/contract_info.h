// What each contract promises, as data a stage can name: the kernel's parameters, and how the host
// driver launches and checks it. The GPU side of each contract lives in contract/*.cc; this header
// is plain C++ so stage loading, compiling and reporting can use it without a GPU.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace cudojo {

// One parameter of a contract's kernel, as every language sees it: a device array of `element`
// (f32 or i32) or one scalar. The Python and Rust front ends and the launch build their
// signatures and argument lists from these.
struct KernelParameter {
  std::string_view name;
  bool is_array = false;
  std::string_view element;  // "f32" or "i32"
  bool is_const = false;     // an array the kernel only reads
};

struct ContractInfo {
  std::string_view name;
  // The parameter list the learner's kernel must have, as the lesson writes it.
  std::string_view parameters;
  // The same list as a function-pointer type, checked at compile time against the submission.
  std::string_view pointer_type;
  // What the driver does around the kernel, for `cudojo show` and the Driver tab.
  std::string_view driver;
  std::span<const KernelParameter> kernel_parameters;
};

std::span<const ContractInfo> all_contracts();
// nullptr when no contract has that name.
const ContractInfo* find_contract_info(std::string_view name);

}  // namespace cudojo
