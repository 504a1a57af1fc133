#include "stage/contract_info.h"

#include <algorithm>
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
constexpr std::array kFoldParameters = {KernelParameter{"partial", true, "f32", true},
                                        KernelParameter{"out", true, "f32", false},
                                        KernelParameter{"count", false, "i32", false}};
constexpr std::array kU64SumParameters = {KernelParameter{"X", true, "u32", true},
                                          KernelParameter{"out", true, "u64", false},
                                          KernelParameter{"N", false, "i32", false}};
constexpr std::array kHistogramParameters = {KernelParameter{"values", true, "u32", true},
                                             KernelParameter{"bins", true, "u32", false},
                                             KernelParameter{"N", false, "i32", false}};
constexpr std::array kFloatMaxParameters = {KernelParameter{"X", true, "f32", true},
                                            KernelParameter{"out", true, "f32", false},
                                            KernelParameter{"N", false, "i32", false}};

constexpr std::array<std::string_view, 0> kNoData = {};
constexpr std::array<std::string_view, 4> kFloatSumData = {"exact", "fractional", "random_signed", "tenths"};
constexpr std::array<std::string_view, 2> kU64SumData = {"bytes", "full_range"};
constexpr std::array<std::string_view, 2> kHistogramData = {"spread", "one_bin"};
constexpr std::array<std::string_view, 4> kFloatMaxData = {"random_signed", "all_negative", "signed_zeros",
                                                           "with_nan"};

constexpr std::string_view kFloatSumPointer = "void (*)(const float*, float*, int)";

constexpr std::array kContracts = {
    ContractInfo{"counter",
                 "int* c",
                 "void (*)(int*)",
                 "Zeroes one int on the device, launches the kernel with the stage's fixed grid, copies the "
                 "int back and compares it with blocks x threads. Repeats several times: a race can lose "
                 "a different number of updates on every run.",
                 kCounterParameters,
                 kNoData,
                 "",
                 {}},
    ContractInfo{"one_accumulator",
                 "const float* X, float* out, int N",
                 kFloatSumPointer,
                 "Fills X (with a poisoned guard region after element N-1), zeroes *out, poisons shared "
                 "memory on every SM, launches the stage's grid, and compares *out with a double "
                 "reference: bitwise on exact data, by the tolerance rule (or the stage's tighter bound) on "
                 "inexact data. Afterwards X must be unchanged.",
                 kOneAccumulatorParameters,
                 kFloatSumData,
                 "exact",
                 {}},
    ContractInfo{"partial_per_block",
                 "const float* X, float* partial, int N",
                 kFloatSumPointer,
                 "Fills X (with a poisoned guard region), poisons every slot of partial[] and shared memory, "
                 "launches ceil(N/threads) blocks, and compares partial[b] with block b's own double sum. "
                 "The host, not the kernel, adds the partials to form the total.",
                 kPartialPerBlockParameters,
                 kFloatSumData,
                 "exact",
                 {}},
    ContractInfo{
        "two_kernel_sum", "const float* X, float* partial, int N", kFloatSumPointer,
        "Fills X (with a poisoned guard region), poisons partial[] (one slot per block of the fixed "
        "grid), *out and shared memory, launches the first kernel on the stage's grid, then the "
        "second on one block with count = the grid's blocks. *out must hold the sum, and the same "
        "bits on every run, on inexact data too. Afterwards X must be unchanged.",
        kPartialPerBlockParameters, kFloatSumData, "exact",
        KernelSignature{"const float* partial, float* out, int count", kFloatSumPointer, kFoldParameters}},
    ContractInfo{"u64_sum",
                 "const unsigned int* X, unsigned long long* out, int N",
                 "void (*)(const unsigned int*, unsigned long long*, int)",
                 "Fills X with unsigned 32-bit values (with a poisoned guard region), zeroes *out, poisons "
                 "shared memory, launches the stage's grid, and compares *out with the exact 64-bit total. "
                 "Afterwards X must be unchanged.",
                 kU64SumParameters,
                 kU64SumData,
                 "",
                 {}},
    ContractInfo{"histogram",
                 "const unsigned int* values, unsigned int* bins, int N",
                 "void (*)(const unsigned int*, unsigned int*, int)",
                 "Fills values (with a poisoned guard region), zeroes the 256 bins, poisons shared memory, "
                 "launches the stage's grid, and compares every bin with the host's count: bins[v % 256] "
                 "counts the values v. Afterwards values must be unchanged.",
                 kHistogramParameters,
                 kHistogramData,
                 "",
                 {}},
    ContractInfo{"float_max",
                 "const float* X, float* out, int N",
                 kFloatSumPointer,
                 "Fills X (with a poisoned guard region), sets *out to -infinity, poisons shared memory, "
                 "launches the stage's grid, and compares *out bit for bit with the largest value of X: NaN "
                 "values are skipped, and +0.0 counts as larger than -0.0. Afterwards X must be unchanged.",
                 kFloatMaxParameters,
                 kFloatMaxData,
                 "",
                 {}},
};

}  // namespace

std::span<const ContractInfo> all_contracts() { return kContracts; }

const ContractInfo* find_contract_info(std::string_view name) {
  for (const auto& contract : kContracts) {
    if (contract.name == name) return &contract;
  }
  return nullptr;
}

bool contract_has_data(const ContractInfo& contract, std::string_view name) {
  return std::find(contract.data_sets.begin(), contract.data_sets.end(), name) != contract.data_sets.end();
}

}  // namespace cudojo
