// Class and staff routes: the classes a member of staff holds a role in, a class's settings and its
// staff, the audit logs, and (administrators only) classes and staff accounts themselves. Who may call
// each is said in api.h and in register_routes; every change is written with its audit entry.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "serve/api.h"
#include "serve/api_internal.h"
#include "serve/store_internal.h"

namespace cudojo {

using api_internal::parse_id;
using api_internal::send_error;
using api_internal::send_json;
using nlohmann::json;

namespace {

json class_json(const ClassInfo& class_info) {
  return {{"id", class_info.id},
          {"name", class_info.name},
          {"invite_code", class_info.invite_code},
          {"is_default", class_info.is_default},
          {"joining_open", class_info.joining_open},
          {"sharing_open", class_info.sharing_open},
          {"created_at", class_info.created_at},
          {"learners", class_info.learners}};
}

json staff_json(const StaffAccount& staff) {
  json roles = json::object();
  for (const auto& [class_id, role] : staff.roles) roles[std::to_string(class_id)] = to_string(role);
  return {{"id", staff.id},
          {"name", staff.name},
          {"admin", staff.admin},
          {"created_at", staff.created_at},
          {"roles", roles}};
}

json audit_json(const std::vector<AuditEntry>& entries, int limit) {
  json list = json::array();
  for (const AuditEntry& entry : entries) {
    if (static_cast<int>(list.size()) == limit) break;
    list.push_back(
        {{"id", entry.id},
         {"at", entry.at},
         {"actor", {{"kind", entry.actor.kind}, {"id", entry.actor.id}, {"name", entry.actor.name}}},
         {"class_id", entry.class_id ? json(*entry.class_id) : json(nullptr)},
         {"action", entry.action},
         {"detail", entry.detail}});
  }
  const bool more = static_cast<int>(entries.size()) > limit;
  return {{"entries", list}, {"next_before", more ? json(entries[limit - 1].id) : json(nullptr)}};
}

// The body as a JSON object whose keys are all among `allowed`; nullopt after answering 400.
std::optional<json> object_with(const http::Request& request, http::Response& response,
                                const std::set<std::string>& allowed, const char* shape) {
  json body = json::parse(request.body, nullptr, false);
  bool ok = !body.is_discarded() && body.is_object();
  if (ok) {
    for (const auto& item : body.items()) ok = ok && allowed.count(item.key()) > 0;
  }
  if (!ok) {
    send_error(response, 400, fmt::format("send {}", shape));
    return std::nullopt;
  }
  return body;
}

// The audit page a request asks for (?before=ID&limit=N); nullopt after answering 400.
std::optional<std::pair<std::optional<std::int64_t>, int>> audit_page(const http::Request& request,
                                                                      http::Response& response,
                                                                      const ServeLimits& limits) {
  int limit = limits.audit_default_limit;
  if (const auto asked = request.param("limit")) {
    const auto value = parse_id(*asked);
    if (!value) {
      send_error(response, 400, fmt::format("limit is a whole number from 1 to {}", limits.audit_limit));
      return std::nullopt;
    }
    limit = static_cast<int>(std::min<std::int64_t>(*value, limits.audit_limit));
  }
  std::optional<std::int64_t> before;
  if (const auto cursor = request.param("before")) {
    before = parse_id(*cursor);
    if (!before) {
      send_error(response, 400, "before is an entry id, as next_before gave it");
      return std::nullopt;
    }
  }
  return std::make_pair(before, limit);
}

// Gives the member of staff named `name` `role` in the class, answering for it: a name without an
// account gets a new one (its token shown once, 201); an account that already holds a role in the class
// gets this one instead (200); any other existing account only when `attach_existing` says so (an
// administrator's deliberate choice, 200). Otherwise 409 and nullopt: a name that an instructor typed
// must never hand them, or the class, someone else's account.
std::optional<json> grant_role(ClassStore& classes, const ClassInfo& class_info, const std::string& name,
                               ClassRole role, bool attach_existing, const Actor& actor,
                               http::Response& response) {
  auto account = classes.find_staff_by_name(name);
  json shown = {{"token", nullptr}, {"role", to_string(role)}};
  if (account && !account->roles.contains(class_info.id) && !attach_existing) {
    send_error(
        response, 409,
        fmt::format("a member of staff is named '{}' already: choose another name for a new account, or "
                    "have an administrator add that account to the class (\"existing\": true)",
                    name));
    return std::nullopt;
  }
  if (!account) {
    IssuedStaff issued = classes.create_staff(
        name, false, {actor, class_info.id, "staff.create", fmt::format("created staff account '{}'", name)});
    account = issued.staff;
    shown["token"] = issued.token;
  }
  classes.set_class_role(
      class_info.id, account->id, role,
      {actor, class_info.id, "class.staff_add",
       fmt::format("made {} {} of the class", account->name,
                   role == ClassRole::kInstructor ? "an instructor" : "a teaching assistant")});
  shown["id"] = account->id;
  shown["name"] = account->name;
  response.set_header("Cache-Control", "no-store");
  return shown;
}

// What a member of staff is in a class, as the page shows it: "admin" for an administrator (who may
// do everything there, whatever role they also hold), else their role there.
std::string role_in(const StaffAccount& staff, std::int64_t class_id) {
  const auto role = staff.roles.find(class_id);
  return staff.admin || role == staff.roles.end() ? "admin" : std::string(to_string(role->second));
}

}  // namespace

void Api::list_classes(const Request& request, Response& response) {
  const auto staff = staff_or_refuse(request, response, false);
  if (!staff) return;
  json list = json::array();
  for (const ClassInfo& class_info : store_.classes().list_classes()) {
    if (class_access(*staff, class_info.id) == ClassAccess::kNone) continue;
    json shown = class_json(class_info);
    shown["role"] = role_in(*staff, class_info.id);
    list.push_back(std::move(shown));
  }
  send_json(response, 200, {{"classes", list}});
}

void Api::create_class(const Request& request, Response& response) {
  const auto admin = staff_or_refuse(request, response, true);
  if (!admin) return;
  const char* shape =
      "{\"name\": \"GPU Programming 2027\"} and, optionally, \"instructor\": \"<name>\" (with \"existing\": "
      "true to "
      "make an existing staff account the instructor)";
  const auto body = object_with(request, response, {"name", "instructor", "existing"}, shape);
  if (!body) return;
  if (!body->contains("name") || !(*body)["name"].is_string() ||
      (body->contains("instructor") && !(*body)["instructor"].is_string()) ||
      (body->contains("existing") && !(*body)["existing"].is_boolean()))
    return send_error(response, 400, fmt::format("send {}", shape));
  const std::string name = (*body)["name"].get<std::string>();
  if (auto problem = class_name_problem(name)) return send_error(response, 400, *problem);
  // The instructor is checked before anything is made, so a refusal leaves no class behind.
  std::optional<std::string> instructor;
  if (body->contains("instructor")) {
    instructor = store_internal::checked_name((*body)["instructor"].get<std::string>());
    if (!instructor) return send_error(response, 400, store_internal::kNameRule);
    if (!body->value("existing", false) && store_.classes().find_staff_by_name(*instructor)) {
      return send_error(
          response, 409,
          fmt::format("a member of staff is named '{}' already: send \"existing\": true to make that "
                      "account the class's instructor, or choose another name for a new account",
                      *instructor));
    }
  }
  if (!store_usable(request, response)) return;
  try {
    ClassStore& classes = store_.classes();
    const Actor actor = staff_actor(*admin, std::nullopt);
    const ClassInfo made = classes.create_class(
        name, {actor, std::nullopt, "class.create", fmt::format("created class '{}'", name)});
    json answer = {{"class", class_json(made)}};
    if (instructor) {
      const auto granted =
          grant_role(classes, made, *instructor, ClassRole::kInstructor, true, actor, response);
      answer["instructor"] = *granted;
    }
    send_json(response, 201, answer);
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

void Api::get_class(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kRead);
  if (!found) return;
  ClassStore& classes = store_.classes();
  json shown = class_json(found->class_info);
  json staff = json::array();
  for (const ClassStaffMember& member : classes.class_staff(found->class_info.id))
    staff.push_back({{"id", member.id}, {"name", member.name}, {"role", to_string(member.role)}});
  json deadlines = json::object();
  for (const Deadline& deadline : classes.deadlines(found->class_info.id))
    deadlines[deadline.stage] = {{"due_at", deadline.due_at},
                                 {"hide_leaderboard", deadline.hide_leaderboard}};
  shown["staff"] = staff;
  shown["deadlines"] = deadlines;
  shown["your_role"] = role_in(found->staff, found->class_info.id);
  send_json(response, 200, shown);
}

void Api::change_class(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kChange);
  if (!found) return;
  const auto body =
      object_with(request, response, {"name", "joining_open", "sharing_open", "new_invite_code"},
                  "any of {\"name\": \"...\", \"joining_open\": true, \"sharing_open\": true, "
                  "\"new_invite_code\": true}");
  if (!body) return;
  ClassChange change;
  std::vector<std::string> said;
  if (body->contains("name")) {
    if (!(*body)["name"].is_string()) return send_error(response, 400, "\"name\" is a string");
    change.name = (*body)["name"].get<std::string>();
    if (auto problem = class_name_problem(*change.name)) return send_error(response, 400, *problem);
    said.push_back(fmt::format("renamed it '{}'", *change.name));
  }
  if (body->contains("joining_open")) {
    if (!(*body)["joining_open"].is_boolean())
      return send_error(response, 400, "\"joining_open\" is true or false");
    change.joining_open = (*body)["joining_open"].get<bool>();
    said.push_back(*change.joining_open ? "opened joining by invite code" : "closed joining by invite code");
  }
  if (body->contains("sharing_open")) {
    if (!(*body)["sharing_open"].is_boolean())
      return send_error(response, 400, "\"sharing_open\" is true or false");
    change.sharing_open = (*body)["sharing_open"].get<bool>();
    if (*change.sharing_open == found->class_info.sharing_open)
      said.push_back(*change.sharing_open ? "left links to runs on (they were on)"
                                          : "left links to runs off (they were off)");
    else
      said.push_back(*change.sharing_open ? "turned links to runs on" : "turned links to runs off");
  }
  if (body->contains("new_invite_code")) {
    if (!(*body)["new_invite_code"].is_boolean())
      return send_error(response, 400, "\"new_invite_code\" is true or false");
    change.new_invite_code = (*body)["new_invite_code"].get<bool>();
    if (change.new_invite_code) said.push_back("gave it a new invite code");
  }
  if (!store_usable(request, response)) return;
  try {
    const auto changed = store_.classes().change_class(
        found->class_info.id, change,
        {found->actor(), found->class_info.id, "class.change",
         said.empty() ? "changed nothing" : fmt::format("{}", fmt::join(said, "; "))});
    if (!changed) return send_error(response, 404, "no such class among yours");
    send_json(response, 200, class_json(*changed));
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

void Api::add_class_staff(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kChange);
  if (!found) return;
  const char* shape =
      "{\"name\": \"...\", \"role\": \"ta\" or \"instructor\"} (an administrator may add \"existing\": true "
      "to "
      "give an existing staff account the role)";
  const auto body = object_with(request, response, {"name", "role", "existing"}, shape);
  if (!body) return;
  const auto role = body->contains("role") && (*body)["role"].is_string()
                        ? parse_class_role((*body)["role"].get<std::string>())
                        : std::nullopt;
  if (!body->contains("name") || !(*body)["name"].is_string() || !role ||
      (body->contains("existing") && !(*body)["existing"].is_boolean()))
    return send_error(response, 400, fmt::format("send {}", shape));
  const bool attach_existing = body->value("existing", false);
  if (attach_existing && !found->staff.admin)
    return send_error(response, 403,
                      "only an administrator gives an existing staff account a role in a class");
  if (!store_usable(request, response)) return;
  try {
    const auto granted = grant_role(store_.classes(), found->class_info, (*body)["name"].get<std::string>(),
                                    *role, attach_existing, found->actor(), response);
    if (!granted) return;
    send_json(response, (*granted)["token"].is_null() ? 200 : 201, *granted);
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

void Api::remove_class_staff(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kChange);
  if (!found) return;
  const auto staff_id = parse_id(request.match(2));
  ClassStore& classes = store_.classes();
  const auto members = classes.class_staff(found->class_info.id);
  const auto member = std::find_if(members.begin(), members.end(),
                                   [&](const ClassStaffMember& m) { return staff_id && m.id == *staff_id; });
  if (member == members.end()) return send_error(response, 404, "no such member of this class's staff");
  // A class keeps an instructor: the store refuses the last one's removal (kConflict, 409) in the
  // removal's own transaction, so two removals at once cannot both pass.
  if (!store_usable(request, response)) return;
  try {
    classes.remove_class_role(found->class_info.id, member->id,
                              {found->actor(), found->class_info.id, "class.staff_remove",
                               fmt::format("removed {} from the class's staff", member->name)});
    send_json(response, 200, {{"removed", member->id}});
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

void Api::class_audit(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kRead);
  if (!found) return;
  const auto page = audit_page(request, response, limits_);
  if (!page) return;
  send_json(
      response, 200,
      audit_json(store_.classes().audit(found->class_info.id, page->first, page->second + 1), page->second));
}

void Api::server_audit(const Request& request, Response& response) {
  if (!staff_or_refuse(request, response, true)) return;
  const auto page = audit_page(request, response, limits_);
  if (!page) return;
  send_json(response, 200,
            audit_json(store_.classes().audit(std::nullopt, page->first, page->second + 1), page->second));
}

void Api::list_staff(const Request& request, Response& response) {
  if (!staff_or_refuse(request, response, true)) return;
  json list = json::array();
  for (const StaffAccount& staff : store_.classes().list_staff()) list.push_back(staff_json(staff));
  send_json(response, 200, {{"staff", list}});
}

void Api::create_staff(const Request& request, Response& response) {
  const auto admin = staff_or_refuse(request, response, true);
  if (!admin) return;
  const auto body = object_with(request, response, {"name", "admin"},
                                "{\"name\": \"...\"} and, optionally, \"admin\": true");
  if (!body) return;
  if (!body->contains("name") || !(*body)["name"].is_string() ||
      (body->contains("admin") && !(*body)["admin"].is_boolean()))
    return send_error(response, 400, "send {\"name\": \"...\"} and, optionally, \"admin\": true");
  const bool make_admin = body->value("admin", false);
  const std::string name = (*body)["name"].get<std::string>();
  if (!store_usable(request, response)) return;
  try {
    IssuedStaff issued = store_.classes().create_staff(
        name, make_admin,
        {staff_actor(*admin, std::nullopt), std::nullopt, "staff.create",
         fmt::format("created {} account '{}'", make_admin ? "administrator" : "staff", name)});
    json shown = staff_json(issued.staff);
    shown["token"] = issued.token;
    response.set_header("Cache-Control", "no-store");
    send_json(response, 201, shown);
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

void Api::reset_staff_token(const Request& request, Response& response) {
  const auto admin = staff_or_refuse(request, response, true);
  if (!admin) return;
  const auto id = parse_id(request.match(1));
  const auto account = id ? store_.classes().find_staff(*id) : std::nullopt;
  if (!account) return send_error(response, 404, "no such member of staff");
  if (!store_usable(request, response)) return;
  try {
    const auto token = store_.classes().reset_staff_token(
        account->id, {staff_actor(*admin, std::nullopt), std::nullopt, "staff.token_reset",
                      fmt::format("gave {} a new token", account->name)});
    if (!token) return send_error(response, 404, "no such member of staff");
    response.set_header("Cache-Control", "no-store");
    send_json(response, 200, {{"id", account->id}, {"name", account->name}, {"token", *token}});
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

}  // namespace cudojo
