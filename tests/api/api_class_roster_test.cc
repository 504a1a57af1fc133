// A class's learners: joining by invite code (and the limits on it), open sign-up switched off,
// roster imports (refused whole with each problem's line; a later import updates), tokens handed out
// and reset (the old one stops at once), learners removed and restored, the staff and the audit log.
#include "api_class_support.h"

namespace cudojo::api_testing {
namespace {

TEST_F(ClassApi, JoiningByInviteCodeIsPerClassAndNamesAreUniqueWithinAClass) {
  const std::string admin = make_admin();
  start({"--workers", "0", "--limit", "max_joins_per_class_per_hour=3"});
  const MadeClass a = make_class(admin, "Class A", "Ia");
  const MadeClass b = make_class(admin, "Class B", "Ib");
  // The code is forgiving of how it is typed: case, spaces and dashes.
  std::string typed = a.invite;
  for (char& c : typed) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  typed.insert(5, " - ");
  const Answer ada =
      ask("POST", "/api/join", "", json{{"invite", typed}, {"name", "Ada"}, {"student_id", "s1"}});
  ASSERT_EQ(ada.status, 201) << ada.text;
  EXPECT_EQ(ada.body["class"]["id"], a.id);
  EXPECT_EQ(ada.body["student_id"], "s1");
  // The same name in the same class is taken; in another class it is not.
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", a.invite}, {"name", "Ada"}}).status, 409);
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", b.invite}, {"name", "Ada"}}).status, 201);
  // A student id already in the class is someone's roster entry: ask the instructor.
  const Answer taken =
      ask("POST", "/api/join", "", json{{"invite", a.invite}, {"name", "Eve"}, {"student_id", "s1"}});
  EXPECT_EQ(taken.status, 409);
  EXPECT_NE(taken.body["error"].get<std::string>().find("instructor"), std::string::npos) << taken.text;
  // Bad input: a code nobody has, a malformed student id or address, the wrong types.
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", "NOSUCHCODE"}, {"name", "Bo"}}).status, 404);
  EXPECT_EQ(
      ask("POST", "/api/join", "", json{{"invite", a.invite}, {"name", "Bo"}, {"student_id", "a b"}}).status,
      400);
  EXPECT_EQ(
      ask("POST", "/api/join", "", json{{"invite", a.invite}, {"name", "Bo"}, {"email", "nope"}}).status,
      400);
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", 7}, {"name", "Bo"}}).status, 400);
  EXPECT_EQ(ask("POST", "/api/join", "", std::string("{")).status, 400);
  // A class's hourly limit (3 here): the fourth join of the hour waits; another class is not held up.
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", a.invite}, {"name", "Cy"}}).status, 201);
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", a.invite}, {"name", "Di"}}).status, 201);
  const Answer over = ask("POST", "/api/join", "", json{{"invite", a.invite}, {"name", "Ed"}});
  EXPECT_EQ(over.status, 429);
  EXPECT_FALSE(over.header("Retry-After").empty());
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", b.invite}, {"name", "Ed"}}).status, 201);
  // An instructor closes joining, or changes the code: the old one stops working at once.
  EXPECT_EQ(ask("PATCH", class_path(b.id), b.instructor, json{{"joining_open", false}}).status, 200);
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", b.invite}, {"name", "Fay"}}).status, 403);
  const Answer renewed =
      ask("PATCH", class_path(b.id), b.instructor, json{{"joining_open", true}, {"new_invite_code", true}});
  EXPECT_NE(renewed.body["invite_code"], b.invite);
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", b.invite}, {"name", "Fay"}}).status, 404);
  EXPECT_EQ(
      ask("POST", "/api/join", "", json{{"invite", renewed.body["invite_code"]}, {"name", "Fay"}}).status,
      201);
  EXPECT_EQ(ask("PATCH", class_path(b.id), b.instructor, json{{"colour", "red"}}).status, 400);
}

TEST_F(ClassApi, OpenSignUpCanBeSwitchedOff) {
  start({"--workers", "0", "--no-open-sign-up"});
  const Answer refused = ask("POST", "/api/learners", "", json{{"name", "ada"}});
  EXPECT_EQ(refused.status, 403);
  EXPECT_NE(refused.body["error"].get<std::string>().find("invite code"), std::string::npos) << refused.text;
}

TEST_F(ClassApi, ARosterIsImportedWholeOrNotAtAllAndALaterImportUpdatesIt) {
  const std::string admin = make_admin();
  start({"--workers", "0", "--limit", "max_roster_rows=5"});
  const MadeClass a = make_class(admin, "Class A", "Ia");
  const std::string roster = class_path(a.id, "/roster");
  // Every problem, with its line; nothing imported.
  const Answer broken = ask("POST", roster, a.instructor,
                            json{{"csv",
                                  "Student ID,Name,Email\ns1,Ada,ada@example.edu\ns2,,x@example.edu\n"
                                  "s1,Bob,\ns 4,Cy,\ns5,Di,not-an-address\n"}});
  ASSERT_EQ(broken.status, 422) << broken.text;
  std::vector<int> lines;
  for (const auto& problem : broken.body["problems"]) lines.push_back(problem["line"].get<int>());
  EXPECT_EQ(lines, (std::vector<int>{3, 4, 5, 6}));
  EXPECT_EQ(ask("GET", class_path(a.id, "/learners"), a.instructor).body["learners"].size(), 0u);
  // Too many rows, no rows, a quote left open, not JSON.
  EXPECT_EQ(ask("POST", roster, a.instructor, json{{"csv", "1,a\n2,b\n3,c\n4,d\n5,e\n6,f\n"}}).status, 422);
  EXPECT_EQ(ask("POST", roster, a.instructor, json{{"csv", "\n\n"}}).status, 400);
  EXPECT_EQ(ask("POST", roster, a.instructor, json{{"csv", "s1,\"Ada\n"}}).status, 422);
  EXPECT_EQ(ask("POST", roster, a.instructor, std::string("s1,Ada")).status, 400);
  // A roster with a byte-order mark, CRLF, quoted fields, names of any script.
  const std::string csv =
      "\xEF\xBB\xBF"
      "email,student id,name\r\nada@example.edu,s1,\"Ada  Lovelace\"\r\n"
      ",s2,\"Zo\xC3\xAB O'Neil\"\r\n";
  const Answer first = ask("POST", roster, a.instructor, json{{"csv", csv}});
  ASSERT_EQ(first.status, 200) << first.text;
  EXPECT_EQ(first.body, json({{"created", 2}, {"updated", 0}, {"restored", 0}, {"unchanged", 0}}));
  // Again, with one name changed and one learner more: updated by student id.
  const Answer second = ask("POST", roster, a.instructor,
                            json{{"csv", "s1,Ada King,ada@example.edu\ns2,Zo\xC3\xAB O'Neil,\ns3,Cy,\n"}});
  EXPECT_EQ(second.body, json({{"created", 1}, {"updated", 1}, {"restored", 0}, {"unchanged", 1}}));
  const json learners = ask("GET", class_path(a.id, "/learners"), a.instructor).body["learners"];
  ASSERT_EQ(learners.size(), 3u);
  EXPECT_EQ(learners[0]["name"], "Ada King");
  EXPECT_EQ(learners[0]["student_id"], "s1");
  EXPECT_TRUE(learners[0]["signed_in_at"].is_null());
  // A row whose name another learner of the class holds is a conflict, and nothing is written.
  EXPECT_EQ(ask("POST", roster, a.instructor, json{{"csv", "s9,Cy\n"}}).status, 409);
  EXPECT_EQ(ask("GET", class_path(a.id, "/learners"), a.instructor).body["learners"].size(), 3u);
}

TEST_F(ClassApi, TokensAreHandedOutAndResetAndTheOldOneStopsAtOnce) {
  const std::string admin = make_admin();
  start({"--workers", "0"});
  const MadeClass a = make_class(admin, "Class A", "Ia");
  ASSERT_EQ(ask("POST", class_path(a.id, "/roster"), a.instructor, json{{"csv", "s1,Ada\ns2,Bob\n"}}).status,
            200);
  // The roster's learners get tokens to hand out, as JSON or as a CSV file.
  const Answer issued = ask("POST", class_path(a.id, "/tokens"), a.instructor, json::object());
  ASSERT_EQ(issued.body["tokens"].size(), 2u) << issued.text;
  const std::string ada = issued.body["tokens"][0]["token"];
  EXPECT_EQ(ask("GET", "/api/me", ada).body["name"], "Ada");
  // Ada has signed in: handing out tokens again leaves hers alone.
  const Answer csv = ask("POST", class_path(a.id, "/tokens"), a.instructor, json{{"format", "csv"}});
  EXPECT_EQ(csv.header("Content-Type").rfind("text/csv", 0), 0u);
  EXPECT_NE(csv.header("Content-Disposition").find("attachment"), std::string::npos);
  EXPECT_EQ(csv.text.rfind("student_id,name,email,token\r\ns2,Bob,,", 0), 0u) << csv.text;
  EXPECT_EQ(ask("GET", "/api/me", ada).status, 200);
  // A reset: the old token is refused at once, streams' tickets with it; the new one works.
  const std::int64_t ada_id = learner_id(ada);
  const auto [job, events] = queued_job(ada);
  const Answer ticket = ask("POST", "/api/jobs/" + std::to_string(job) + "/ticket", ada, std::string("{}"));
  ASSERT_EQ(ticket.status, 201);
  const Answer reset = ask("POST", class_path(a.id, "/learners/" + std::to_string(ada_id) + "/token"),
                           a.instructor, std::string("{}"));
  ASSERT_EQ(reset.status, 200) << reset.text;
  EXPECT_EQ(reset.header("Cache-Control"), "no-store");
  EXPECT_EQ(ask("GET", "/api/me", ada).status, 401);
  EXPECT_EQ(request_from("127.0.0.1", server_->port(), "GET", ticket.body["events"].get<std::string>()).first,
            401);
  const std::string renewed = reset.body["token"];
  EXPECT_EQ(ask("GET", "/api/me", renewed).body["id"], ada_id);
  EXPECT_EQ(ask("GET", "/api/jobs/" + std::to_string(job), renewed).status, 200);  // her work is still hers
  EXPECT_EQ(ask("POST", class_path(a.id, "/tokens"), a.instructor, json{{"learners", "some"}}).status, 400);
  EXPECT_EQ(ask("POST", class_path(a.id, "/tokens"), a.instructor, json{{"learners", 5}}).status, 400);
  EXPECT_EQ(ask("POST", class_path(a.id, "/tokens"), a.instructor, json{{"format", true}}).status, 400);
}

TEST_F(ClassApi, ARemovedLearnerCannotSignInAndIsRestoredWithTheirWork) {
  const std::string admin = make_admin();
  start({"--workers", "0"});
  const MadeClass a = make_class(admin, "Class A", "Ia");
  const std::string ada = join(a.invite, "Ada", "s1");
  const std::int64_t ada_id = learner_id(ada);
  const auto [job, events] = queued_job(ada);
  const std::string learner = class_path(a.id, "/learners/" + std::to_string(ada_id));
  const Answer removed = ask("PATCH", learner, a.instructor, json{{"removed", true}});
  ASSERT_EQ(removed.status, 200) << removed.text;
  EXPECT_FALSE(removed.body["removed_at"].is_null());
  EXPECT_EQ(ask("GET", "/api/me", ada).status, 401);
  EXPECT_TRUE(ask("GET", class_path(a.id, "/grid"), a.instructor).body["learners"].empty());
  EXPECT_EQ(ask("POST", learner + "/token", a.instructor, std::string("{}")).status, 409);
  // Restored, and a new token handed out: the same learner, the same work.
  ASSERT_EQ(ask("PATCH", learner, a.instructor, json{{"removed", false}, {"name", "Ada L"}}).status, 200);
  const Answer token = ask("POST", learner + "/token", a.instructor, std::string("{}"));
  EXPECT_EQ(ask("GET", "/api/jobs/" + std::to_string(job), token.body["token"].get<std::string>()).status,
            200);
  EXPECT_EQ(ask("GET", class_path(a.id, "/grid"), a.instructor).body["learners"][0]["name"], "Ada L");
  // Bad changes: unknown keys, wrong types, a name or student id another learner holds.
  join(a.invite, "Bob", "s2");
  EXPECT_EQ(ask("PATCH", learner, a.instructor, json{{"colour", "red"}}).status, 400);
  EXPECT_EQ(ask("PATCH", learner, a.instructor, json::object()).status, 400);
  EXPECT_EQ(ask("PATCH", learner, a.instructor, json{{"removed", "yes"}}).status, 400);
  EXPECT_EQ(ask("PATCH", learner, a.instructor, json{{"name", "Bob"}}).status, 409);
  EXPECT_EQ(ask("PATCH", learner, a.instructor, json{{"student_id", "s2"}}).status, 409);
  EXPECT_EQ(ask("PATCH", class_path(a.id, "/learners/999"), a.instructor, json{{"name", "X"}}).status, 404);
}

TEST_F(ClassApi, StaffAreAddedAndRemovedAndEveryChangeIsInTheAuditLog) {
  const std::string admin = make_admin();
  start({"--workers", "0"});
  const MadeClass a = make_class(admin, "Class A", "Ia");
  const Answer assistant =
      ask("POST", class_path(a.id, "/staff"), a.instructor, json{{"name", "Ta"}, {"role", "ta"}});
  ASSERT_EQ(assistant.status, 201);
  EXPECT_EQ(
      ask("POST", class_path(a.id, "/staff"), a.instructor, json{{"name", "Tb"}, {"role", "boss"}}).status,
      400);
  // A class keeps at least one instructor.
  const json staff = ask("GET", class_path(a.id), a.instructor).body["staff"];
  std::int64_t instructor_id = 0;
  for (const auto& member : staff)
    if (member["role"] == "instructor") instructor_id = member["id"].get<std::int64_t>();
  EXPECT_EQ(ask("DELETE", class_path(a.id, "/staff/" + std::to_string(instructor_id)), a.instructor).status,
            409);
  EXPECT_EQ(
      ask("POST", class_path(a.id, "/staff"), a.instructor, json{{"name", "Ia"}, {"role", "ta"}}).status,
      409);
  // A class made with an instructor whose name is refused is not made at all.
  const auto classes_before = ask("GET", "/api/classes", admin).body["classes"].size();
  EXPECT_EQ(ask("POST", "/api/classes", admin, json{{"name", "Class B"}, {"instructor", "no<tags>"}}).status,
            400);
  EXPECT_EQ(ask("GET", "/api/classes", admin).body["classes"].size(), classes_before);
  ASSERT_EQ(ask("POST", class_path(a.id, "/roster"), a.instructor, json{{"csv", "s1,Ada\n"}}).status, 200);
  // The log, newest first, names who did what; the assistant reads it, pages of it too.
  const Answer log =
      ask("GET", class_path(a.id, "/audit?limit=2"), assistant.body["token"].get<std::string>());
  ASSERT_EQ(log.status, 200);
  ASSERT_EQ(log.body["entries"].size(), 2u);
  EXPECT_EQ(log.body["entries"][0]["action"], "roster.import");
  EXPECT_EQ(log.body["entries"][0]["actor"]["name"], "Ia");
  EXPECT_EQ(log.body["entries"][0]["actor"]["kind"], "instructor");
  EXPECT_EQ(log.body["entries"][1]["action"], "class.staff_add");
  const Answer older =
      ask("GET", class_path(a.id, "/audit?before=" + log.body["next_before"].dump()), a.instructor);
  std::vector<std::string> actions;
  for (const auto& entry : older.body["entries"]) actions.push_back(entry["action"]);
  EXPECT_EQ(actions,
            (std::vector<std::string>{"staff.create", "class.staff_add", "staff.create", "class.create"}));
  EXPECT_EQ(older.body["entries"][3]["actor"]["kind"], "admin");
  EXPECT_EQ(ask("GET", class_path(a.id, "/audit?limit=0"), a.instructor).status, 400);
  // The administrator's log holds the console's first entry too.
  const json everything = ask("GET", "/api/audit?limit=200", admin).body["entries"];
  EXPECT_EQ(everything.back()["actor"]["kind"], "console");
}

}  // namespace
}  // namespace cudojo::api_testing
