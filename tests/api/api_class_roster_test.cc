// A class's learners: joining by invite code (and the limits on it), open sign-up switched off,
// roster imports (refused whole with each problem's line; a later import updates), tokens handed out
// and reset (the old one stops at once), learners removed and restored, the staff and the audit log.
#include "api_class_support.h"

namespace cudojo::api_testing {
namespace {

TEST_F(ClassApi, JoiningByInviteCodeIsPerClassAndNamesAreUniqueWithinAClass) {
  const std::string admin = make_admin();
  start({"--workers", "0", "--limit", "max_joins_per_class_per_hour=3", "--limit", "max_learners_per_class=5",
         "--limit", "max_failed_joins_per_address_per_hour=3"});
  const MadeClass a = make_class(admin, "Class A", "Ia");
  const MadeClass b = make_class(admin, "Class B", "Ib");
  // The code is forgiving of how it is typed: case, spaces and dashes.
  std::string typed = a.invite;
  for (char& c : typed) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  typed.insert(5, " - ");
  const Answer ada = ask("POST", "/api/join", "", json{{"invite", typed}, {"name", "Ada"}});
  ASSERT_EQ(ada.status, 201) << ada.text;
  EXPECT_EQ(ada.body["class"]["id"], a.id);
  EXPECT_EQ(ada.header("Cache-Control"), "no-store");
  // The same name in the same class is taken; in another class it is not.
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", a.invite}, {"name", "Ada"}}).status, 409);
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", b.invite}, {"name", "Ada"}}).status, 201);
  // A student id is the roster's to give: a joiner naming one is refused, so nobody claims a
  // classmate's roster entry or learns which ids a roster holds.
  const Answer claimed =
      ask("POST", "/api/join", "", json{{"invite", a.invite}, {"name", "Eve"}, {"student_id", "s1"}});
  EXPECT_EQ(claimed.status, 400);
  EXPECT_NE(claimed.body["error"].get<std::string>().find("roster"), std::string::npos) << claimed.text;
  // Bad input: a malformed address, the wrong types.
  EXPECT_EQ(
      ask("POST", "/api/join", "", json{{"invite", a.invite}, {"name", "Bo"}, {"email", "nope"}}).status,
      400);
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", 7}, {"name", "Bo"}}).status, 400);
  EXPECT_EQ(ask("POST", "/api/join", "", std::string("{")).status, 400);
  // A class's hourly limit (3 here): the fourth join of the hour waits; another class is not held up.
  // A roster's learners are not joins.
  ASSERT_EQ(ask("POST", class_path(a.id, "/roster"), a.instructor, json{{"csv", "r1,Rosa\n"}}).status, 200);
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", a.invite}, {"name", "Cy"}}).status, 201);
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", a.invite}, {"name", "Di"}}).status, 201);
  const Answer over = ask("POST", "/api/join", "", json{{"invite", a.invite}, {"name", "Ed"}});
  EXPECT_EQ(over.status, 429);
  EXPECT_FALSE(over.header("Retry-After").empty());
  // A class's size (5 here; B holds Ada and four from its roster): the sixth learner is refused
  // whichever door they use.
  ASSERT_EQ(
      ask("POST", class_path(b.id, "/roster"), b.instructor, json{{"csv", "r2,Ed\nr3,Fay\nr4,Gus\nr5,Hal\n"}})
          .status,
      200);
  const Answer full = ask("POST", "/api/join", "", json{{"invite", b.invite}, {"name", "Ivy"}});
  EXPECT_EQ(full.status, 409);
  EXPECT_NE(full.body["error"].get<std::string>().find("its limit"), std::string::npos) << full.text;
  EXPECT_EQ(ask("POST", class_path(b.id, "/roster"), b.instructor, json{{"csv", "r6,Jo\n"}}).status, 409);
  // An instructor closes joining, or changes the code: the old one stops working at once.
  EXPECT_EQ(ask("PATCH", class_path(a.id), a.instructor, json{{"joining_open", false}}).status, 200);
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", a.invite}, {"name", "Fay"}}).status, 403);
  const Answer renewed =
      ask("PATCH", class_path(a.id), a.instructor, json{{"joining_open", true}, {"new_invite_code", true}});
  EXPECT_NE(renewed.body["invite_code"], a.invite);
  EXPECT_EQ(ask("PATCH", class_path(a.id), a.instructor, json{{"colour", "red"}}).status, 400);
  // Wrong codes from one address are bounded (3 here): then even a right one waits.
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", a.invite}, {"name", "Fay"}}).status, 404);
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", "NOSUCHCODE"}, {"name", "Fay"}}).status, 404);
  EXPECT_EQ(ask("POST", "/api/join", "", json{{"invite", "NOSUCHCODE2"}, {"name", "Fay"}}).status, 404);
  const Answer guessing =
      ask("POST", "/api/join", "", json{{"invite", renewed.body["invite_code"]}, {"name", "Fay"}});
  EXPECT_EQ(guessing.status, 429);
  EXPECT_NE(guessing.body["error"].get<std::string>().find("wrong invite codes"), std::string::npos);
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
  EXPECT_EQ(first.body, json({{"created", 2}, {"updated", 0}, {"unchanged", 0}}));
  // Again, with one name changed and one learner more: updated by student id.
  const Answer second = ask("POST", roster, a.instructor,
                            json{{"csv", "s1,Ada King,ada@example.edu\ns2,Zo\xC3\xAB O'Neil,\ns3,Cy,\n"}});
  EXPECT_EQ(second.body, json({{"created", 1}, {"updated", 1}, {"unchanged", 1}}));
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
  const std::string ada = join(a.invite, "Ada", "s1", &a);
  const std::int64_t ada_id = learner_id(ada);
  const auto [job, events] = queued_job(ada);
  const int stream = open_event_stream(server_->port(), events, bearer(ada));
  ASSERT_GE(stream, 0);
  const std::string learner = class_path(a.id, "/learners/" + std::to_string(ada_id));
  const Answer removed = ask("PATCH", learner, a.instructor, json{{"removed", true}});
  ASSERT_EQ(removed.status, 200) << removed.text;
  EXPECT_FALSE(removed.body["removed_at"].is_null());
  EXPECT_EQ(ask("GET", "/api/me", ada).status, 401);
  // The stream she had open ends with her token, not when it next times out.
  EXPECT_NE(read_stream(stream, 3000ms).find("event: ended"), std::string::npos);
  close(stream);
  // Her student id on a roster is refused while she is removed (her drafts and work are hers); her
  // name is free for someone else meanwhile.
  const Answer reused = ask("POST", class_path(a.id, "/roster"), a.instructor, json{{"csv", "s1,Rita\n"}});
  EXPECT_EQ(reused.status, 409);
  EXPECT_NE(reused.body["error"].get<std::string>().find("removed learner"), std::string::npos)
      << reused.text;
  ASSERT_EQ(ask("POST", class_path(a.id, "/roster"), a.instructor, json{{"csv", "s9,Ada\n"}}).status, 200);
  EXPECT_EQ(ask("GET", class_path(a.id, "/grid"), a.instructor).body["learners"].size(), 1u);  // s9 only
  EXPECT_EQ(ask("POST", learner + "/token", a.instructor, std::string("{}")).status, 409);
  // Restored, and a new token handed out: the same learner, the same work.
  ASSERT_EQ(ask("PATCH", learner, a.instructor, json{{"removed", false}, {"name", "Ada L"}}).status, 200);
  const Answer token = ask("POST", learner + "/token", a.instructor, std::string("{}"));
  EXPECT_EQ(ask("GET", "/api/jobs/" + std::to_string(job), token.body["token"].get<std::string>()).status,
            200);
  EXPECT_EQ(ask("GET", class_path(a.id, "/grid"), a.instructor).body["learners"][0]["name"], "Ada L");
  // Bad changes: unknown keys, wrong types, a name or student id another learner holds.
  join(a.invite, "Bob", "s2", &a);
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
  // A name that already has an account elsewhere is not handed to an instructor who types it; an
  // administrator may give that account the role, saying so.
  const MadeClass b = make_class(admin, "Class B", "Ib");
  const Answer squat =
      ask("POST", class_path(a.id, "/staff"), a.instructor, json{{"name", "Ib"}, {"role", "ta"}});
  EXPECT_EQ(squat.status, 409);
  EXPECT_NE(squat.body["error"].get<std::string>().find("already"), std::string::npos) << squat.text;
  EXPECT_EQ(ask("POST", class_path(a.id, "/staff"), a.instructor,
                json{{"name", "Ib"}, {"role", "ta"}, {"existing", true}})
                .status,
            403);
  EXPECT_EQ(ask("POST", "/api/classes", admin, json{{"name", "Class C"}, {"instructor", "Ib"}}).status, 409);
  const Answer attached = ask("POST", class_path(a.id, "/staff"), admin,
                              json{{"name", "Ib"}, {"role", "ta"}, {"existing", true}});
  EXPECT_EQ(attached.status, 200) << attached.text;
  EXPECT_TRUE(attached.body["token"].is_null());
  EXPECT_EQ(ask("GET", class_path(a.id, "/grid"), b.instructor).status, 200);  // Ib reads A now
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
  EXPECT_EQ(actions, (std::vector<std::string>{"class.staff_add", "staff.create", "class.staff_add",
                                               "staff.create", "class.create"}));
  EXPECT_EQ(older.body["entries"][4]["actor"]["kind"], "admin");
  EXPECT_EQ(ask("GET", class_path(a.id, "/audit?limit=0"), a.instructor).status, 400);
  // The administrator's log holds the console's first entry too.
  const json everything = ask("GET", "/api/audit?limit=200", admin).body["entries"];
  EXPECT_EQ(everything.back()["actor"]["kind"], "console");
  // Exports are recorded once per person and class in ten minutes: a loop of them cannot bury the log.
  for (int i = 0; i < 3; ++i) ASSERT_EQ(ask("GET", class_path(a.id, "/export"), a.instructor).status, 200);
  int exports = 0;
  const Answer after = ask("GET", class_path(a.id, "/audit"), a.instructor);
  for (const auto& entry : after.body["entries"]) exports += entry["action"] == "grid.export";
  EXPECT_EQ(exports, 1) << after.text;
}

}  // namespace
}  // namespace cudojo::api_testing
