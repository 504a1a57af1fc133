// `cudojo serve`: the course as a web page and a JSON API over the same judge as the CLI.
// The HTTP front door (src/http/) only reads and writes the Store; the Dispatcher's threads run
// jobs. The routes are in serve/api.h; this file starts the Store, the Dispatcher, the event
// streams and the listener. docs/openapi.yaml describes the API.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/limits.h"
#include "stage/stage.h"

namespace cudojo {

struct ServeSettings {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::filesystem::path data_dir;  // holds cudojo.sqlite3 when `store` names no other place
  // Where the store is: empty for data_dir/cudojo.sqlite3, a SQLite file path, or a
  // postgresql:// URL shared with other nodes (serve/store.h).
  std::string store;
  bool http = true;                       // false: judge only, no listener (a GPU host behind web nodes)
  std::string node_name;                  // empty: <host>-<pid>
  int workers = -1;                       // -1: one per visible GPU (at least one); 0: none
  std::filesystem::path web_dir;          // index.html, js/ (the page's modules), style.css, node_modules/
  std::filesystem::path calibration_dir;  // per-GPU reference figures (cudojo calibrate)
  bool all_metrics = false;               // SM throughput on every stage (CheckRequest::all_metrics)
  // The folder the course was loaded from, loaded again on SIGHUP or POST /api/admin/course/reload
  // (serve/course_catalog.h). Empty: reloading is refused.
  std::filesystem::path course_root;
  // Proxies whose X-Forwarded-For names the client (addresses or networks; http/client_address.h).
  // Their own connections are not counted per address.
  std::vector<std::string> trusted_proxies;
  // Whether anyone may sign up without an invite code (into the default class). Off
  // (--no-open-sign-up): learners join with their class's invite code or a token from its roster.
  bool open_sign_up = true;
  // Whether a learner may ask for a profiled job ("profile": hot spots and an Nsight Compute report,
  // about 4 s of the GPU alone each on an H200). Off (--no-profiling): such a job is refused.
  bool profiling = true;
  ServeLimits limits;
  JudgeLimits judge_limits;
};

// Serves until SIGINT or SIGTERM (SIGHUP reloads the course); returns the process exit code.
int run_server(const std::vector<Stage>& course, const ServeSettings& settings);

// The web folder shipped with the build, or beside the executable's folder.
std::filesystem::path default_web_dir();
// The data folder: $CUDOJO_DATA, else ./cudojo-data.
std::filesystem::path default_data_dir();

// The GPUs this machine's judges would see, surveyed by a child process (`cudojo gpus`) so that
// this process never initializes CUDA.
struct GpuSurvey {
  int count = 0;
  std::string model = "none";  // the first GPU's name ("none" without one)
};
GpuSurvey survey_gpus(const std::string& executable);

}  // namespace cudojo
