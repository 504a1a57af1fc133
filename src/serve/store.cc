#include "serve/store.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>

#include "common/json_text.h"
#include "report/report.h"
#include "serve/postgres_store.h"
#include "serve/sqlite_store.h"
#include "serve/store_internal.h"

namespace cudojo {

namespace store_internal {

std::string checked_learner_name(const std::string& requested) {
  // Words of letters, digits, '_', '.' and '-', one space between words; spaces around are trimmed.
  static const std::regex kName(R"([A-Za-z0-9_.-]+( [A-Za-z0-9_.-]+)*)");
  const auto first = requested.find_first_not_of(' ');
  const std::string name =
      first == std::string::npos ? "" : requested.substr(first, requested.find_last_not_of(' ') - first + 1);
  if (name.size() > 40 || !std::regex_match(name, kName)) {
    throw StoreError(StoreErrorCode::kInvalidName,
                     "a learner name is 1 to 40 characters: letters, digits, '_', '.', '-', and single "
                     "spaces between words");
  }
  return name;
}

std::string random_token() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1)
    throw StoreError(StoreErrorCode::kInternal, "no randomness for a token");
  std::string hex;
  for (unsigned char byte : bytes) hex += fmt::format("{:02x}", byte);
  return hex;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string address_busy_message(std::int64_t pending) {
  return fmt::format(
      "this address already has {} job{} waiting or running, its whole share of the queue; try again "
      "when one of them finishes",
      pending, pending == 1 ? "" : "s");
}

}  // namespace store_internal

std::string_view to_string(JobState state) {
  switch (state) {
    case JobState::kQueued:
      return "queued";
    case JobState::kRunning:
      return "running";
    case JobState::kDone:
      return "done";
  }
  return "queued";
}

std::string token_digest(const std::string& token) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(token.data(), token.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    throw StoreError(StoreErrorCode::kInternal, "SHA-256 failed");
  }
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

std::string gave_up_report_json() {
  Report report;
  report.verdict = Verdict::kInternalError;
  report.message = fmt::format(
      "this job was started {} times and its judge stopped each time before it finished (a server "
      "restarted or a GPU host went away); it was not run again. Submit it again to retry.",
      Store::kMaxAttempts);
  return json_text(nlohmann::json(report));
}

bool is_postgres_location(std::string_view location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

std::unique_ptr<Store> open_store(const std::string& location, int busy_timeout_ms,
                                  int postgres_connections) {
  if (is_postgres_location(location)) return std::make_unique<PostgresStore>(location, postgres_connections);
  // A URL of any other kind is a mistake, not a file to create under a folder named "mysql:".
  if (location.find("://") != std::string::npos) {
    throw StoreError(StoreErrorCode::kInternal,
                     "a store is a postgresql:// URL or a SQLite file path; no other database is supported");
  }
  return std::make_unique<SqliteStore>(location, busy_timeout_ms);
}

}  // namespace cudojo
