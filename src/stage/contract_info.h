// What each contract promises, as data a stage can name: the kernel's parameters, the data sets its
// driver can make, and how the host driver launches and checks it. The GPU side of each contract
// lives in contract/*.cc; this header is plain C++ so stage loading, compiling and reporting can use
// it without a GPU.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace cudojo {

// One parameter of a contract's kernel, as every language sees it: a device array of `element`
// (f32, i32, u32 or u64) or one scalar. The Python and Rust front ends and the launch build their
// signatures and argument lists from these.
struct KernelParameter {
  std::string_view name;
  bool is_array = false;
  std::string_view element;  // "f32", "i32", "u32" or "u64"
  bool is_const = false;     // an array the kernel only reads
};

// The signature of one kernel the contract launches.
struct KernelSignature {
  // The parameter list as the lesson writes it in CUDA C++.
  std::string_view parameters;
  // The same list as a function-pointer type, checked at compile time against the submission.
  std::string_view pointer_type;
  std::span<const KernelParameter> kernel_parameters;
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
  // The data sets the driver can make for this contract; a stage lists some of them.
  std::span<const std::string_view> data_sets;
  // The data set poisoning and determinism are judged on (every answer on it is exact); a stage of
  // this contract must list it. Empty: every data set of the contract is exact.
  std::string_view poison_data;
  // Contracts of two kernels (a deterministic sum: partials, then a fold) name the second here; the
  // stage's `second_kernel` is its name. Empty parameters: one kernel.
  KernelSignature second;

  bool has_second_kernel() const { return !second.parameters.empty(); }
  KernelSignature first() const { return {parameters, pointer_type, kernel_parameters}; }
};

std::span<const ContractInfo> all_contracts();
// nullptr when no contract has that name.
const ContractInfo* find_contract_info(std::string_view name);
// Whether `contract` can make data set `name`.
bool contract_has_data(const ContractInfo& contract, std::string_view name);

}  // namespace cudojo
