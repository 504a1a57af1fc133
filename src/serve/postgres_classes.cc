// PostgresStore's classes (serve/store_classes.h), with the answers SqliteStore gives, first part:
// classes, staff and their roles, and the audit log. Rosters, tokens, deadlines, drafts and the grid
// are in postgres_rosters.cc. Every change staff make is written in one transaction with its audit
// entry (postgres_internal::insert_audit).
#include <fmt/format.h>

#include <limits>

#include "serve/postgres_session.h"
#include "serve/postgres_store.h"
#include "serve/store_internal.h"

namespace cudojo {

using postgres_internal::insert_audit;
using postgres_internal::Params;
using postgres_internal::Rows;

namespace {

constexpr const char* kClassColumns =
    "c.id, c.name, c.invite_code, c.is_default, c.joining_open, c.sharing_open, c.created_at,"
    " (SELECT COUNT(*) FROM learners AS l WHERE l.class_id = c.id AND l.removed_at IS NULL)";

}  // namespace

// ---- Classes

std::vector<ClassInfo> PostgresStore::classes_where(Session& session, const std::string& condition,
                                                    const std::optional<std::string>& value) {
  Rows rows =
      session.run(fmt::format("SELECT {} FROM classes AS c WHERE {} ORDER BY c.id", kClassColumns, condition),
                  value ? Params().add(*value) : Params());
  std::vector<ClassInfo> found;
  for (int row = 0; row < rows.size(); ++row) {
    found.push_back({rows.integer(row, 0), rows.text(row, 1), rows.text(row, 2), rows.boolean(row, 3),
                     rows.boolean(row, 4), rows.boolean(row, 5), rows.real(row, 6), rows.integer(row, 7)});
  }
  return found;
}

ClassInfo PostgresStore::create_class(const std::string& name, const AuditNote& note) {
  const std::string code = store_internal::random_invite_code();
  return with_session([&](Session& session) {
    const std::int64_t id = session.transaction([&] {
      const std::int64_t made =
          session
              .run("INSERT INTO classes (name, invite_code, created_at) VALUES ($1, $2, " CUDOJO_NOW
                   ") RETURNING id",
                   Params().add(name).add(code))
              .integer(0, 0);
      AuditNote recorded = note;
      recorded.class_id = made;
      insert_audit(session, recorded);
      return made;
    });
    return classes_where(session, "c.id = $1", std::to_string(id)).at(0);
  });
}

std::optional<ClassInfo> PostgresStore::find_class(std::int64_t class_id) {
  return with_session([&](Session& session) -> std::optional<ClassInfo> {
    auto found = classes_where(session, "c.id = $1", std::to_string(class_id));
    if (found.empty()) return std::nullopt;
    return found.front();
  });
}

std::optional<ClassInfo> PostgresStore::find_class_by_invite(const std::string& code) {
  return with_session([&](Session& session) -> std::optional<ClassInfo> {
    auto found = classes_where(session, "c.invite_code = $1", code);
    if (found.empty()) return std::nullopt;
    return found.front();
  });
}

ClassInfo PostgresStore::default_class() {
  return with_session([&](Session& session) {
    auto found = classes_where(session, "c.is_default", std::nullopt);
    if (found.empty()) throw StoreError(StoreErrorCode::kInternal, "the default class is missing");
    return found.front();
  });
}

std::vector<ClassInfo> PostgresStore::list_classes() {
  return with_session([&](Session& session) { return classes_where(session, "true", std::nullopt); });
}

std::optional<ClassInfo> PostgresStore::change_class(std::int64_t class_id, const ClassChange& change,
                                                     const AuditNote& note) {
  const std::optional<std::string> code =
      change.new_invite_code ? std::optional<std::string>(store_internal::random_invite_code())
                             : std::nullopt;
  return with_session([&](Session& session) -> std::optional<ClassInfo> {
    const bool found = session.transaction([&] {
      const int changed = session
                              .run(
                                  "UPDATE classes SET name = COALESCE($1, name),"
                                  " joining_open = COALESCE($2::boolean, joining_open),"
                                  " invite_code = COALESCE($3, invite_code),"
                                  " sharing_open = COALESCE($5::boolean, sharing_open) WHERE id = $4",
                                  Params()
                                      .add(change.name)
                                      .add(change.joining_open)
                                      .add(code)
                                      .add(class_id)
                                      .add(change.sharing_open))
                              .affected();
      if (changed == 0) return false;
      // The class's row is locked by the update above, and create_share reads it FOR SHARE: a link
      // made at the same moment is either refused or committed first and stopped here.
      int stopped = 0;
      if (change.sharing_open == false) {
        stopped = session
                      .run("UPDATE job_shares SET revoked_at = " CUDOJO_NOW
                           ", stopped_by = $2 WHERE revoked_at IS NULL"
                           " AND learner_id IN (SELECT id FROM learners WHERE class_id = $1)",
                           Params().add(class_id).add(note.actor.name))
                      .affected();
      }
      insert_audit(session, store_internal::with_links_stopped(note, stopped));
      return true;
    });
    if (!found) return std::nullopt;
    return classes_where(session, "c.id = $1", std::to_string(class_id)).at(0);
  });
}

// ---- Staff

std::optional<StaffAccount> PostgresStore::staff_where(Session& session, const std::string& condition,
                                                       const std::string& value) {
  Rows rows = session.run(fmt::format("SELECT id, name, admin, created_at FROM staff WHERE {}", condition),
                          Params().add(value));
  if (rows.empty()) return std::nullopt;
  StaffAccount staff{rows.integer(0, 0), rows.text(0, 1), rows.boolean(0, 2), rows.real(0, 3), {}};
  Rows roles =
      session.run("SELECT class_id, role FROM class_staff WHERE staff_id = $1", Params().add(staff.id));
  for (int row = 0; row < roles.size(); ++row)
    staff.roles[roles.integer(row, 0)] = parse_class_role(roles.text(row, 1)).value();
  return staff;
}

IssuedStaff PostgresStore::create_staff(const std::string& requested, bool admin, const AuditNote& note) {
  const std::string name = store_internal::checked_learner_name(requested);
  IssuedStaff issued;
  issued.token = store_internal::random_token();
  return with_session([&](Session& session) {
    Rows inserted = session.transaction([&] {
      Rows made = session.run(
          "INSERT INTO staff (name, token_sha256, admin, created_at) VALUES ($1, $2, $3, " CUDOJO_NOW
          ") ON CONFLICT DO NOTHING RETURNING id, created_at",
          Params().add(name).add(token_digest(issued.token)).add(admin));
      if (made.empty())
        throw StoreError(StoreErrorCode::kNameTaken,
                         fmt::format("a member of staff is named '{}' already", name));
      insert_audit(session, note);
      return made;
    });
    issued.staff = {inserted.integer(0, 0), name, admin, inserted.real(0, 1), {}};
    return issued;
  });
}

std::optional<StaffAccount> PostgresStore::find_staff_by_token(const std::string& token) {
  if (token.empty() || token.size() > 200) return std::nullopt;
  return with_session(
      [&](Session& session) { return staff_where(session, "token_sha256 = $1", token_digest(token)); });
}

std::optional<StaffAccount> PostgresStore::find_staff(std::int64_t staff_id) {
  return with_session(
      [&](Session& session) { return staff_where(session, "id = $1", std::to_string(staff_id)); });
}

std::optional<StaffAccount> PostgresStore::find_staff_by_name(const std::string& name) {
  return with_session([&](Session& session) { return staff_where(session, "name = $1", name); });
}

std::vector<StaffAccount> PostgresStore::list_staff() {
  return with_session([&](Session& session) {
    std::vector<StaffAccount> accounts;
    Rows rows = session.run("SELECT id, name, admin, created_at FROM staff ORDER BY name COLLATE \"C\"");
    for (int row = 0; row < rows.size(); ++row)
      accounts.push_back(
          {rows.integer(row, 0), rows.text(row, 1), rows.boolean(row, 2), rows.real(row, 3), {}});
    Rows roles = session.run("SELECT staff_id, class_id, role FROM class_staff");
    for (int row = 0; row < roles.size(); ++row) {
      for (StaffAccount& account : accounts)
        if (account.id == roles.integer(row, 0))
          account.roles[roles.integer(row, 1)] = parse_class_role(roles.text(row, 2)).value();
    }
    return accounts;
  });
}

std::optional<std::string> PostgresStore::reset_staff_token(std::int64_t staff_id, const AuditNote& note) {
  const std::string token = store_internal::random_token();
  return with_session([&](Session& session) {
    return session.transaction([&]() -> std::optional<std::string> {
      if (session
              .run("UPDATE staff SET token_sha256 = $1 WHERE id = $2",
                   Params().add(token_digest(token)).add(staff_id))
              .affected() == 0)
        return std::nullopt;
      insert_audit(session, note);
      return token;
    });
  });
}

namespace {

// Throws StoreError kConflict when `staff_id` is the class's only instructor. The class's row is
// locked first, so two changes of its staff at once are judged one after the other.
void keep_an_instructor(PostgresStore::Session& session, std::int64_t class_id, std::int64_t staff_id) {
  session.run("SELECT 1 FROM classes WHERE id = $1 FOR UPDATE", Params().add(class_id));
  Rows others = session.run(
      "SELECT COUNT(*) FILTER (WHERE staff_id = $2), COUNT(*) FILTER (WHERE staff_id <> $2) FROM class_staff"
      " WHERE class_id = $1 AND role = 'instructor'",
      Params().add(class_id).add(staff_id));
  store_internal::check_instructor_kept(others.integer(0, 0) > 0, others.integer(0, 1));
}

}  // namespace

void PostgresStore::set_class_role(std::int64_t class_id, std::int64_t staff_id, ClassRole role,
                                   const AuditNote& note) {
  with_session([&](Session& session) {
    session.transaction([&] {
      if (role != ClassRole::kInstructor) keep_an_instructor(session, class_id, staff_id);
      session.run(
          "INSERT INTO class_staff (class_id, staff_id, role) VALUES ($1, $2, $3)"
          " ON CONFLICT (class_id, staff_id) DO UPDATE SET role = excluded.role",
          Params().add(class_id).add(staff_id).add(std::string(to_string(role))));
      insert_audit(session, note);
    });
  });
}

bool PostgresStore::remove_class_role(std::int64_t class_id, std::int64_t staff_id, const AuditNote& note) {
  return with_session([&](Session& session) {
    return session.transaction([&] {
      keep_an_instructor(session, class_id, staff_id);
      if (session
              .run("DELETE FROM class_staff WHERE class_id = $1 AND staff_id = $2",
                   Params().add(class_id).add(staff_id))
              .affected() == 0)
        return false;
      insert_audit(session, note);
      return true;
    });
  });
}

std::vector<ClassStaffMember> PostgresStore::class_staff(std::int64_t class_id) {
  return with_session([&](Session& session) {
    Rows rows = session.run(
        "SELECT s.id, s.name, cs.role FROM class_staff AS cs JOIN staff AS s ON s.id = cs.staff_id"
        " WHERE cs.class_id = $1 ORDER BY s.name COLLATE \"C\"",
        Params().add(class_id));
    std::vector<ClassStaffMember> members;
    for (int row = 0; row < rows.size(); ++row)
      members.push_back(
          {rows.integer(row, 0), rows.text(row, 1), parse_class_role(rows.text(row, 2)).value()});
    return members;
  });
}

// ---- The audit log

void PostgresStore::record(const AuditNote& note) {
  with_session([&](Session& session) { insert_audit(session, note); });
}

std::vector<AuditEntry> PostgresStore::audit(std::optional<std::int64_t> class_id,
                                             std::optional<std::int64_t> before, int limit) {
  return with_session([&](Session& session) {
    Rows rows = session.run(
        "SELECT id, at, actor_kind, actor_id, actor_name, class_id, action, detail FROM audit"
        " WHERE ($1::bigint IS NULL OR class_id = $1) AND id < $2 ORDER BY id DESC LIMIT $3",
        Params()
            .add(class_id)
            .add(before.value_or(std::numeric_limits<std::int64_t>::max()))
            .add(std::int64_t{limit}));
    std::vector<AuditEntry> entries;
    for (int row = 0; row < rows.size(); ++row) {
      entries.push_back({rows.integer(row, 0),
                         rows.real(row, 1),
                         {rows.text(row, 2), rows.integer(row, 3), rows.text(row, 4)},
                         rows.optional_integer(row, 5),
                         rows.text(row, 6),
                         rows.text(row, 7)});
    }
    return entries;
  });
}

}  // namespace cudojo
