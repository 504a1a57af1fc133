// What the route files of Api (api*.cc) share and nothing else needs.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/json_text.h"
#include "http/message.h"
#include "serve/store_shares.h"
#include "stage/language.h"

namespace cudojo::api_internal {

inline constexpr const char* kSignInFirst =
    "sign in first: send \"Authorization: Bearer <token>\" (POST /api/learners gives a token)";

inline constexpr const char* kTokenInUrl =
    "a token never goes in a URL: send it as \"Authorization: Bearer <token>\", or open the stream with a "
    "ticket (POST /api/jobs/{id}/ticket)";

inline void send_json(http::Response& response, int status, const nlohmann::json& body) {
  response.status = status;
  response.set_content(json_text(body), "application/json");
}

inline void send_error(http::Response& response, int status, const std::string& message) {
  response.set_error(status, message);
}

// A positive whole number written plainly ("12", not "+12", "012x" or "1e3"); nullopt otherwise.
std::optional<std::int64_t> parse_id(const std::string& text);

// A body's optional "language" (cuda when left out) into `language`; false, with the sentence to
// answer 400 with in `error`, when it is there and names no language.
bool read_language(const nlohmann::json& body, Language& language, std::string& error);

// A job's link as its class's staff see it: null when it was never shared, else whether it is live,
// when it was made, and when and by whom of the staff it was stopped (both null when live; "stopped_by"
// null alone when its learner stopped it).
nlohmann::json share_state_json(const std::optional<JobShare>& link);

}  // namespace cudojo::api_internal
