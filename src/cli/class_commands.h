// `cudojo admin ...` and `cudojo class ...`: running a class from the server machine, against the
// store itself (the data folder's SQLite file, or the PostgreSQL URL), whether or not a server is
// running on it. Whoever can read the store can do anything, so these make the first administrator
// and are the way back in when every token is lost; every change is in the audit log as the
// server's console. The same rules as the API's (serve/classroom.h) apply.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "serve/store.h"
#include "stage/stage.h"

namespace cudojo::cli {

struct ClassCommands {
  CLI::App* admin = nullptr;
  CLI::App* admin_create = nullptr;
  CLI::App* admin_list = nullptr;
  CLI::App* admin_reset = nullptr;
  CLI::App* class_command = nullptr;
  CLI::App* class_list = nullptr;
  CLI::App* class_create = nullptr;
  CLI::App* class_roster = nullptr;
  CLI::App* class_tokens = nullptr;
  CLI::App* class_deadline = nullptr;
  CLI::App* class_export = nullptr;

  std::filesystem::path data_dir;
  std::string store;
  bool json = false;
  std::string name;        // the administrator's or class's name
  std::string class_name;  // CLASS: an id or a class's exact name
  std::string instructor;
  std::string file;    // a roster to import ("-": standard input)
  std::string output;  // where tokens or an export go (default: standard output)
  bool all = false;    // tokens for every learner, not only those who never signed in
  std::string stage;
  std::string when;
  bool hide_leaderboard = false;
  bool clear = false;
  std::string format = "csv";
};

// The store of a data folder (its cudojo.sqlite3), or the one `store` names when it is not empty.
// Throws UsageError saying why it cannot be used.
std::unique_ptr<Store> open_store_at(const std::filesystem::path& data_dir, const std::string& store);
// CLASS as typed: an id, or a class's exact name (which must name one class); UsageError otherwise.
ClassInfo find_the_class(ClassStore& classes, const std::string& typed);

// Adds `admin` and `class` to `app`; the options fill the returned commands when the line is parsed.
std::unique_ptr<ClassCommands> add_class_commands(CLI::App& app);
// Whether one of them was asked for.
bool wants_class_command(const ClassCommands& commands);
// Runs the one asked for: its exit code. Throws UsageError for what cannot be done as asked.
int run_class_command(ClassCommands& commands, const std::vector<Stage>& course);

}  // namespace cudojo::cli
