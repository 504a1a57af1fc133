#include "serve/store.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cctype>
#include <chrono>
#include <nlohmann/json.hpp>

#include "common/json_text.h"
#include "compile/utf8.h"
#include "report/report.h"
#include "serve/postgres_store.h"
#include "serve/sqlite_store.h"
#include "serve/store_internal.h"

namespace cudojo {

namespace store_internal {

namespace {

// Whether code point `c` (beyond ASCII) may stand in a name: not a control, a space of another
// width, an invisible or direction-changing character, a private-use or special one. A name is
// shown beside others in a class's grid, so nothing in it may hide, reorder or imitate its text.
bool is_visible_name_character(char32_t c) {
  const auto in = [c](char32_t low, char32_t high) { return c >= low && c <= high; };
  return !(in(0x80, 0xA0) || c == 0xAD || in(0x2000, 0x200F) || in(0x2028, 0x202F) || in(0x205F, 0x206F) ||
           c == 0x3000 || in(0xFE00, 0xFE0F) || c == 0xFEFF || in(0xFFF0, 0xFFFF) || in(0xE000, 0xF8FF) ||
           in(0xE0000, 0xE007F) || c >= 0xF0000);
}

char32_t decode_utf8(std::string_view text, std::size_t at, std::size_t length) {
  const auto byte = [&](std::size_t i) {
    return static_cast<char32_t>(static_cast<unsigned char>(text[at + i]));
  };
  if (length == 1) return byte(0);
  char32_t c = byte(0) & (0xFF >> (length + 1));
  for (std::size_t i = 1; i < length; ++i) c = (c << 6) | (byte(i) & 0x3F);
  return c;
}

}  // namespace

std::optional<std::string> checked_name(const std::string& requested) {
  // Words of letters (of any script), digits, '_', '.', '\'' and '-', one space between words;
  // spaces around are trimmed.
  const auto first = requested.find_first_not_of(' ');
  const std::string name =
      first == std::string::npos ? "" : requested.substr(first, requested.find_last_not_of(' ') - first + 1);
  std::size_t characters = 0;
  bool ok = !name.empty();
  for (std::size_t at = 0; ok && at < name.size(); ++characters) {
    const std::size_t length = utf8_sequence_length(name, at);
    if (length == 0) {
      ok = false;
    } else if (length == 1) {
      const char c = name[at];
      ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '\'' ||
           (c == ' ' && name[at + 1] != ' ');
    } else {
      ok = is_visible_name_character(decode_utf8(name, at, length));
    }
    at += length == 0 ? 1 : length;
  }
  if (ok && characters <= 40) return name;
  return std::nullopt;
}

std::string checked_learner_name(const std::string& requested) {
  if (auto name = checked_name(requested)) return *name;
  throw StoreError(StoreErrorCode::kInvalidName, kNameRule);
}

std::string random_invite_code() {
  // Crockford's base 32 (no I, L, O or U, which read as other characters): 10 characters, 50 bits,
  // far beyond guessing at the rate the server answers.
  static constexpr char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  unsigned char bytes[10];
  if (RAND_bytes(bytes, sizeof bytes) != 1)
    throw StoreError(StoreErrorCode::kInternal, "no randomness for an invite code");
  std::string code;
  for (unsigned char byte : bytes) code += kAlphabet[byte % 32];
  return code;
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

std::string_view to_string(ClassRole role) { return role == ClassRole::kInstructor ? "instructor" : "ta"; }

std::optional<ClassRole> parse_class_role(std::string_view word) {
  if (word == "instructor") return ClassRole::kInstructor;
  if (word == "ta") return ClassRole::kAssistant;
  return std::nullopt;
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
