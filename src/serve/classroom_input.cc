// What people type when they run a class, read once for the API and the command line alike: invite
// codes, student ids, addresses, class names, times and rosters (serve/classroom.h).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>
#include <regex>
#include <set>

#include "common/time_text.h"
#include "compile/utf8.h"
#include "serve/classroom.h"
#include "serve/store_internal.h"

namespace cudojo {

namespace {

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return "";
  return std::string(text.substr(first, text.find_last_not_of(" \t") - first + 1));
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::size_t utf8_characters(std::string_view text) {
  std::size_t count = 0;
  for (std::size_t at = 0; at < text.size(); ++count) {
    const std::size_t length = utf8_sequence_length(text, at);
    at += length == 0 ? 1 : length;
  }
  return count;
}

}  // namespace

// ---- What people type

std::string normalize_invite_code(std::string_view typed) {
  std::string code;
  for (char c : typed.substr(0, 64)) {
    if (c == ' ' || c == '-' || c == '\t') continue;
    code += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return code;
}

std::optional<std::string> student_id_problem(const std::string& student_id) {
  const bool plain = !student_id.empty() && student_id.size() <= 64 &&
                     std::all_of(student_id.begin(), student_id.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
                     });
  if (plain) return std::nullopt;
  return "a student id is 1 to 64 letters, digits, '.', '_' or '-'";
}

std::optional<std::string> email_problem(const std::string& email) {
  // Printable ASCII only: an address is for a school's mail system, and nothing in it may hide or
  // reorder text in a grid or an export.
  const auto at = email.find('@');
  const bool ok = email.size() <= 254 && at != std::string::npos && at > 0 && at + 1 < email.size() &&
                  email.find('@', at + 1) == std::string::npos &&
                  std::all_of(email.begin(), email.end(), [](char c) { return c > ' ' && c < 127; });
  if (ok) return std::nullopt;
  return "an e-mail address has one '@' with text on both sides, printable ASCII without spaces, and at most "
         "254 "
         "characters";
}

std::optional<std::string> class_name_problem(const std::string& name) {
  const bool ok = !name.empty() && name == trimmed(name) && !store_internal::has_invisible_or_control(name) &&
                  utf8_characters(name) <= 80;
  if (ok) return std::nullopt;
  return "a class's name is 1 to 80 characters, without control, invisible or direction-changing characters "
         "or "
         "spaces around it";
}

std::optional<double> parse_time(std::string_view text, bool local_without_zone) {
  // YYYY-MM-DD, 'T' or a space, HH:MM, optionally :SS and a fraction, then Z or +HH:MM / -HHMM; every
  // field its full width, so that "2026-1-1T1:1Z" or "00.5.5Z" are refused, not guessed at.
  static const std::regex kTime(
      R"((\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?)");
  std::smatch field;
  const std::string typed(text.substr(0, 64));
  if (text.size() > 64 || !std::regex_match(typed, field, kTime)) return std::nullopt;
  const auto number = [&](int index) { return field[index].matched ? std::stoi(field[index].str()) : 0; };
  std::tm fields{};
  fields.tm_year = number(1) - 1900;
  fields.tm_mon = number(2) - 1;
  fields.tm_mday = number(3);
  fields.tm_hour = number(4);
  fields.tm_min = number(5);
  const int seconds = number(6);
  const double fraction = field[7].matched ? std::stod("0" + field[7].str()) : 0.0;
  if (fields.tm_mon < 0 || fields.tm_mon > 11 || fields.tm_mday < 1 || fields.tm_hour > 23 ||
      fields.tm_min > 59 || seconds > 59 || number(10) > 14 || number(11) > 59)
    return std::nullopt;
  const bool has_zone = field[8].matched || field[9].matched;
  if (!has_zone) {
    if (!local_without_zone) return std::nullopt;
    std::tm local = fields;
    local.tm_isdst = -1;
    const std::time_t when = std::mktime(&local);
    if (when == -1 || local.tm_mday != fields.tm_mday) return std::nullopt;
    return static_cast<double>(when) + seconds + fraction;
  }
  const int offset_minutes = (field[9].str() == "-" ? -1 : 1) * (number(10) * 60 + number(11));
  const int day = fields.tm_mday, month = fields.tm_mon;
  const std::time_t utc = timegm(&fields);
  // timegm normalizes 31 February into March: a date that moved was not a date.
  if (fields.tm_mday != day || fields.tm_mon != month) return std::nullopt;
  return static_cast<double>(utc) + seconds + fraction - offset_minutes * 60.0;
}

std::string iso_time(double seconds) { return time_text(seconds, "%Y-%m-%dT%H:%M:%SZ", TimeZone::kUtc); }

// ---- Rosters

namespace {

// The records of a CSV text, each with the line it starts on; a quote left open is reported.
std::vector<std::pair<int, std::vector<std::string>>> csv_records(std::string_view text,
                                                                  std::size_t max_records,
                                                                  std::vector<RosterProblem>& problems) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<std::pair<int, std::vector<std::string>>> records;
  std::vector<std::string> fields(1);
  int line = 1, record_line = 1;
  bool quoted = false, any = false;
  auto finish_record = [&] {
    const bool blank = fields.size() == 1 && trimmed(fields[0]).empty();
    if (!blank) records.push_back({record_line, std::move(fields)});
    fields.assign(1, "");
    any = false;
  };
  for (std::size_t i = 0; i < text.size() && records.size() <= max_records; ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        if (fields.back().size() < 1024) fields.back() += c;
      }
      continue;
    }
    if (!any) record_line = line;
    any = true;
    if (c == '"' && trimmed(fields.back()).empty()) {
      fields.back().clear();
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      finish_record();
      ++line;
    } else if (fields.back().size() < 1024) {
      fields.back() += c;
    }
  }
  // A record whose quote never closed swallowed the rest of the text: it is reported, not read.
  if (quoted) {
    problems.push_back({record_line, "a quoted field is never closed"});
  } else if (any) {
    finish_record();
  }
  return records;
}

// The column a header word names: 0 student id, 1 name, 2 email, -1 none of them.
int header_column(const std::string& word) {
  static const std::set<std::string> kStudentId = {"student id", "student_id", "studentid",     "student",
                                                   "id",         "sid",        "student number"};
  static const std::set<std::string> kName = {"name", "display name", "display_name", "full name"};
  static const std::set<std::string> kEmail = {"email", "e-mail", "mail", "email address", "e-mail address"};
  const std::string key = lower(trimmed(word));
  if (kStudentId.count(key)) return 0;
  if (kName.count(key)) return 1;
  if (kEmail.count(key)) return 2;
  return -1;
}

std::string collapse_spaces(const std::string& text) {
  std::string out;
  for (char c : trimmed(text)) {
    if ((c == ' ' || c == '\t') && !out.empty() && out.back() == ' ') continue;
    out += c == '\t' ? ' ' : c;
  }
  return out;
}

}  // namespace

ParsedRoster parse_roster_csv(std::string_view text, std::size_t max_rows) {
  ParsedRoster parsed;
  auto records = csv_records(text, max_rows + 1, parsed.problems);
  std::array<int, 3> columns = {0, 1, 2};
  std::size_t first = 0;
  if (!records.empty()) {
    std::array<int, 3> named = {-1, -1, -1};
    bool header = false;
    for (std::size_t i = 0; i < records[0].second.size(); ++i) {
      const int column = header_column(records[0].second[i]);
      if (column >= 0 && named[column] < 0) named[column] = static_cast<int>(i);
      header = header || column >= 0;
    }
    if (header) {
      first = 1;
      columns = named;
      if (named[0] < 0 || named[1] < 0)
        parsed.problems.push_back(
            {records[0].first, "the header names no student id column or no name column"});
    }
  }
  if (records.size() - first > max_rows) {
    parsed.problems.push_back({0, fmt::format("a roster holds at most {} learners", max_rows)});
    return parsed;
  }
  std::set<std::string> student_ids, names;
  for (std::size_t r = first; r < records.size() && parsed.problems.size() < 100; ++r) {
    const auto& [line, fields] = records[r];
    auto field = [&](int column) {
      return column >= 0 && static_cast<std::size_t>(column) < fields.size() ? fields[column] : std::string();
    };
    RosterRow row{trimmed(field(columns[0])), collapse_spaces(field(columns[1])), trimmed(field(columns[2]))};
    if (auto problem = student_id_problem(row.student_id)) {
      parsed.problems.push_back({line, *problem});
      continue;
    }
    const auto name = store_internal::checked_name(row.name);
    if (!name) {
      parsed.problems.push_back(
          {line, fmt::format("student {}: {}", row.student_id, store_internal::kNameRule)});
      continue;
    }
    row.name = *name;
    if (!row.email.empty()) {
      if (auto problem = email_problem(row.email)) {
        parsed.problems.push_back({line, fmt::format("student {}: {}", row.student_id, *problem)});
        continue;
      }
    }
    if (!student_ids.insert(row.student_id).second) {
      parsed.problems.push_back({line, fmt::format("student {} is on the roster twice", row.student_id)});
      continue;
    }
    if (!names.insert(row.name).second) {
      parsed.problems.push_back(
          {line, fmt::format("student {}: the name '{}' is on the roster twice", row.student_id, row.name)});
      continue;
    }
    parsed.rows.push_back(std::move(row));
  }
  return parsed;
}

}  // namespace cudojo
