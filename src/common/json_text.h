// JSON text of anything that may hold learner text (a source, a compiler log, printed output).
// nlohmann's dump() throws on bytes that are not UTF-8 (a Latin-1 comment, a log cut inside a
// character), which would make a learner's file the judge's internal error; here such bytes become
// U+FFFD instead.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace cudojo {

inline std::string json_text(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace cudojo
