// Every route of a class's side, tried as every kind of caller: nobody, a token nobody holds, a
// learner of the class, a learner of another class, the class's teaching assistant, another class's
// instructor, the class's instructor and an administrator. A route answers what api.h says of it:
// 401 without a known token, 403 for the wrong kind of account, 404 for a class the caller has no
// role in, in the same words as for a class that does not exist, so nobody learns which do.
#include "api_class_support.h"

namespace cudojo::api_testing {
namespace {

struct Callers {
  std::string nobody, stranger = "not-a-token", learner_a, learner_b, assistant_a, instructor_b, instructor_a,
                      admin;
};

class ClassRoles : public ClassApi {
 protected:
  void SetUp() override {
    ClassApi::SetUp();
    if (IsSkipped()) return;
    who_.admin = make_admin();
    start({"--workers", "0"});
    const MadeClass a = make_class(who_.admin, "Class A", "Ia");
    const MadeClass b = make_class(who_.admin, "Class B", "Ib");
    class_a_ = a.id;
    class_b_ = b.id;
    who_.instructor_a = a.instructor;
    who_.instructor_b = b.instructor;
    const Answer assistant =
        ask("POST", class_path(a.id, "/staff"), a.instructor, json{{"name", "Ta"}, {"role", "ta"}});
    ASSERT_EQ(assistant.status, 201) << assistant.text;
    who_.assistant_a = assistant.body["token"].get<std::string>();
    who_.learner_a = join(a.invite, "la");
    who_.learner_b = join(b.invite, "lb");
    learner_a_id_ = learner_id(who_.learner_a);
    const Answer job =
        ask("POST", "/api/jobs", who_.learner_a, json{{"stage", "reduction/2"}, {"source", "x"}});
    ASSERT_EQ(job.status, 202) << job.text;
    job_a_ = job.body["id"].get<std::int64_t>();
  }

  // Each caller's answer to one request, in the order of `Callers`.
  std::vector<int> statuses(const std::string& method, const std::string& path, const std::string& body,
                            const std::vector<const std::string*>& tokens) {
    std::vector<int> seen;
    for (const std::string* token : tokens) seen.push_back(ask(method, path, *token, body).status);
    return seen;
  }
  // Every caller but the ones allowed to change the class.
  std::vector<const std::string*> refused_callers() {
    return {&who_.nobody,    &who_.stranger,    &who_.learner_a,
            &who_.learner_b, &who_.assistant_a, &who_.instructor_b};
  }

  Callers who_;
  std::int64_t class_a_ = 0, class_b_ = 0, learner_a_id_ = 0, job_a_ = 0;
};

TEST_F(ClassRoles, ReadingAClassIsForItsStaffAndAdministrators) {
  const std::string learner = "/learners/" + std::to_string(learner_a_id_);
  for (const std::string& rest :
       std::vector<std::string>{"", "/grid", "/export", "/export?format=json", "/audit", "/learners",
                                "/shares", learner + "/jobs", "/jobs/" + std::to_string(job_a_)}) {
    const std::string path = class_path(class_a_, rest);
    EXPECT_EQ(statuses("GET", path, "",
                       {&who_.nobody, &who_.stranger, &who_.learner_a, &who_.learner_b, &who_.assistant_a,
                        &who_.instructor_b, &who_.instructor_a, &who_.admin}),
              (std::vector<int>{401, 401, 403, 403, 200, 404, 200, 200}))
        << path;
  }
  // A class that does not exist answers another class's instructor exactly as one they have no role in.
  const Answer theirs = ask("GET", class_path(class_a_, "/grid"), who_.instructor_b);
  const Answer none = ask("GET", class_path(999, "/grid"), who_.instructor_b);
  EXPECT_EQ(theirs.status, none.status);
  EXPECT_EQ(theirs.text, none.text);
  // Nor does a class's own staff reach a learner or a job of another class through it.
  EXPECT_EQ(ask("GET", class_path(class_b_, learner + "/jobs"), who_.instructor_b).status, 404);
  EXPECT_EQ(ask("GET", class_path(class_b_, "/jobs/" + std::to_string(job_a_)), who_.instructor_b).status,
            404);
  // The staff see the learner's work, source and all.
  const Answer job = ask("GET", class_path(class_a_, "/jobs/" + std::to_string(job_a_)), who_.assistant_a);
  EXPECT_EQ(job.body["source"], "x");
  EXPECT_EQ(job.body["learner"]["name"], "la");
  EXPECT_EQ(job.body["position"], 0);  // first in the queue, as the learner's own view says
  EXPECT_EQ(job.body["position"],
            ask("GET", "/api/jobs/" + std::to_string(job_a_), who_.learner_a).body["position"]);
}

TEST_F(ClassRoles, ChangingAClassIsForItsInstructorsAndAdministrators) {
  const std::string learner = class_path(class_a_, "/learners/" + std::to_string(learner_a_id_));
  struct Change {
    std::string method, path, body;
    int status;
  };
  const std::vector<Change> changes = {
      {"PATCH", class_path(class_a_), R"({"joining_open": true})", 200},
      {"POST", class_path(class_a_, "/roster"), R"({"csv": "s9,Nine\n"})", 200},
      {"PATCH", learner, R"({"email": "la@example.edu"})", 200},
      {"PUT", class_path(class_a_, "/deadlines/reduction/3"), R"({"due_at": "2030-01-01T00:00:00Z"})", 200},
      {"DELETE", class_path(class_a_, "/deadlines/reduction/3"), "", 200},
      {"POST", class_path(class_a_, "/staff"), R"({"name": "Ta", "role": "ta"})", 200},
      {"POST", class_path(class_a_, "/tokens"), R"({"learners": "not_signed_in"})", 200},
      {"PATCH", class_path(class_a_), R"({"sharing_open": true})", 200},
      {"DELETE", class_path(class_a_, "/jobs/" + std::to_string(job_a_) + "/share"), "", 204},
      // Last: the learner's token changes.
      {"POST", learner + "/token", "{}", 200},
  };
  for (const Change& change : changes) {
    for (const std::string* token : refused_callers()) {
      const int expected = token == &who_.nobody || token == &who_.stranger       ? 401
                           : token == &who_.learner_a || token == &who_.learner_b ? 403
                           : token == &who_.assistant_a                           ? 403
                                                                                  : 404;
      EXPECT_EQ(ask(change.method, change.path, *token, change.body).status, expected)
          << change.method << " " << change.path << " as caller " << token - &who_.nobody;
    }
    EXPECT_EQ(ask(change.method, change.path, who_.instructor_a, change.body).status, change.status)
        << change.method << " " << change.path;
    EXPECT_EQ(ask(change.method, change.path, who_.admin, change.body).status, change.status)
        << change.method << " " << change.path << " as the administrator";
  }
  // Removing a member of staff: not by the assistant, nor another class's instructor.
  const Answer members = ask("GET", class_path(class_a_), who_.instructor_a);
  std::int64_t assistant_id = 0;
  for (const auto& member : members.body["staff"])
    if (member["name"] == "Ta") assistant_id = member["id"].get<std::int64_t>();
  const std::string remove = class_path(class_a_, "/staff/" + std::to_string(assistant_id));
  EXPECT_EQ(ask("DELETE", remove, who_.assistant_a).status, 403);
  EXPECT_EQ(ask("DELETE", remove, who_.instructor_b).status, 404);
  EXPECT_EQ(ask("DELETE", remove, who_.instructor_a).status, 200);
  EXPECT_EQ(ask("GET", class_path(class_a_, "/grid"), who_.assistant_a).status, 404);  // no role left
}

TEST_F(ClassRoles, StaffAccountsAndTheServersAuditAreForAdministrators) {
  for (const auto& [method, path, body] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"GET", "/api/staff", ""},
           {"POST", "/api/staff", R"({"name": "Someone"})"},
           {"POST", "/api/staff/1/token", "{}"},
           {"GET", "/api/audit", ""},
           {"POST", "/api/classes", R"({"name": "Class C"})"}}) {
    EXPECT_EQ(
        statuses(method, path, body,
                 {&who_.nobody, &who_.stranger, &who_.learner_a, &who_.assistant_a, &who_.instructor_a}),
        (std::vector<int>{401, 401, 403, 403, 403}))
        << method << " " << path;
  }
  const Answer made = ask("POST", "/api/staff", who_.admin, json{{"name", "Someone"}});
  EXPECT_EQ(made.status, 201) << made.text;
  EXPECT_EQ(made.body["token"].get<std::string>().size(), 64u);
  EXPECT_EQ(ask("GET", "/api/staff", who_.admin).status, 200);
  EXPECT_EQ(ask("GET", "/api/audit", who_.admin).status, 200);
  EXPECT_EQ(ask("POST", "/api/classes", who_.admin, json{{"name", "Class C"}}).status, 201);
}

TEST_F(ClassRoles, EachKindOfAccountSeesOnlyWhatIsItsOwn) {
  // The class list: a member of staff's own classes; learners have none to list.
  EXPECT_EQ(statuses("GET", "/api/classes", "", {&who_.nobody, &who_.stranger, &who_.learner_a}),
            (std::vector<int>{401, 401, 403}));
  const Answer theirs = ask("GET", "/api/classes", who_.instructor_b);
  ASSERT_EQ(theirs.body["classes"].size(), 1u);
  EXPECT_EQ(theirs.body["classes"][0]["id"], class_b_);
  EXPECT_EQ(ask("GET", "/api/classes", who_.admin).body["classes"].size(), 3u);  // the default one too
  // Who am I: each kind says so.
  EXPECT_EQ(ask("GET", "/api/me", who_.learner_a).body["kind"], "learner");
  EXPECT_EQ(ask("GET", "/api/me", who_.learner_a).body["class"]["id"], class_a_);
  EXPECT_EQ(ask("GET", "/api/me", who_.assistant_a).body["kind"], "staff");
  EXPECT_EQ(ask("GET", "/api/me", who_.assistant_a).body["classes"][0]["role"], "ta");
  EXPECT_EQ(ask("GET", "/api/me", who_.stranger).status, 401);
  // A learner's own routes refuse staff tokens (403) as they refuse no token (401).
  for (const auto& [method, path, body] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"GET", "/api/drafts", ""},
           {"PUT", "/api/drafts/reduction/3/cuda", R"({"source": "x"})"},
           {"DELETE", "/api/drafts/reduction/3/cuda", ""},
           {"GET", "/api/history", ""},
           {"GET", "/api/progress", ""},
           {"PUT", "/api/me", R"({"leaderboard": true})"},
           {"POST", "/api/jobs", R"({"stage": "reduction/2", "source": "x"})"},
           {"GET", "/api/jobs/" + std::to_string(job_a_), ""},
           {"POST", "/api/jobs/" + std::to_string(job_a_) + "/share", "{}"},
           {"GET", "/api/jobs/" + std::to_string(job_a_) + "/share", ""},
           {"DELETE", "/api/jobs/" + std::to_string(job_a_) + "/share", ""}}) {
    EXPECT_EQ(statuses(method, path, body, {&who_.nobody, &who_.stranger, &who_.instructor_a, &who_.admin}),
              (std::vector<int>{401, 401, 403, 403}))
        << method << " " << path;
  }
  // Another learner's job is not theirs to see, whatever class, nor to share.
  EXPECT_EQ(ask("GET", "/api/jobs/" + std::to_string(job_a_), who_.learner_b).status, 404);
  EXPECT_EQ(
      ask("POST", "/api/jobs/" + std::to_string(job_a_) + "/share", who_.learner_b, std::string("{}")).status,
      404);
  // A link opens for anyone, whoever they are; one that opens nothing answers each of them alike.
  for (const std::string* token :
       {&who_.nobody, &who_.stranger, &who_.learner_a, &who_.assistant_a, &who_.admin})
    EXPECT_EQ(ask("GET", "/api/shared/" + std::string(64, '0'), *token).status, 404);
  // Leaderboards: a learner's own class; staff name one of theirs; anyone the default class's.
  EXPECT_EQ(ask("GET", "/api/stages/reduction/3/leaderboard", who_.learner_b).body["class"]["id"], class_b_);
  EXPECT_EQ(
      ask("GET", "/api/stages/reduction/3/leaderboard?class=" + std::to_string(class_a_), who_.assistant_a)
          .status,
      200);
  EXPECT_EQ(
      ask("GET", "/api/stages/reduction/3/leaderboard?class=" + std::to_string(class_a_), who_.instructor_b)
          .status,
      404);
  EXPECT_EQ(ask("GET", "/api/stages/reduction/3/leaderboard").body["class"]["name"], "Open sign-up");
}

}  // namespace
}  // namespace cudojo::api_testing
