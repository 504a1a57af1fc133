// For contract/float_sum.cc only: one launch's answer judged against the double-precision sums of
// its input (a total, or one sum per block), with the findings that name what went wrong.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "check/datasets.h"
#include "contract/driver.h"
#include "stage/stage.h"

namespace cudojo::float_sum_internal {

// `values` is the input of the launch, `result` its output: one total, or (`partial`) one sum per
// block of the stage's threads. `two_kernels`: a two-kernel sum, whose output starts as NaN.
void judge_result(const Stage& stage, DataKind kind, std::span<const float> values,
                  const std::vector<float>& result, bool partial, bool two_kernels, ContractOutcome& outcome);

}  // namespace cudojo::float_sum_internal
