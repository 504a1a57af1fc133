// The subcommands that use this machine's GPU or toolchains directly.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "stage/stage.h"

namespace cudojo::cli {

// `cudojo toolchains`: what each language needs here, preparing Rust's core for nvptx64 once.
int cmd_toolchains(const std::string& arch, bool json);
// `cudojo lab`: the course's experiments on this GPU, beside CUB.
int cmd_lab(const std::string& what, bool json, bool csv, const std::string& plot_file);
// `cudojo calibrate`: every reference's figures on this GPU, into <dir>/<gpu>.json.
int cmd_calibrate(const std::vector<Stage>& course, const std::filesystem::path& dir);
// `cudojo gpus`: how many CUDA devices this process can see (0 without a driver), then each one's
// name on a line of its own. The server asks a child process, so that the server itself never
// initializes CUDA.
int count_visible_gpus();

}  // namespace cudojo::cli
