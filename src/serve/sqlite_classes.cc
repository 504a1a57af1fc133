// SqliteStore's classes (serve/store_classes.h), first part: classes, staff and their roles, and the
// audit log. Rosters, tokens, deadlines, drafts and the grid are in sqlite_rosters.cc. Every change
// staff make is written in one transaction with its audit entry.
#include <fmt/format.h>
#include <sqlite3.h>

#include <limits>

#include "serve/sqlite_statement.h"
#include "serve/sqlite_store.h"
#include "serve/store_internal.h"

namespace cudojo {

using sqlite_internal::in_transaction;
using sqlite_internal::Statement;
using store_internal::now_seconds;

namespace {

constexpr const char* kClassColumns =
    "c.id, c.name, c.invite_code, c.is_default, c.joining_open, c.sharing_open, c.created_at,"
    " (SELECT COUNT(*) FROM learners AS l WHERE l.class_id = c.id AND l.removed_at IS NULL)";

ClassInfo read_class(const Statement& row) {
  return {row.integer(0),      row.text(1),         row.text(2), row.integer(3) != 0,
          row.integer(4) != 0, row.integer(5) != 0, row.real(6), row.integer(7)};
}

}  // namespace

void SqliteStore::insert_audit(const AuditNote& note) {
  Statement insert(db_,
                   "INSERT INTO audit (at, actor_kind, actor_id, actor_name, class_id, action, detail)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?)");
  insert.bind(1, now_seconds()).bind(2, note.actor.kind).bind(3, note.actor.id).bind(4, note.actor.name);
  insert.bind(5, note.class_id).bind(6, note.action).bind(7, note.detail);
  insert.step();
}

// ---- Classes

ClassInfo SqliteStore::create_class(const std::string& name, const AuditNote& note) {
  std::lock_guard lock(mutex_);
  const std::int64_t id = in_transaction(db_, [&] {
    Statement insert(db_, "INSERT INTO classes (name, invite_code, created_at) VALUES (?, ?, ?)");
    insert.bind(1, name).bind(2, store_internal::random_invite_code()).bind(3, now_seconds());
    insert.step();
    const std::int64_t made = sqlite3_last_insert_rowid(db_);
    AuditNote recorded = note;
    recorded.class_id = made;
    insert_audit(recorded);
    return made;
  });
  Statement query(db_, fmt::format("SELECT {} FROM classes AS c WHERE c.id = ?", kClassColumns).c_str());
  query.bind(1, id);
  query.step();
  return read_class(query);
}

std::optional<ClassInfo> SqliteStore::find_class(std::int64_t class_id) {
  std::lock_guard lock(mutex_);
  Statement query(db_, fmt::format("SELECT {} FROM classes AS c WHERE c.id = ?", kClassColumns).c_str());
  query.bind(1, class_id);
  if (!query.step()) return std::nullopt;
  return read_class(query);
}

std::optional<ClassInfo> SqliteStore::find_class_by_invite(const std::string& code) {
  std::lock_guard lock(mutex_);
  Statement query(db_,
                  fmt::format("SELECT {} FROM classes AS c WHERE c.invite_code = ?", kClassColumns).c_str());
  query.bind(1, code);
  if (!query.step()) return std::nullopt;
  return read_class(query);
}

ClassInfo SqliteStore::default_class() {
  std::lock_guard lock(mutex_);
  Statement query(db_,
                  fmt::format("SELECT {} FROM classes AS c WHERE c.is_default = 1", kClassColumns).c_str());
  if (!query.step()) throw StoreError(StoreErrorCode::kInternal, "the default class is missing");
  return read_class(query);
}

std::vector<ClassInfo> SqliteStore::list_classes() {
  std::lock_guard lock(mutex_);
  Statement query(db_, fmt::format("SELECT {} FROM classes AS c ORDER BY c.id", kClassColumns).c_str());
  std::vector<ClassInfo> classes;
  while (query.step()) classes.push_back(read_class(query));
  return classes;
}

std::optional<ClassInfo> SqliteStore::change_class(std::int64_t class_id, const ClassChange& change,
                                                   const AuditNote& note) {
  {
    std::lock_guard lock(mutex_);
    const bool found = in_transaction(db_, [&] {
      Statement update(
          db_,
          "UPDATE classes SET name = COALESCE(?, name), joining_open = COALESCE(?, joining_open),"
          " invite_code = COALESCE(?, invite_code), sharing_open = COALESCE(?, sharing_open) WHERE id = ?");
      const auto as_integer = [](std::optional<bool> flag) {
        return flag ? std::optional<std::int64_t>(*flag ? 1 : 0) : std::nullopt;
      };
      update.bind(1, change.name);
      update.bind(2, as_integer(change.joining_open));
      update.bind(3, change.new_invite_code ? std::optional<std::string>(store_internal::random_invite_code())
                                            : std::nullopt);
      update.bind(4, as_integer(change.sharing_open));
      update.bind(5, class_id);
      update.step();
      if (sqlite3_changes(db_) == 0) return false;
      const int stopped = change.sharing_open == false ? stop_class_shares(class_id, note.actor.name) : 0;
      insert_audit(store_internal::with_links_stopped(note, stopped));
      return true;
    });
    if (!found) return std::nullopt;
  }
  return find_class(class_id);
}

// ---- Staff

std::optional<StaffAccount> SqliteStore::staff_where(const char* condition, const std::string& value) {
  Statement query(db_,
                  fmt::format("SELECT id, name, admin, created_at FROM staff WHERE {}", condition).c_str());
  query.bind(1, value);
  if (!query.step()) return std::nullopt;
  StaffAccount staff{query.integer(0), query.text(1), query.integer(2) != 0, query.real(3), {}};
  Statement roles(db_, "SELECT class_id, role FROM class_staff WHERE staff_id = ?");
  roles.bind(1, staff.id);
  while (roles.step()) staff.roles[roles.integer(0)] = parse_class_role(roles.text(1)).value();
  return staff;
}

IssuedStaff SqliteStore::create_staff(const std::string& requested, bool admin, const AuditNote& note) {
  const std::string name = store_internal::checked_learner_name(requested);
  std::lock_guard lock(mutex_);
  return in_transaction(db_, [&] {
    Statement taken(db_, "SELECT 1 FROM staff WHERE name = ?");
    taken.bind(1, name);
    if (taken.step())
      throw StoreError(StoreErrorCode::kNameTaken,
                       fmt::format("a member of staff is named '{}' already", name));
    IssuedStaff issued;
    issued.token = store_internal::random_token();
    const double now = now_seconds();
    Statement insert(db_, "INSERT INTO staff (name, token_sha256, admin, created_at) VALUES (?, ?, ?, ?)");
    insert.bind(1, name)
        .bind(2, token_digest(issued.token))
        .bind(3, std::int64_t{admin ? 1 : 0})
        .bind(4, now);
    insert.step();
    issued.staff = {sqlite3_last_insert_rowid(db_), name, admin, now, {}};
    insert_audit(note);
    return issued;
  });
}

std::optional<StaffAccount> SqliteStore::find_staff_by_token(const std::string& token) {
  if (token.empty() || token.size() > 200) return std::nullopt;
  std::lock_guard lock(mutex_);
  return staff_where("token_sha256 = ?", token_digest(token));
}

std::optional<StaffAccount> SqliteStore::find_staff(std::int64_t staff_id) {
  std::lock_guard lock(mutex_);
  return staff_where("id = ?", std::to_string(staff_id));
}

std::optional<StaffAccount> SqliteStore::find_staff_by_name(const std::string& name) {
  std::lock_guard lock(mutex_);
  return staff_where("name = ?", name);
}

std::vector<StaffAccount> SqliteStore::list_staff() {
  std::lock_guard lock(mutex_);
  std::vector<StaffAccount> accounts;
  Statement query(db_, "SELECT id, name, admin, created_at FROM staff ORDER BY name");
  while (query.step())
    accounts.push_back({query.integer(0), query.text(1), query.integer(2) != 0, query.real(3), {}});
  Statement roles(db_, "SELECT staff_id, class_id, role FROM class_staff");
  while (roles.step()) {
    for (StaffAccount& account : accounts)
      if (account.id == roles.integer(0))
        account.roles[roles.integer(1)] = parse_class_role(roles.text(2)).value();
  }
  return accounts;
}

std::optional<std::string> SqliteStore::reset_staff_token(std::int64_t staff_id, const AuditNote& note) {
  std::lock_guard lock(mutex_);
  return in_transaction(db_, [&]() -> std::optional<std::string> {
    const std::string token = store_internal::random_token();
    Statement update(db_, "UPDATE staff SET token_sha256 = ? WHERE id = ?");
    update.bind(1, token_digest(token)).bind(2, staff_id);
    update.step();
    if (sqlite3_changes(db_) == 0) return std::nullopt;
    insert_audit(note);
    return token;
  });
}

void SqliteStore::keep_an_instructor(std::int64_t class_id, std::int64_t staff_id) {
  Statement others(db_,
                   "SELECT COALESCE(SUM(staff_id = ?), 0), COALESCE(SUM(staff_id != ?), 0) FROM class_staff"
                   " WHERE class_id = ? AND role = 'instructor'");
  others.bind(1, staff_id).bind(2, staff_id).bind(3, class_id);
  others.step();
  store_internal::check_instructor_kept(others.integer(0) > 0, others.integer(1));
}

void SqliteStore::set_class_role(std::int64_t class_id, std::int64_t staff_id, ClassRole role,
                                 const AuditNote& note) {
  std::lock_guard lock(mutex_);
  in_transaction(db_, [&] {
    if (role != ClassRole::kInstructor) keep_an_instructor(class_id, staff_id);
    Statement upsert(db_,
                     "INSERT INTO class_staff (class_id, staff_id, role) VALUES (?, ?, ?)"
                     " ON CONFLICT (class_id, staff_id) DO UPDATE SET role = excluded.role");
    upsert.bind(1, class_id).bind(2, staff_id).bind(3, std::string(to_string(role)));
    upsert.step();
    insert_audit(note);
  });
}

bool SqliteStore::remove_class_role(std::int64_t class_id, std::int64_t staff_id, const AuditNote& note) {
  std::lock_guard lock(mutex_);
  return in_transaction(db_, [&] {
    keep_an_instructor(class_id, staff_id);
    Statement remove(db_, "DELETE FROM class_staff WHERE class_id = ? AND staff_id = ?");
    remove.bind(1, class_id).bind(2, staff_id);
    remove.step();
    if (sqlite3_changes(db_) == 0) return false;
    insert_audit(note);
    return true;
  });
}

std::vector<ClassStaffMember> SqliteStore::class_staff(std::int64_t class_id) {
  std::lock_guard lock(mutex_);
  Statement query(db_,
                  "SELECT s.id, s.name, cs.role FROM class_staff AS cs JOIN staff AS s ON s.id = cs.staff_id"
                  " WHERE cs.class_id = ? ORDER BY s.name");
  query.bind(1, class_id);
  std::vector<ClassStaffMember> members;
  while (query.step())
    members.push_back({query.integer(0), query.text(1), parse_class_role(query.text(2)).value()});
  return members;
}

// ---- The audit log

void SqliteStore::record(const AuditNote& note) {
  std::lock_guard lock(mutex_);
  insert_audit(note);
}

std::vector<AuditEntry> SqliteStore::audit(std::optional<std::int64_t> class_id,
                                           std::optional<std::int64_t> before, int limit) {
  std::lock_guard lock(mutex_);
  Statement query(db_,
                  "SELECT id, at, actor_kind, actor_id, actor_name, class_id, action, detail FROM audit"
                  " WHERE (? IS NULL OR class_id = ?) AND id < ? ORDER BY id DESC LIMIT ?");
  query.bind(1, class_id).bind(2, class_id);
  query.bind(3, before.value_or(std::numeric_limits<std::int64_t>::max())).bind(4, std::int64_t{limit});
  std::vector<AuditEntry> entries;
  while (query.step()) {
    entries.push_back({query.integer(0),
                       query.real(1),
                       {query.text(2), query.integer(3), query.text(4)},
                       query.optional_integer(5),
                       query.text(6),
                       query.text(7)});
  }
  return entries;
}

}  // namespace cudojo
