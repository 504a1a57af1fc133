// Classes and the people who run them, as the Store keeps them: a class (its name, its invite code,
// whether it takes new learners), the staff (administrators of the whole server; instructors and
// teaching assistants of a class), a class's roster of learners, its deadlines, each learner's
// drafts, and the audit log of what staff did. Both stores implement ClassStore (sqlite_classes.cc,
// postgres_classes.cc); serve/classroom.h checks what people type and builds the grid and exports
// over it; the API and `cudojo admin` / `cudojo class` are its callers.
//
// Every change a member of staff makes is written together with its audit entry (an AuditNote
// passed to the call), in one transaction: there is no action without its record, nor the reverse.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudojo {

// The name the default class is made with (every server has one; an administrator may rename it). A
// macro too, for the PostgreSQL migration that makes it.
#define CUDOJO_DEFAULT_CLASS_NAME "Open sign-up"
inline constexpr const char* kDefaultClassName = CUDOJO_DEFAULT_CLASS_NAME;

// A member of staff's role in one class. An instructor changes the class (roster, deadlines, tokens,
// its staff); a teaching assistant reads everything in it (progress, every learner's work, the
// audit log) and changes nothing.
enum class ClassRole { kInstructor, kAssistant };
std::string_view to_string(ClassRole role);  // "instructor", "ta"
std::optional<ClassRole> parse_class_role(std::string_view word);

struct ClassInfo {
  std::int64_t id = 0;
  std::string name;
  std::string invite_code;   // what a learner types to join (serve/classroom.h: normalize_invite_code)
  bool is_default = false;   // the class open sign-up puts learners in; made with the schema, never removed
  bool joining_open = true;  // false: the invite code is refused (the roster's own tokens still work)
  bool sharing_open = true;  // false: its learners' links to jobs are stopped and no new one is made
  double created_at = 0;
  std::int64_t learners = 0;  // its learners, removed ones not counted
};

struct ClassChange {
  std::optional<std::string> name;
  std::optional<bool> joining_open;
  std::optional<bool> sharing_open;  // false also stops every live link of the class's learners
  bool new_invite_code = false;      // the old code stops working at once
};

struct StaffAccount {
  std::int64_t id = 0;
  std::string name;
  bool admin = false;  // every class, every action, and the staff accounts themselves
  double created_at = 0;
  std::map<std::int64_t, ClassRole> roles;  // class id -> role there
};

struct IssuedStaff {
  StaffAccount staff;
  std::string token;  // shown once
};

struct ClassStaffMember {
  std::int64_t id = 0;
  std::string name;
  ClassRole role = ClassRole::kAssistant;
};

// A stage's deadline in one class. Jobs submitted after due_at are still judged, and marked late.
struct Deadline {
  std::string stage;
  double due_at = 0;              // seconds since the epoch
  bool hide_leaderboard = false;  // the stage's leaderboard stays hidden from learners until due_at
};

// A learner as their class's staff see them.
struct RosterEntry {
  std::int64_t id = 0;
  std::string name;
  std::optional<std::string> student_id;
  std::optional<std::string> email;
  double created_at = 0;
  // When the learner's token was first used (nullopt: never, as for a roster row whose token has
  // not been handed out or used yet).
  std::optional<double> signed_in_at;
  std::optional<double> removed_at;  // removed learners cannot sign in; their work is kept
};

// One row of a roster import, already checked (serve/classroom.h). A row whose student id the class
// has is an update of that learner.
struct RosterRow {
  std::string student_id;
  std::string name;
  std::string email;  // empty: none
};

struct RosterImportCounts {
  int created = 0;
  int updated = 0;  // name or email changed
  int unchanged = 0;
};

// Set fields change; an empty student_id or email clears it.
struct LearnerChange {
  std::optional<std::string> name;
  std::optional<std::string> student_id;
  std::optional<std::string> email;
  std::optional<bool> removed;
};

struct IssuedToken {
  RosterEntry learner;
  std::string token;  // shown once
};

// A learner's unsent work on one stage in one language, kept on the server so that it follows the
// learner to another computer and never shows to the next person at a shared one.
struct Draft {
  std::string stage;
  std::string language;
  std::string source;
  double updated_at = 0;
};

// One learner's standing on one stage, from their finished jobs: what a cell of the class's grid
// shows before deadlines are applied (serve/classroom.h adds them).
struct GridCell {
  std::int64_t learner_id = 0;
  std::string stage;
  std::int64_t attempts = 0;  // finished jobs
  bool accepted = false;
  std::optional<double> best_ratio;         // the lowest gate ratio of an accepted, timed job
  std::optional<double> first_accepted_at;  // when the earliest accepted job was submitted
  double last_submitted_at = 0;             // the newest finished job's submission time
  std::int64_t late_jobs = 0;               // finished jobs submitted after the stage's deadline in the class
};

// Who did something: an administrator, an instructor or teaching assistant (by their account), or
// the server's own console (`cudojo admin`, `cudojo class` on the server machine; id 0).
struct Actor {
  std::string kind;  // "admin", "instructor", "ta", "console"
  std::int64_t id = 0;
  std::string name;
};

// What an audit entry records of an action: `detail` is a short sentence for people, never parsed.
struct AuditNote {
  Actor actor;
  std::optional<std::int64_t> class_id;
  std::string action;  // "roster.import", "learner.token_reset", ... (docs/openapi.yaml lists them)
  std::string detail;
};

struct AuditEntry {
  std::int64_t id = 0;
  double at = 0;
  Actor actor;
  std::optional<std::int64_t> class_id;
  std::string action;
  std::string detail;
};

class ClassStore {
 public:
  ClassStore() = default;
  virtual ~ClassStore() = default;
  ClassStore(const ClassStore&) = delete;
  ClassStore& operator=(const ClassStore&) = delete;

  // --- Classes. A new class gets a fresh invite code.
  virtual ClassInfo create_class(const std::string& name, const AuditNote& note) = 0;
  virtual std::optional<ClassInfo> find_class(std::int64_t class_id) = 0;
  // `code` as normalize_invite_code gives it.
  virtual std::optional<ClassInfo> find_class_by_invite(const std::string& code) = 0;
  virtual ClassInfo default_class() = 0;
  virtual std::vector<ClassInfo> list_classes() = 0;  // by id
  virtual std::optional<ClassInfo> change_class(std::int64_t class_id, const ClassChange& change,
                                                const AuditNote& note) = 0;

  // --- Staff. Names are unique among staff (StoreError kNameTaken).
  virtual IssuedStaff create_staff(const std::string& name, bool admin, const AuditNote& note) = 0;
  virtual std::optional<StaffAccount> find_staff_by_token(const std::string& token) = 0;
  virtual std::optional<StaffAccount> find_staff(std::int64_t staff_id) = 0;
  virtual std::optional<StaffAccount> find_staff_by_name(const std::string& name) = 0;
  virtual std::vector<StaffAccount> list_staff() = 0;
  // The new token, nullopt for an unknown account; the old token stops working at once.
  virtual std::optional<std::string> reset_staff_token(std::int64_t staff_id, const AuditNote& note) = 0;
  // Gives the account this role in the class (replacing another role it had there). A class that has an
  // instructor keeps one: demoting or removing its only instructor throws StoreError kConflict, checked
  // in the change's own transaction so that two changes at once cannot both pass it.
  virtual void set_class_role(std::int64_t class_id, std::int64_t staff_id, ClassRole role,
                              const AuditNote& note) = 0;
  virtual bool remove_class_role(std::int64_t class_id, std::int64_t staff_id, const AuditNote& note) = 0;
  virtual std::vector<ClassStaffMember> class_staff(std::int64_t class_id) = 0;  // by name

  // --- A class's learners (removed ones included, marked). Names are unique among the class's learners
  // who are not removed, student ids among all of them (StoreError kNameTaken).
  virtual std::vector<RosterEntry> roster(std::int64_t class_id) = 0;  // by name
  virtual std::optional<RosterEntry> roster_entry(std::int64_t class_id, std::int64_t learner_id) = 0;
  // All rows or none: a row whose name another learner of the class has throws StoreError kNameTaken
  // naming it; one whose student id is a removed learner's throws kConflict (restoring is an
  // instructor's deliberate act, never a side effect of an import); a class that would hold more than
  // `max_class_learners` (0: no cap) throws kConflict. Then nothing is written. Learners made here get
  // a token nobody knows until issue_tokens hands one out.
  virtual RosterImportCounts import_roster(std::int64_t class_id, const std::vector<RosterRow>& rows,
                                           std::int64_t max_class_learners, const AuditNote& note) = 0;
  // The learner as changed; nullopt when the class has no such learner.
  virtual std::optional<RosterEntry> change_learner(std::int64_t class_id, std::int64_t learner_id,
                                                    const LearnerChange& change, const AuditNote& note) = 0;
  // A new token for a learner of the class (the old one stops working at once, and with it every
  // stream ticket issued under it); nullopt when the class has no such learner or they are removed.
  virtual std::optional<std::string> reset_learner_token(std::int64_t class_id, std::int64_t learner_id,
                                                         const AuditNote& note) = 0;
  // New tokens for the class's learners who are not removed and, with `only_never_signed_in`, have
  // never used one: a pre-made roster's tokens, to hand out. By name.
  virtual std::vector<IssuedToken> issue_tokens(std::int64_t class_id, bool only_never_signed_in,
                                                const AuditNote& note) = 0;

  // --- Deadlines, by stage.
  virtual std::vector<Deadline> deadlines(std::int64_t class_id) = 0;
  virtual void set_deadline(std::int64_t class_id, const Deadline& deadline, const AuditNote& note) = 0;
  virtual bool clear_deadline(std::int64_t class_id, const std::string& stage, const AuditNote& note) = 0;

  // --- A learner's drafts (the caller checks stage, language and size).
  virtual std::vector<Draft> drafts(std::int64_t learner_id, const std::optional<std::string>& stage) = 0;
  // Stores the draft and returns when it was stored.
  virtual double save_draft(std::int64_t learner_id, const Draft& draft) = 0;
  virtual bool delete_draft(std::int64_t learner_id, const std::string& stage,
                            const std::string& language) = 0;

  // --- Progress: one cell per (learner, stage) with a finished job, for the class's learners who are
  // not removed; in a fixed number of queries however large the class.
  virtual std::vector<GridCell> class_grid(std::int64_t class_id) = 0;

  // --- The audit log. record() is for an action that writes nothing else (an export).
  virtual void record(const AuditNote& note) = 0;
  // Newest first; one class's entries, or everyone's; ids below `before` when given; at most `limit`.
  virtual std::vector<AuditEntry> audit(std::optional<std::int64_t> class_id,
                                        std::optional<std::int64_t> before, int limit) = 0;
};

}  // namespace cudojo
