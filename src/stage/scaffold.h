// `cudojo stage new`: the files of a new stage on an existing contract, made from per-contract
// templates. The stage file has the contract's sensible defaults (sizes, data sets, gate), the
// references are correct kernels in CUDA C++, Python and Rust (so the stage passes `cudojo course
// check` at once and would be accepted on a GPU), the starters have the contract's signature and an
// empty body, and every place the author must still write says TODO(author).
#pragma once

#include <string>
#include <vector>

namespace cudojo {

struct ScaffoldRequest {
  std::string track;     // "reduction"
  int number = 0;        // 10: the id is "reduction/10", the folder "10-<slug>"
  std::string contract;  // a name from all_contracts()
  std::string slug;      // empty: the contract's name with '-' for '_'
  std::string title;     // empty: a TODO(author) title
};

struct ScaffoldFile {
  std::string name;  // "stage.toml", "starter.py", ...
  std::string text;
};

// The folder name ("10-one-accumulator") and the files. Throws std::invalid_argument for a contract
// the judge does not implement (the caller lists them).
std::string scaffold_folder_name(const ScaffoldRequest& request);
std::vector<ScaffoldFile> scaffold_stage(const ScaffoldRequest& request);

}  // namespace cudojo
