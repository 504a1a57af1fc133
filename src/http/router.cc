#include "http/router.h"

namespace cudojo::http {

void Router::add_to(PathRoutes& path, std::string_view method, Handler handler, Runs runs) {
  path.routes.push_back({std::string(method), std::move(handler), runs});
  path.allow += (path.allow.empty() ? "" : ", ") + std::string(method);
}

void Router::add(std::string_view method, const std::string& pattern, Handler handler, Runs runs) {
  for (Pattern& known : patterns_) {
    if (known.text == pattern) return add_to(known.routes, method, std::move(handler), runs);
  }
  patterns_.push_back({pattern, std::regex(pattern, std::regex::ECMAScript), {}});
  add_to(patterns_.back().routes, method, std::move(handler), runs);
}

void Router::add_exact(std::string_view method, const std::string& path, Handler handler, Runs runs) {
  add_to(exact_[path], method, std::move(handler), runs);
}

RouteLookup Router::choose(const PathRoutes& path, std::string_view method) {
  const std::string_view asked = method == "HEAD" ? "GET" : method;
  for (const Route& route : path.routes) {
    if (route.method == asked) return {&route, "", {}};
  }
  return {nullptr, path.allow, {}};
}

RouteLookup Router::find(std::string_view method, const std::string& path) const {
  if (const auto exact = exact_.find(path); exact != exact_.end()) {
    RouteLookup found = choose(exact->second, method);
    found.matches = {path};
    return found;
  }
  for (const Pattern& pattern : patterns_) {
    std::smatch match;
    if (!std::regex_match(path, match, pattern.regex)) continue;
    RouteLookup found = choose(pattern.routes, method);
    for (const auto& group : match) found.matches.push_back(group.str());
    return found;
  }
  return {};
}

}  // namespace cudojo::http
