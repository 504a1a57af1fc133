#include "cli/class_commands.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "common/environment.h"
#include "common/json_text.h"
#include "common/limits.h"
#include "serve/classroom.h"
#include "serve/server.h"
#include "serve/store.h"
#include "serve/store_internal.h"

namespace cudojo::cli {

std::unique_ptr<Store> open_store_at(const std::filesystem::path& data_dir, const std::string& store) {
  const std::string location = store.empty() ? (data_dir / "cudojo.sqlite3").string() : store;
  try {
    return open_store(location);
  } catch (const StoreError& error) {
    throw UsageError(fmt::format("the store {} cannot be used: {}", location, error.what()));
  }
}

// CLASS as typed: an id, or a class's exact name (which must name one class).
ClassInfo find_the_class(ClassStore& classes, const std::string& typed) {
  if (!typed.empty() && typed.find_first_not_of("0123456789") == std::string::npos && typed.size() < 18) {
    if (auto found = classes.find_class(std::stoll(typed))) return *found;
    throw UsageError(fmt::format("no class has id {}; `cudojo class list` lists them", typed));
  }
  std::vector<ClassInfo> named;
  for (ClassInfo& class_info : classes.list_classes())
    if (class_info.name == typed) named.push_back(std::move(class_info));
  if (named.size() == 1) return named.front();
  if (named.empty())
    throw UsageError(fmt::format("no class is named '{}'; `cudojo class list` lists them", typed));
  throw UsageError(fmt::format("{} classes are named '{}'; name one by its id (`cudojo class list`)",
                               named.size(), typed));
}

namespace {

using nlohmann::json;

void add_store_options(CLI::App* command, ClassCommands& commands) {
  command->add_option(
      "--data-dir", commands.data_dir,
      "The server's data folder, holding cudojo.sqlite3 (default: $CUDOJO_DATA or ./cudojo-data)");
  command->add_option(
      "--store", commands.store,
      "The server's store instead: a SQLite file or a postgresql:// URL (default: $CUDOJO_STORE)");
  command->add_flag("--json", commands.json, "Print JSON");
}

std::unique_ptr<Store> open_the_store(const ClassCommands& commands) {
  return open_store_at(commands.data_dir, commands.store);
}

// Writes `text` to `path` (standard output when empty). Tokens are secrets: their file is made
// readable by its owner only.
void write_out(const std::string& path, const std::string& text, bool secret) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, secret ? 0600 : 0644);
  if (fd < 0) throw UsageError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  if (secret) fchmod(fd, 0600);
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n <= 0) {
      close(fd);
      throw UsageError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    }
    written += static_cast<std::size_t>(n);
  }
  close(fd);
}

std::string read_roster(const std::string& path) {
  constexpr std::size_t kMaxRosterBytes = 16u << 20;
  if (path == "-") {
    std::string text((std::istreambuf_iterator<char>(std::cin)), {});
    if (text.size() > kMaxRosterBytes) throw UsageError("the roster on standard input is over 16 MiB");
    return text;
  }
  require_file(path);
  const std::string text = read_regular_file(path, kMaxRosterBytes);
  if (text.size() > kMaxRosterBytes) throw UsageError(fmt::format("{} is over 16 MiB: not a roster", path));
  return text;
}

int admin_create(ClassCommands& commands, Store& store) {
  const IssuedStaff issued =
      store.classes().create_staff(commands.name, true,
                                   {console_actor(), std::nullopt, "staff.create",
                                    fmt::format("created administrator account '{}'", commands.name)});
  if (commands.json) {
    std::cout << json_text(json{{"id", issued.staff.id},
                                {"name", issued.staff.name},
                                {"admin", true},
                                {"token", issued.token}})
              << "\n";
    return 0;
  }
  std::cout << fmt::format(
      "Administrator '{}' created. Its token, shown this once (keep it secret; it is the account):\n\n  "
      "{}\n\n"
      "Sign in with it on the page, or send it as \"Authorization: Bearer <token>\". Lost, it is replaced "
      "by\n"
      "`cudojo admin reset-token '{}'` on this machine.\n",
      issued.staff.name, issued.token, issued.staff.name);
  return 0;
}

int admin_list(ClassCommands& commands, Store& store) {
  const auto classes = store.classes().list_classes();
  auto class_name = [&](std::int64_t id) {
    for (const ClassInfo& class_info : classes)
      if (class_info.id == id) return class_info.name;
    return std::string("?");
  };
  json list = json::array();
  for (const StaffAccount& staff : store.classes().list_staff()) {
    json roles = json::array();
    for (const auto& [class_id, role] : staff.roles)
      roles.push_back({{"class", class_id}, {"name", class_name(class_id)}, {"role", to_string(role)}});
    list.push_back({{"id", staff.id}, {"name", staff.name}, {"admin", staff.admin}, {"classes", roles}});
    if (commands.json) continue;
    std::string held;
    for (const auto& role : roles)
      held += fmt::format("{}{} of '{}'", held.empty() ? "" : ", ", role["role"].get<std::string>(),
                          role["name"].get<std::string>());
    std::cout << fmt::format(
        "{:>4}  {:<30} {}\n", staff.id, staff.name,
        staff.admin ? (held.empty() ? "administrator" : "administrator; " + held) : held);
  }
  if (commands.json) std::cout << json_text(list, 2) << "\n";
  return 0;
}

int admin_reset(ClassCommands& commands, Store& store) {
  const auto staff = store.classes().find_staff_by_name(commands.name);
  if (!staff)
    throw UsageError(
        fmt::format("no member of staff is named '{}'; `cudojo admin list` lists them", commands.name));
  const auto token = store.classes().reset_staff_token(
      staff->id,
      {console_actor(), std::nullopt, "staff.token_reset", fmt::format("gave {} a new token", staff->name)});
  if (commands.json) {
    std::cout << json_text(json{{"id", staff->id}, {"name", staff->name}, {"token", token.value_or("")}})
              << "\n";
  } else {
    std::cout << fmt::format("'{}' has a new token (the old one stopped working):\n\n  {}\n", staff->name,
                             token.value_or(""));
  }
  return 0;
}

int class_list(ClassCommands& commands, Store& store) {
  json list = json::array();
  for (const ClassInfo& class_info : store.classes().list_classes()) {
    list.push_back({{"id", class_info.id},
                    {"name", class_info.name},
                    {"invite_code", class_info.invite_code},
                    {"learners", class_info.learners},
                    {"joining_open", class_info.joining_open},
                    {"sharing_open", class_info.sharing_open},
                    {"is_default", class_info.is_default}});
    if (!commands.json) {
      std::cout << fmt::format(
          "{:>4}  {:<36} invite {}{}  {} learner{}{}{}\n", class_info.id, class_info.name,
          class_info.invite_code, class_info.joining_open ? "" : " (closed)", class_info.learners,
          class_info.learners == 1 ? "" : "s", class_info.sharing_open ? "" : "  (links to runs off)",
          class_info.is_default ? "  (open sign-up lands here)" : "");
    }
  }
  if (commands.json) std::cout << json_text(list, 2) << "\n";
  return 0;
}

int class_create(ClassCommands& commands, Store& store) {
  if (auto problem = class_name_problem(commands.name)) throw UsageError(*problem);
  ClassStore& classes = store.classes();
  const Actor console = console_actor();
  const ClassInfo made = classes.create_class(
      commands.name,
      {console, std::nullopt, "class.create", fmt::format("created class '{}'", commands.name)});
  json answer = {{"id", made.id}, {"name", made.name}, {"invite_code", made.invite_code}};
  std::string said = fmt::format("Class {} '{}' created. Learners join it with the invite code {}.\n",
                                 made.id, made.name, made.invite_code);
  if (!commands.instructor.empty()) {
    auto account = classes.find_staff_by_name(commands.instructor);
    std::optional<std::string> token;
    if (!account) {
      IssuedStaff issued = classes.create_staff(
          commands.instructor, false,
          {console, made.id, "staff.create", fmt::format("created staff account '{}'", commands.instructor)});
      account = issued.staff;
      token = issued.token;
    }
    classes.set_class_role(
        made.id, account->id, ClassRole::kInstructor,
        {console, made.id, "class.staff_add", fmt::format("made {} an instructor", account->name)});
    answer["instructor"] = {
        {"id", account->id}, {"name", account->name}, {"token", token ? json(*token) : json(nullptr)}};
    said += token ? fmt::format("Its instructor '{}' signs in with this token, shown this once:\n\n  {}\n",
                                account->name, *token)
                  : fmt::format("'{}' (an existing account) is its instructor.\n", account->name);
  }
  std::cout << (commands.json ? json_text(answer) + "\n" : said);
  return 0;
}

int class_roster(ClassCommands& commands, Store& store, const ServeLimits& limits) {
  const ClassInfo class_info = find_the_class(store.classes(), commands.class_name);
  const ParsedRoster parsed = parse_roster_csv(read_roster(commands.file), limits.max_roster_rows);
  if (!parsed.problems.empty()) {
    std::string said = fmt::format("the roster was not imported ({} problem{}):", parsed.problems.size(),
                                   parsed.problems.size() == 1 ? "" : "s");
    for (const RosterProblem& problem : parsed.problems)
      said += problem.line > 0 ? fmt::format("\n  line {}: {}", problem.line, problem.problem)
                               : "\n  " + problem.problem;
    throw UsageError(said);
  }
  if (parsed.rows.empty()) throw UsageError("the roster holds no learners");
  const RosterImportCounts counts =
      store.classes().import_roster(class_info.id, parsed.rows, limits.max_learners_per_class,
                                    {console_actor(), class_info.id, "roster.import",
                                     fmt::format("imported a roster of {} learners", parsed.rows.size())});
  if (commands.json) {
    std::cout << json_text(json{{"created", counts.created},
                                {"updated", counts.updated},
                                {"unchanged", counts.unchanged}})
              << "\n";
  } else {
    std::cout << fmt::format(
        "'{}': {} created, {} updated, {} unchanged. `cudojo class tokens {}` makes the tokens to hand "
        "out.\n",
        class_info.name, counts.created, counts.updated, counts.unchanged, class_info.id);
  }
  return 0;
}

int class_tokens(ClassCommands& commands, Store& store) {
  const ClassInfo class_info = find_the_class(store.classes(), commands.class_name);
  const auto issued =
      store.classes().issue_tokens(class_info.id, !commands.all,
                                   {console_actor(), class_info.id, "tokens.issue",
                                    commands.all ? "gave every learner a new token"
                                                 : "gave the learners who never signed in a new token"});
  std::string text;
  if (commands.json) {
    json list = json::array();
    for (const IssuedToken& entry : issued) {
      list.push_back({{"id", entry.learner.id},
                      {"student_id", entry.learner.student_id.value_or("")},
                      {"name", entry.learner.name},
                      {"email", entry.learner.email.value_or("")},
                      {"token", entry.token}});
    }
    text = json_text(list, 2) + "\n";
  } else {
    text = "student_id,name,email,token\r\n";
    for (const IssuedToken& entry : issued) {
      text += fmt::format("{},{},{},{}\r\n", csv_field(entry.learner.student_id.value_or("")),
                          csv_field(entry.learner.name), csv_field(entry.learner.email.value_or("")),
                          entry.token);
    }
  }
  write_out(commands.output, text, true);
  if (!commands.output.empty() && commands.output != "-")
    std::cerr << fmt::format("{} token{} written to {} (readable by you only)\n", issued.size(),
                             issued.size() == 1 ? "" : "s", commands.output);
  return 0;
}

int class_deadline(ClassCommands& commands, Store& store, const std::vector<Stage>& course) {
  const ClassInfo class_info = find_the_class(store.classes(), commands.class_name);
  const Stage& stage = require_stage(course, commands.stage);
  const Actor console = console_actor();
  if (commands.clear) {
    const bool cleared = store.classes().clear_deadline(
        class_info.id, stage.id,
        {console, class_info.id, "deadline.clear", fmt::format("cleared the deadline of {}", stage.id)});
    std::cout << (commands.json
                      ? json_text(json{{"stage", stage.id}, {"cleared", cleared}}) + "\n"
                      : fmt::format("{}: {}\n", stage.id, cleared ? "deadline cleared" : "had no deadline"));
    return 0;
  }
  if (commands.when.empty())
    throw UsageError(
        "give the deadline (\"2026-12-15 23:59\", this machine's time zone, or ISO 8601 with a zone), or "
        "--clear");
  const auto due_at = parse_time(commands.when, true);
  if (!due_at)
    throw UsageError(
        fmt::format("'{}' is not a time: write \"2026-12-15 23:59\" (this machine's time zone) or "
                    "\"2026-12-15T23:59:00Z\"",
                    commands.when));
  const Deadline deadline{stage.id, *due_at, commands.hide_leaderboard};
  store.classes().set_deadline(
      class_info.id, deadline,
      {console, class_info.id, "deadline.set",
       fmt::format("set the deadline of {} to {}{}", stage.id, iso_time(*due_at),
                   commands.hide_leaderboard ? ", its leaderboard hidden until then" : "")});
  std::cout << (commands.json
                    ? json_text(json{{"stage", stage.id},
                                     {"due_at", *due_at},
                                     {"hide_leaderboard", commands.hide_leaderboard}}) +
                          "\n"
                    : fmt::format(
                          "{} in '{}' is due {}{}\n", stage.id, class_info.name, iso_time(*due_at),
                          commands.hide_leaderboard ? "; its leaderboard stays hidden until then" : ""));
  return 0;
}

int class_export(ClassCommands& commands, Store& store, const std::vector<Stage>& course) {
  const ClassInfo class_info = find_the_class(store.classes(), commands.class_name);
  const ClassGrid grid = build_grid(store.classes(), course, class_info, store_internal::now_seconds());
  store.classes().record(
      {console_actor(), class_info.id, "grid.export",
       fmt::format("exported the progress of {} learners as {}", grid.rows.size(), commands.format)});
  write_out(commands.output,
            commands.format == "json" ? json_text(grid_json(grid), 2) + "\n" : grid_csv(grid), false);
  return 0;
}

}  // namespace

std::unique_ptr<ClassCommands> add_class_commands(CLI::App& app) {
  auto commands = std::make_unique<ClassCommands>();
  ClassCommands& c = *commands;
  c.data_dir = default_data_dir();
  if (const char* store = std::getenv(env::kStore); store && *store) c.store = store;

  c.admin =
      app.add_subcommand("admin",
                         "Staff accounts, from the server machine (the first administrator is made here):\n"
                         "  cudojo admin create 'Ops Team'        an administrator; prints its token once\n"
                         "  cudojo admin list                     every member of staff and their classes\n"
                         "  cudojo admin reset-token 'Ops Team'   a new token (the old one stops working)");
  c.admin->require_subcommand(1);
  c.admin_create = c.admin->add_subcommand("create", "Make an administrator and print its token once");
  c.admin_create->add_option("name", c.name, "Its name (1 to 40 characters)")->required();
  c.admin_list = c.admin->add_subcommand("list", "List every member of staff and their roles");
  c.admin_reset = c.admin->add_subcommand("reset-token", "Give a member of staff a new token");
  c.admin_reset->add_option("name", c.name, "Their name")->required();

  c.class_command = app.add_subcommand(
      "class",
      "Run a class from the server machine (instructors do the same on the page):\n"
      "  cudojo class create 'GPU Programming' --instructor 'Prof Ada'   prints the invite code and a token\n"
      "  cudojo class roster 2 roster.csv          import student id, name, email (again to update)\n"
      "  cudojo class tokens 2 -o tokens.csv       tokens for the roster's learners, to hand out\n"
      "  cudojo class deadline 2 reduction/3 '2026-12-15 23:59' --hide-leaderboard\n"
      "  cudojo class export 2 -o grades.csv       one row per learner, student id first\n"
      "CLASS is a class's id or its exact name (`cudojo class list`).");
  c.class_command->require_subcommand(1);
  c.class_list = c.class_command->add_subcommand("list", "List the classes with their invite codes");
  c.class_create = c.class_command->add_subcommand("create", "Make a class (and its instructor's account)");
  c.class_create->add_option("name", c.name, "The class's name (1 to 80 characters)")->required();
  c.class_create->add_option(
      "--instructor", c.instructor,
      "Its instructor: an existing member of staff, or a new account whose token is printed once");
  c.class_roster = c.class_command->add_subcommand("roster",
                                                   "Import a roster: CSV of student id, name, e-mail (a "
                                                   "header row may name them); a later import updates");
  c.class_roster->add_option("class", c.class_name, "CLASS")->required();
  c.class_roster->add_option("file", c.file, "The CSV file ('-' reads standard input)")->required();
  c.class_tokens = c.class_command->add_subcommand(
      "tokens",
      "New tokens for the roster's learners who never signed in (CSV: student_id,name,email,token)");
  c.class_tokens->add_option("class", c.class_name, "CLASS")->required();
  c.class_tokens->add_flag("--all", c.all,
                           "Every learner of the class, signed in or not (their old tokens stop working)");
  c.class_tokens->add_option("-o,--output", c.output,
                             "Write to this file, readable by you only (default: standard output)");
  c.class_deadline = c.class_command->add_subcommand(
      "deadline", "Set a stage's deadline: later jobs are judged and marked late");
  c.class_deadline->add_option("class", c.class_name, "CLASS")->required();
  c.class_deadline->add_option("stage", c.stage, "Stage id or alias")->required();
  c.class_deadline->add_option("when", c.when,
                               "\"2026-12-15 23:59\" (this machine's time zone) or ISO 8601 with a zone");
  c.class_deadline->add_flag("--hide-leaderboard", c.hide_leaderboard,
                             "Keep the stage's leaderboard hidden until then");
  c.class_deadline->add_flag("--clear", c.clear, "Remove the stage's deadline");
  c.class_export = c.class_command->add_subcommand(
      "export", "The progress grid: one row per learner, student id first (columns: docs/DEPLOY.md)");
  c.class_export->add_option("class", c.class_name, "CLASS")->required();
  c.class_export->add_option("--format", c.format, "csv (default) or json")
      ->check(CLI::IsMember({"csv", "json"}));
  c.class_export->add_option("-o,--output", c.output, "Write to this file (default: standard output)");
  for (CLI::App* command : {c.admin_create, c.admin_list, c.admin_reset, c.class_list, c.class_create,
                            c.class_roster, c.class_tokens, c.class_deadline, c.class_export})
    add_store_options(command, c);
  return commands;
}

bool wants_class_command(const ClassCommands& commands) { return *commands.admin || *commands.class_command; }

int run_class_command(ClassCommands& commands, const std::vector<Stage>& course) {
  const std::unique_ptr<Store> store = open_the_store(commands);
  try {
    if (*commands.admin_create) return admin_create(commands, *store);
    if (*commands.admin_list) return admin_list(commands, *store);
    if (*commands.admin_reset) return admin_reset(commands, *store);
    if (*commands.class_list) return class_list(commands, *store);
    if (*commands.class_create) return class_create(commands, *store);
    if (*commands.class_roster) return class_roster(commands, *store, ServeLimits{});
    if (*commands.class_tokens) return class_tokens(commands, *store);
    if (*commands.class_deadline) return class_deadline(commands, *store, course);
    if (*commands.class_export) return class_export(commands, *store, course);
  } catch (const StoreError& error) {
    // A name taken or malformed is the user's to fix; the store's own failure is not.
    if (error.code() == StoreErrorCode::kNameTaken || error.code() == StoreErrorCode::kInvalidName)
      throw UsageError(error.what());
    throw;
  }
  throw UsageError("say what to do: `cudojo admin --help` or `cudojo class --help`");
}

}  // namespace cudojo::cli
