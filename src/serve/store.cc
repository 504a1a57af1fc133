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

// A name is shown beside others in a class's grid and its export, so it is made of letters a reader
// sees: code points beyond ASCII are allowed by script, the letters of the world's common alphabets
// and syllabaries, and nothing else (no spaces of other widths, fillers that look blank, invisible,
// joining or direction-changing characters, symbols that imitate ASCII, private-use code points).
// Combining marks (U+0300 to U+036F, bar the grapheme joiner) may follow a letter, two at most.
bool is_name_letter(char32_t c) {
  const auto in = [c](char32_t low, char32_t high) { return c >= low && c <= high; };
  return in(0xC0, 0xD6) || in(0xD8, 0xF6) || in(0xF8, 0x24F) ||  // Latin-1 letters, Latin Extended-A and B
         in(0x386, 0x386) || in(0x388, 0x3CE) ||                 // Greek
         in(0x400, 0x481) || in(0x48A, 0x4FF) ||                 // Cyrillic
         in(0x531, 0x556) || in(0x561, 0x587) ||                 // Armenian
         in(0x5D0, 0x5EA) ||                                     // Hebrew letters
         in(0x620, 0x64A) || in(0x671, 0x6D3) ||                 // Arabic letters
         in(0x900, 0x963) || in(0x966, 0x97F) ||                 // Devanagari (its marks are letters' parts)
         in(0x980, 0xDFF) ||                                     // the other Indic scripts' blocks
         in(0xE01, 0xE3A) || in(0xE40, 0xE4E) ||                 // Thai
         in(0x10A0, 0x10FF) ||                                   // Georgian
         in(0x1E00, 0x1EFF) || in(0x1F00, 0x1FFF) ||             // Latin Extended Additional, Greek Extended
         in(0x3041, 0x3096) || in(0x30A1, 0x30FA) || c == 0x30FC ||  // Hiragana, Katakana
         in(0x3400, 0x4DBF) || in(0x4E00, 0x9FFF) ||                 // CJK ideographs
         in(0xAC00, 0xD7A3);                                         // Hangul syllables
}

bool is_combining_mark(char32_t c) { return c >= 0x300 && c <= 0x36F && c != 0x34F; }

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
  // Words of letters (of the scripts is_name_letter names), digits, '_', '.', '\'' and '-', one space
  // between words; spaces around are trimmed.
  const auto first = requested.find_first_not_of(' ');
  const std::string name =
      first == std::string::npos ? "" : requested.substr(first, requested.find_last_not_of(' ') - first + 1);
  std::size_t characters = 0;
  int marks_in_a_row = 0;
  bool after_letter = false;
  bool ok = !name.empty();
  for (std::size_t at = 0; ok && at < name.size(); ++characters) {
    const std::size_t length = utf8_sequence_length(name, at);
    if (length == 0) {
      ok = false;
    } else if (length == 1) {
      const char c = name[at];
      ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '\'' ||
           (c == ' ' && name[at + 1] != ' ');
      after_letter = std::isalpha(static_cast<unsigned char>(c));
      marks_in_a_row = 0;
    } else {
      const char32_t c = decode_utf8(name, at, length);
      if (is_combining_mark(c)) {
        ok = after_letter && ++marks_in_a_row <= 2;
      } else {
        ok = is_name_letter(c);
        after_letter = ok;
        marks_in_a_row = 0;
      }
    }
    at += length == 0 ? 1 : length;
  }
  if (ok && characters <= 40) return name;
  return std::nullopt;
}

bool is_invisible_or_control(char32_t c) {
  const auto in = [c](char32_t low, char32_t high) { return c >= low && c <= high; };
  return c < 0x20 || in(0x7F, 0xA0) || c == 0xAD || c == 0x34F || c == 0x61C || in(0x115F, 0x1160) ||
         c == 0x1680 || c == 0x180E || in(0x2000, 0x200F) || in(0x2028, 0x202F) || in(0x205F, 0x206F) ||
         c == 0x2800 || c == 0x3000 || c == 0x3164 || in(0xFE00, 0xFE0F) || c == 0xFEFF || c == 0xFFA0 ||
         in(0xFFF0, 0xFFFF) || in(0xE000, 0xF8FF) || in(0xE0000, 0xE007F) || c >= 0xF0000;
}

bool has_invisible_or_control(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = utf8_sequence_length(text, at);
    if (length == 0 || is_invisible_or_control(decode_utf8(text, at, length))) return true;
    at += length;
  }
  return false;
}

std::string checked_learner_name(const std::string& requested) {
  if (auto name = checked_name(requested)) return *name;
  throw StoreError(StoreErrorCode::kInvalidName, kNameRule);
}

void check_new_learner(const NewLearner& wanted, const std::string& name, std::int64_t active_learners,
                       std::int64_t invites_last_hour, bool name_taken) {
  if (wanted.max_class_learners > 0 && active_learners >= wanted.max_class_learners) {
    throw StoreError(
        StoreErrorCode::kConflict,
        fmt::format("this class holds {} learners, its limit; ask your instructor", active_learners));
  }
  if (wanted.origin == LearnerOrigin::kInvite && wanted.max_invites_per_hour > 0 &&
      invites_last_hour >= wanted.max_invites_per_hour) {
    throw StoreError(StoreErrorCode::kTooManyJoins,
                     fmt::format("{} learners joined this class in the last hour, its limit; try again later",
                                 invites_last_hour));
  }
  if (name_taken)
    throw StoreError(StoreErrorCode::kNameTaken, fmt::format("the name '{}' is taken in this class", name));
}

void check_class_size(std::int64_t active_learners, std::int64_t max_class_learners) {
  if (max_class_learners > 0 && active_learners > max_class_learners) {
    throw StoreError(StoreErrorCode::kConflict,
                     fmt::format("the class would hold {} learners, over its limit of {}", active_learners,
                                 max_class_learners));
  }
}

StoreError removed_student(const std::string& student_id, const std::string& name) {
  return StoreError(StoreErrorCode::kConflict,
                    fmt::format("student {}: a removed learner ({}) has this student id; restore them on the "
                                "roster, or give this row another student id",
                                student_id, name));
}

StoreError learner_clash(bool name_clash, const std::string& name,
                         const std::optional<std::string>& student_id) {
  return StoreError(
      StoreErrorCode::kNameTaken,
      name_clash ? fmt::format("another learner of this class is named '{}'", name)
                 : fmt::format("another learner of this class has student id '{}'", student_id.value_or("")));
}

void check_instructor_kept(bool is_instructor, std::int64_t other_instructors) {
  if (is_instructor && other_instructors == 0) {
    throw StoreError(
        StoreErrorCode::kConflict,
        "a class keeps at least one instructor; add another before removing or changing this one");
  }
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

std::string_view to_string(RejudgingState state) {
  switch (state) {
    case RejudgingState::kApplied:
      return "applied";
    case RejudgingState::kCancelled:
      return "cancelled";
    case RejudgingState::kJudging:
      break;
  }
  return "judging";
}

namespace store_internal {
RejudgingState parse_rejudging_state(std::string_view word) {
  if (word == "applied") return RejudgingState::kApplied;
  if (word == "cancelled") return RejudgingState::kCancelled;
  return RejudgingState::kJudging;
}

void check_rejudging_size(std::int64_t matched, std::int64_t max_jobs) {
  if (matched == 0) {
    throw StoreError(StoreErrorCode::kConflict,
                     "no finished job matches (or each is already in a rejudging that is judging)");
  }
  if (matched > max_jobs) {
    throw StoreError(StoreErrorCode::kConflict,
                     fmt::format("{} jobs match, more than the {} one rejudging may take; narrow the filter",
                                 matched, max_jobs));
  }
}

void check_rejudging_open(std::int64_t rejudging_id, const std::string& state, bool apply,
                          std::int64_t waiting, std::int64_t unjudged, std::int64_t versions) {
  if (state != "judging") {
    throw StoreError(StoreErrorCode::kConflict,
                     fmt::format("rejudging {} is {} already", rejudging_id, state));
  }
  if (!apply) return;
  if (waiting > 0) {
    throw StoreError(
        StoreErrorCode::kConflict,
        fmt::format("{} of its jobs are still being judged; apply it once all are done", waiting));
  }
  if (unjudged > 0) {
    throw StoreError(StoreErrorCode::kConflict,
                     fmt::format("{} of its jobs ended without a verdict on the kernel (internal_error or "
                                 "no_device): cancel it, and rejudge once the judges work",
                                 unjudged));
  }
  if (versions > 1) {
    throw StoreError(StoreErrorCode::kConflict,
                     "its jobs were judged under different versions of a stage (the course was reloaded "
                     "meanwhile): cancel it and rejudge");
  }
}

AuditNote with_links_stopped(AuditNote note, int stopped) {
  if (stopped > 0) note.detail += fmt::format(" ({} live link{} stopped)", stopped, stopped == 1 ? "" : "s");
  return note;
}

void check_new_share(const std::string& state, std::int64_t live_elsewhere, std::int64_t max_live,
                     bool class_shares) {
  if (!class_shares) {
    throw StoreError(StoreErrorCode::kNotAllowed,
                     "your class's instructors have turned links to runs off; a link cannot be made now");
  }
  if (state != "done") {
    throw StoreError(StoreErrorCode::kConflict,
                     "only a finished job can be shared; wait for its verdict, then make the link");
  }
  if (live_elsewhere >= max_live) {
    throw StoreError(StoreErrorCode::kConflict,
                     fmt::format("you already share {} jobs, as many as one learner may; stop sharing one "
                                 "of them first",
                                 live_elsewhere));
  }
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

std::string_view to_string(LearnerOrigin origin) {
  switch (origin) {
    case LearnerOrigin::kOpenSignUp:
      return "open";
    case LearnerOrigin::kInvite:
      return "invite";
    case LearnerOrigin::kRoster:
      return "roster";
  }
  return "open";
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
