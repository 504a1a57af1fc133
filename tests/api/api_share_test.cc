// Links to one job (POST, GET and DELETE /api/jobs/{id}/share; GET /api/shared/{token}), tried as
// every kind of caller: nobody, a token nobody holds, the job's owner, another learner, the class's
// teaching assistant and instructor, another class's instructor and an administrator. Only the owner
// makes, reads and stops a link; anyone holding a live one reads the job, and nothing of the learner;
// every link that opens nothing (stopped, replaced, unknown, malformed) gets the same answer. The
// class's staff list its live links and its instructors stop one or turn links off for the class.
#include <regex>
#include <set>

#include "api_class_support.h"

namespace cudojo::api_testing {
namespace {

const std::string kNoBody = "{}";

// What each method sends: a POST its JSON object, the others nothing.
std::string body_for(const std::string& method) { return method == "POST" ? kNoBody : ""; }

// A report as the judge writes one, with the GPU that judged it.
std::string judged_report() {
  json report = json::parse(report_with(1.25));
  report["gpu"] = {{"name", "NVIDIA H200"}, {"arch", "sm_90"}};
  report["message"] = "Correct and fast enough.";
  return report.dump();
}

class Shares : public ClassApi {
 protected:
  // A class with its instructor and teaching assistant, another class's instructor, an
  // administrator, the owner (in the class) and another learner of the class, and a finished job of
  // the owner's. `serve` are the server's options.
  void open_class(std::vector<std::string> serve = {"--workers", "0"}) {
    admin_ = make_admin();
    start(serve);
    const MadeClass a = make_class(admin_, "Class Aleph", "Ia");
    const MadeClass b = make_class(admin_, "Class Beth", "Ib");
    class_a_ = a.id;
    instructor_a_ = a.instructor;
    instructor_b_ = b.instructor;
    const Answer assistant =
        ask("POST", class_path(a.id, "/staff"), a.instructor, json{{"name", "Ta"}, {"role", "ta"}});
    ASSERT_EQ(assistant.status, 201) << assistant.text;
    assistant_a_ = assistant.body["token"].get<std::string>();
    owner_ = join(a.invite, "Zephyrine Quill");
    other_ = join(a.invite, "Other Learner");
    owner_id_ = learner_id(owner_);
    job_ =
        testing::insert_finished_job(store_location(), owner_id_, "reduction/3", "accepted", judged_report());
    ASSERT_GT(job_, 0);
  }
  std::string share_path(std::int64_t job) const { return "/api/jobs/" + std::to_string(job) + "/share"; }
  // The owner makes a link to `job`: its token.
  std::string make_link(std::int64_t job) {
    const Answer made = ask("POST", share_path(job), owner_, kNoBody);
    EXPECT_EQ(made.status, 201) << made.text;
    return made.status == 201 ? made.body["token"].get<std::string>() : "";
  }

  std::string admin_, instructor_a_, instructor_b_, assistant_a_, owner_, other_;
  std::int64_t class_a_ = 0, owner_id_ = 0, job_ = 0;
};

TEST_F(Shares, OnlyTheOwnerMakesReadsAndStopsALinkAndAnyoneOpensIt) {
  open_class();
  const std::string path = share_path(job_);
  // Everyone but the owner, on each of the owner's routes: 401 without a known token, 404 for another
  // learner (as for a job that does not exist), 403 for every member of staff (a learner's route;
  // making a link is the learner's own act, and the class's staff read the job at
  // /api/classes/{id}/jobs/{jid} already).
  const std::vector<std::pair<std::string, int>> refused = {
      {"", 401},           {"not-a-token", 401}, {other_, 404},
      {assistant_a_, 403}, {instructor_a_, 403}, {instructor_b_, 403},
      {admin_, 403}};
  for (const char* method : {"POST", "GET", "DELETE"}) {
    for (const auto& [token, status] : refused) {
      const Answer answer = ask(method, path, token, body_for(method));
      EXPECT_EQ(answer.status, status) << method << " " << path << " as " << token << ": " << answer.text;
    }
  }
  EXPECT_EQ(ask("GET", path, owner_).body["shared"], false) << "nobody else made a link";
  const Answer none = ask("POST", share_path(job_ + 1000), owner_, kNoBody);
  EXPECT_EQ(none.status, 404);
  EXPECT_EQ(none.text, ask("POST", path, other_, kNoBody).text)
      << "another's job answers as one that does not exist";

  // The owner makes one: the link and its token, once; then reads that it is live, never its token.
  const Answer made = ask("POST", path, owner_, kNoBody);
  ASSERT_EQ(made.status, 201) << made.text;
  const std::string token = made.body["token"].get<std::string>();
  EXPECT_EQ(token.size(), 64u);
  EXPECT_EQ(made.body["url"], "/#shared/" + token);
  EXPECT_EQ(made.body["job_id"], job_);
  EXPECT_EQ(made.header("Cache-Control"), "no-store");
  const Answer live = ask("GET", path, owner_);
  EXPECT_EQ(live.status, 200);
  EXPECT_EQ(live.body["shared"], true);
  EXPECT_EQ(live.body["created_at"], made.body["created_at"]);
  EXPECT_EQ(live.text.find(token), std::string::npos) << "the token is shown once only";

  // Anyone opens it, signed in or not, as any kind of account: the same answer.
  const std::string link = "/api/shared/" + token;
  const Answer opened = ask("GET", link);
  ASSERT_EQ(opened.status, 200) << opened.text;
  EXPECT_EQ(opened.header("Cache-Control"), "no-store");
  for (const std::string& caller :
       {std::string("not-a-token"), other_, owner_, assistant_a_, instructor_b_, admin_}) {
    const Answer again = ask("GET", link, caller);
    EXPECT_EQ(again.status, 200) << caller;
    EXPECT_EQ(again.body, opened.body) << caller;
  }

  // Stopped by anyone but the owner: refused above, and the link still opens.
  EXPECT_EQ(ask("GET", link).status, 200);
  EXPECT_EQ(ask("DELETE", path, owner_).status, 204);
  EXPECT_EQ(ask("GET", link).status, 404);
  EXPECT_EQ(ask("GET", path, owner_).body["shared"], false);
  EXPECT_EQ(ask("DELETE", path, owner_).status, 204) << "stopping a stopped link is no error";
}

TEST_F(Shares, TheSharedJobShowsTheWorkAndNothingOfTheLearner) {
  open_class({"--workers", "1"});  // a judge, which without a GPU finishes a compile error at once
  const auto submitted = submit(owner_, {{"stage", "reduction/2"}, {"source", compile_error_source()}});
  ASSERT_EQ(submitted->status, 202) << submitted->body;
  const auto id = json::parse(submitted->body)["id"].get<std::int64_t>();
  ASSERT_EQ(wait_done(owner_, id)["verdict"], "compile_error");
  const Answer opened = ask("GET", "/api/shared/" + make_link(id));
  ASSERT_EQ(opened.status, 200) << opened.text;
  EXPECT_EQ(opened.body["stage"], "reduction/2");
  EXPECT_FALSE(opened.body["stage_title"].get<std::string>().empty());
  EXPECT_EQ(opened.body["language"], "cuda");
  EXPECT_EQ(opened.body["verdict"], "compile_error");
  EXPECT_EQ(opened.body["source"], compile_error_source());
  EXPECT_EQ(opened.body["report"]["verdict"], "compile_error");
  // The owner's report names the node and host that judged it; the link holder's does not.
  const Answer own = ask("GET", "/api/jobs/" + std::to_string(id), owner_);
  ASSERT_TRUE(own.body["report"].contains("judged_by")) << own.text;
  EXPECT_FALSE(opened.body["report"].contains("judged_by")) << opened.text;
  // The day only: a leaderboard's entries carry their second, which would name the learner.
  EXPECT_TRUE(
      std::regex_match(opened.body["submitted_on"].get<std::string>(), std::regex(R"(\d{4}-\d{2}-\d{2})")))
      << opened.body["submitted_on"];
  EXPECT_TRUE(opened.body.contains("gpu"));
  // Only what the documented shape holds: nothing of the learner, their class or their lateness.
  for (const auto& [key, value] : opened.body.items()) {
    static const std::set<std::string> kShown = {
        "stage",  "stage_title",  "language", "verdict",       "report",
        "source", "submitted_on", "gpu",      "stage_version", "stage_version_current"};
    EXPECT_TRUE(kShown.count(key)) << "the shared job shows " << key;
  }
  for (const std::string& secret : {std::string("Zephyrine"), std::string("Quill"), owner_,
                                    std::string("Class Aleph"), token_digest(owner_)}) {
    EXPECT_EQ(opened.text.find(secret), std::string::npos) << "the shared job holds " << secret;
  }
  EXPECT_FALSE(opened.body.contains("learner"));
  EXPECT_FALSE(opened.body.contains("id"));
  EXPECT_FALSE(opened.body.contains("late"));

  // A planted report with its GPU: the GPU named.
  const Answer planted = ask("GET", "/api/shared/" + make_link(job_));
  EXPECT_EQ(planted.body["gpu"], "NVIDIA H200");
  EXPECT_EQ(planted.body["report"]["message"], "Correct and fast enough.");
}

TEST_F(Shares, EveryLinkThatOpensNothingGetsTheSameAnswer) {
  open_class();
  const std::string first = make_link(job_);
  const std::string second = make_link(job_);  // replaces the first
  const std::string stopped_job = std::to_string(testing::insert_finished_job(
      store_location(), owner_id_, "reduction/2", "wrong_answer", judged_report()));
  const std::string stopped = make_link(std::stoll(stopped_job));
  ASSERT_EQ(ask("DELETE", share_path(std::stoll(stopped_job)), owner_).status, 204);
  ASSERT_EQ(ask("GET", "/api/shared/" + second).status, 200);

  const Answer unknown = ask("GET", "/api/shared/" + std::string(64, 'a'));
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.header("Cache-Control"), "no-store");
  for (const std::string& link :
       {std::string(""), first, stopped, second + "0", second.substr(0, 63), std::string(129, 'a'),
        std::string(5000, 'f'), std::string("not-hex-at-all"), std::string("%2e%2e%2fjobs"), second + "/x",
        std::string("'%20OR%201=1--"), std::string("ZZ") + second.substr(2)}) {
    const Answer answer = ask("GET", "/api/shared/" + link);
    EXPECT_EQ(answer.status, 404) << link;
    EXPECT_EQ(answer.text, unknown.text) << link;
  }
  EXPECT_EQ(ask("GET", "/api/shared/" + second).status, 200) << "the live link still opens";
}

TEST_F(Shares, OnlyAFinishedJobIsSharedAndAWithdrawnOneIsNoJob) {
  open_class();  // no judge: jobs stay queued
  const auto [queued, events] = queued_job(owner_);
  const Answer early = ask("POST", share_path(queued), owner_, kNoBody);
  EXPECT_EQ(early.status, 409) << early.text;
  EXPECT_NE(early.body.value("error", "").find("only a finished job"), std::string::npos) << early.text;
  EXPECT_EQ(ask("GET", share_path(queued), owner_).body["shared"], false);
  ASSERT_EQ(ask("DELETE", "/api/jobs/" + std::to_string(queued), owner_).status, 200);
  for (const char* method : {"POST", "GET", "DELETE"})
    EXPECT_EQ(ask(method, share_path(queued), owner_, body_for(method)).status, 404)
        << method << " of a withdrawn job";
}

TEST_F(Shares, ALearnersLiveLinksAreCappedAndALinkEndsWithItsLearner) {
  open_class({"--workers", "0", "--limit", "max_live_shares_per_learner=2"});
  std::vector<std::int64_t> jobs = {job_};
  for (int i = 0; i < 2; ++i)
    jobs.push_back(testing::insert_finished_job(store_location(), owner_id_, "reduction/3", "too_slow",
                                                judged_report()));
  const std::string kept = make_link(jobs[0]);
  make_link(jobs[1]);
  const Answer refused = ask("POST", share_path(jobs[2]), owner_, kNoBody);
  EXPECT_EQ(refused.status, 409) << refused.text;
  EXPECT_NE(refused.body.value("error", "").find("stop sharing one"), std::string::npos) << refused.text;
  EXPECT_EQ(ask("POST", share_path(jobs[1]), owner_, kNoBody).status, 201) << "a new link to a shared job";
  ASSERT_EQ(ask("DELETE", share_path(jobs[1]), owner_).status, 204);
  EXPECT_EQ(ask("POST", share_path(jobs[2]), owner_, kNoBody).status, 201)
      << "a stopped link gave its place back";

  // The instructor removes the learner from the class: their links open nothing any more.
  ASSERT_EQ(ask("GET", "/api/shared/" + kept).status, 200);
  const Answer removed = ask("PATCH", class_path(class_a_, "/learners/" + std::to_string(owner_id_)),
                             instructor_a_, json{{"removed", true}});
  ASSERT_EQ(removed.status, 200) << removed.text;
  EXPECT_EQ(ask("GET", "/api/shared/" + kept).status, 404);
  // Restored, they find their links stopped: reopening them would expose work they could not stop
  // sharing (their token was replaced when they were removed).
  const Answer restored = ask("PATCH", class_path(class_a_, "/learners/" + std::to_string(owner_id_)),
                              instructor_a_, json{{"removed", false}});
  ASSERT_EQ(restored.status, 200) << restored.text;
  EXPECT_EQ(ask("GET", "/api/shared/" + kept).status, 404) << "restoring a learner reopened a link";
}

TEST_F(Shares, TheClassesStaffListItsLiveLinksAndItsInstructorsStopOne) {
  open_class();
  const std::string link = make_link(job_);
  const std::string listing = class_path(class_a_, "/shares");
  const std::string stop = class_path(class_a_, "/jobs/" + std::to_string(job_) + "/share");
  // Reading is for the class's staff and administrators; stopping for its instructors and
  // administrators. A learner's token is refused on staff routes, another class's staff get 404.
  for (const auto& [token, reads, stops] :
       std::vector<std::tuple<std::string, int, int>>{{"", 401, 401},
                                                      {owner_, 403, 403},
                                                      {other_, 403, 403},
                                                      {instructor_b_, 404, 404},
                                                      {assistant_a_, 200, 403}}) {
    EXPECT_EQ(ask("GET", listing, token).status, reads) << "GET as " << token;
    EXPECT_EQ(ask("DELETE", stop, token).status, stops) << "DELETE as " << token;
  }
  const Answer listed = ask("GET", listing, admin_);
  ASSERT_EQ(listed.status, 200) << listed.text;
  EXPECT_EQ(listed.body["sharing_open"], true);
  ASSERT_EQ(listed.body["shares"].size(), 1u) << listed.text;
  EXPECT_EQ(listed.body["shares"][0]["job_id"], job_);
  EXPECT_EQ(listed.body["shares"][0]["learner"]["name"], "Zephyrine Quill");
  EXPECT_EQ(listed.body["shares"][0]["stage"], "reduction/3");
  EXPECT_EQ(listed.body["more"], false);
  EXPECT_EQ(
      ask("GET", class_path(class_a_, "/jobs/" + std::to_string(job_)), assistant_a_).body["share"]["live"],
      true);
  EXPECT_EQ(ask("GET", listing + "?limit=0", admin_).status, 400);

  EXPECT_EQ(ask("DELETE", stop, instructor_a_).status, 204);
  EXPECT_EQ(ask("GET", "/api/shared/" + link).status, 404) << "a link the instructor stopped still opens";
  EXPECT_EQ(ask("GET", listing, assistant_a_).body["shares"].size(), 0u);
  const json staff_view =
      ask("GET", class_path(class_a_, "/jobs/" + std::to_string(job_)), assistant_a_).body;
  EXPECT_EQ(staff_view["share"]["live"], false);
  EXPECT_EQ(staff_view["share"]["stopped_by"], "Ia");
  const json owner_view = ask("GET", share_path(job_), owner_).body;
  EXPECT_EQ(owner_view["shared"], false);
  EXPECT_EQ(owner_view["stopped_by_staff"], true);
  EXPECT_EQ(owner_view["sharing_open"], true);
  const json audit = ask("GET", class_path(class_a_, "/audit"), instructor_a_).body;
  ASSERT_FALSE(audit["entries"].empty()) << audit;
  EXPECT_EQ(audit["entries"][0]["action"], "share.stop");
  EXPECT_NE(audit["entries"][0]["detail"].get<std::string>().find("Zephyrine Quill"), std::string::npos);
  // Stopped already: stopped all the same; a job of no learner of the class is none of theirs.
  EXPECT_EQ(ask("DELETE", stop, instructor_a_).status, 204);
  EXPECT_EQ(ask("DELETE", class_path(class_a_, "/jobs/999999/share"), instructor_a_).status, 404);
  EXPECT_EQ(ask("DELETE", class_path(class_a_, "/jobs/x/share"), instructor_a_).status, 404);
  // The learner may make a new link while the class allows links.
  EXPECT_EQ(ask("POST", share_path(job_), owner_, kNoBody).status, 201);
}

TEST_F(Shares, AnInstructorTurnsTheClassesLinksOffAndEveryLiveOneStopsForGood) {
  open_class();
  const std::string link = make_link(job_);
  const std::string settings = class_path(class_a_);
  EXPECT_EQ(ask("PATCH", settings, assistant_a_, json{{"sharing_open", false}}).status, 403);
  EXPECT_EQ(ask("PATCH", settings, instructor_a_, json{{"sharing_open", "no"}}).status, 400);
  const Answer off = ask("PATCH", settings, instructor_a_, json{{"sharing_open", false}});
  ASSERT_EQ(off.status, 200) << off.text;
  EXPECT_EQ(off.body["sharing_open"], false);
  EXPECT_EQ(ask("GET", "/api/shared/" + link).status, 404);
  const Answer refused = ask("POST", share_path(job_), owner_, kNoBody);
  EXPECT_EQ(refused.status, 403) << refused.text;
  EXPECT_NE(refused.text.find("turned links to runs off"), std::string::npos) << refused.text;
  EXPECT_EQ(ask("GET", share_path(job_), owner_).body["sharing_open"], false);
  const json audit = ask("GET", class_path(class_a_, "/audit"), instructor_a_).body;
  EXPECT_NE(
      audit["entries"][0]["detail"].get<std::string>().find("turned links to runs off (1 live link stopped)"),
      std::string::npos)
      << audit;
  // Off again changes nothing, and its entry says so.
  EXPECT_EQ(ask("PATCH", settings, instructor_a_, json{{"sharing_open", false}}).status, 200);
  const std::string again = ask("GET", class_path(class_a_, "/audit"), instructor_a_)
                                .body["entries"][0]["detail"]
                                .get<std::string>();
  EXPECT_NE(again.find("left links to runs off (they were off)"), std::string::npos) << again;
  EXPECT_EQ(again.find("stopped"), std::string::npos) << again;
  // On again: the links stopped stay stopped, and a new one opens.
  EXPECT_EQ(ask("PATCH", settings, instructor_a_, json{{"sharing_open", true}}).body["sharing_open"], true);
  EXPECT_EQ(ask("GET", "/api/shared/" + link).status, 404);
  EXPECT_EQ(ask("GET", "/api/shared/" + make_link(job_)).status, 200);
}

}  // namespace
}  // namespace cudojo::api_testing
