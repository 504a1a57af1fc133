// What the class tests share (api_class_*_test.cc): a class run as a school runs one, made through
// the same doors an operator and an instructor use (`cudojo admin create` on the server's store, then
// the API), and one call that gives a request's status and JSON at once.
#pragma once

#include <optional>
#include <string>

#include "api_test_support.h"

namespace cudojo::api_testing {

struct Answer {
  int status = 0;
  json body;         // null when the answer was not JSON
  std::string text;  // the body as sent
  std::string header(const std::string& name) const {
    const auto found = headers.find(name);
    return found == headers.end() ? "" : found->second;
  }
  httplib::Headers headers;
};

class ClassApi : public Api {
 protected:
  // The server's first administrator, made on its store from the command line (before or after the
  // server starts), as docs/DEPLOY.md does; its token.
  std::string make_admin(const std::string& name = "Ops") {
    const auto made =
        testing::run_cli("admin create '" + name + "' --store '" + store_location() + "' --json");
    EXPECT_EQ(made.exit_code, 0) << made.out;
    const json answer = json::parse(made.out.substr(made.out.find('{')), nullptr, false);
    return answer.is_object() ? answer.value("token", "") : "";
  }

  // One request as `token` (none when empty): its status and body.
  Answer ask(const std::string& method, const std::string& path, const std::string& token = "",
             const std::string& body = "") {
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    auto c = client();
    httplib::Result result = method == "GET"      ? c.Get(path.c_str(), headers)
                             : method == "DELETE" ? c.Delete(path.c_str(), headers)
                             : method == "PUT"    ? c.Put(path.c_str(), headers, body, "application/json")
                             : method == "PATCH"  ? c.Patch(path.c_str(), headers, body, "application/json")
                                                  : c.Post(path.c_str(), headers, body, "application/json");
    Answer answer;
    if (!result) {
      ADD_FAILURE() << method << " " << path << ": no answer";
      return answer;
    }
    answer.status = result->status;
    answer.text = result->body;
    answer.headers = result->headers;
    answer.body = json::parse(result->body, nullptr, false);
    if (answer.body.is_discarded()) answer.body = nullptr;
    return answer;
  }
  Answer ask(const std::string& method, const std::string& path, const std::string& token, const json& body) {
    return ask(method, path, token, body.dump());
  }

  // A class made by `admin`, with `instructor` (a new account) as its instructor: its id, invite code
  // and the instructor's token.
  struct MadeClass {
    std::int64_t id = 0;
    std::string invite;
    std::string instructor;
  };
  MadeClass make_class(const std::string& admin, const std::string& name, const std::string& instructor) {
    const Answer made = ask("POST", "/api/classes", admin, json{{"name", name}, {"instructor", instructor}});
    EXPECT_EQ(made.status, 201) << made.text;
    if (made.status != 201) return {};
    return {made.body["class"]["id"].get<std::int64_t>(),
            made.body["class"]["invite_code"].get<std::string>(),
            made.body["instructor"]["token"].get<std::string>()};
  }

  // A learner joining with an invite code: the answer's token ("" when refused). A student id, when
  // given, is then set by the class's instructor (`instructor`), as a roster's edit does: a joiner
  // never names their own.
  std::string join(const std::string& invite, const std::string& name, const std::string& student_id = "",
                   const MadeClass* by = nullptr) {
    const Answer joined = ask("POST", "/api/join", "", json{{"invite", invite}, {"name", name}});
    EXPECT_EQ(joined.status, 201) << joined.text;
    if (joined.status != 201) return "";
    if (!student_id.empty()) {
      const Answer given = ask("PATCH", class_path(by->id, "/learners/" + joined.body["id"].dump()),
                               by->instructor, json{{"student_id", student_id}});
      EXPECT_EQ(given.status, 200) << given.text;
    }
    return joined.body["token"].get<std::string>();
  }

  std::string class_path(std::int64_t id, const std::string& rest = "") {
    return "/api/classes/" + std::to_string(id) + rest;
  }
};

}  // namespace cudojo::api_testing
