#include "stage/contract_info.h"

#include <array>

namespace cudojo {

namespace {

constexpr std::array kCounterParameters = {KernelParameter{"c", true, "i32", false}};
constexpr std::array kOneAccumulatorParameters = {KernelParameter{"X", true, "f32", true},
                                                  KernelParameter{"out", true, "f32", false},
                                                  KernelParameter{"N", false, "i32", false}};
constexpr std::array kPartialPerBlockParameters = {KernelParameter{"X", true, "f32", true},
                                                   KernelParameter{"partial", true, "f32", false},
                                                   KernelParameter{"N", false, "i32", false}};

constexpr std::array kContracts = {
    ContractInfo{"counter", "int* c", "void (*)(int*)",
                 "Zeroes one int on the device, launches the kernel with the stage's fixed grid, copies the "
                 "int back and compares it with blocks x threads. Repeats several times: a race can lose "
                 "a different number of updates on every run.",
                 kCounterParameters},
    ContractInfo{"one_accumulator", "const float* X, float* out, int N",
                 "void (*)(const float*, float*, int)",
                 "Fills X (with a poisoned guard region after element N-1), zeroes *out, poisons shared "
                 "memory on every SM, launches ceil(N/threads) blocks, and compares *out with a double "
                 "reference: bitwise on exact data, by the tolerance rule on inexact data. Afterwards X "
                 "must be unchanged.",
                 kOneAccumulatorParameters},
    ContractInfo{"partial_per_block", "const float* X, float* partial, int N",
                 "void (*)(const float*, float*, int)",
                 "Fills X (with a poisoned guard region), poisons every slot of partial[] and shared memory, "
                 "launches ceil(N/threads) blocks, and compares partial[b] with block b's own double sum. "
                 "The host, not the kernel, adds the partials to form the total.",
                 kPartialPerBlockParameters},
};

}  // namespace

std::span<const ContractInfo> all_contracts() { return kContracts; }

const ContractInfo* find_contract_info(std::string_view name) {
  for (const auto& contract : kContracts) {
    if (contract.name == name) return &contract;
  }
  return nullptr;
}

}  // namespace cudojo
