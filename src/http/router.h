// Which route answers a request. Routes are tried in the order they were added; the first whose
// pattern matches the whole path decides: its handler when it answers the method (HEAD wherever
// GET is), else 405 naming the methods it does answer. No pattern: 404. Exact paths (the page's
// files) are looked up in a map before any pattern.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "http/message.h"

namespace cudojo::http {

using Handler = std::function<void(const Request&, Response&)>;

// Where a handler runs. A handler that calls the store (or may block in any way) runs on one of
// the handler threads; one that answers from memory runs on the event loop itself, sparing the
// hand-off.
enum class Runs { kOnHandlerThread, kOnEventLoop };

struct Route {
  std::string method;
  Handler handler;
  Runs runs = Runs::kOnHandlerThread;
};

struct RouteLookup {
  const Route* route = nullptr;  // the route to run; null for 404 or 405
  std::string allow;             // for 405: the methods the path answers ("GET, PUT")
  std::vector<std::string> matches;
};

class Router {
 public:
  // `pattern` is an ECMAScript regular expression matched against the whole decoded path.
  void add(std::string_view method, const std::string& pattern, Handler handler,
           Runs runs = Runs::kOnHandlerThread);
  // A path matched as it is, not as a pattern.
  void add_exact(std::string_view method, const std::string& path, Handler handler,
                 Runs runs = Runs::kOnHandlerThread);
  RouteLookup find(std::string_view method, const std::string& path) const;

 private:
  struct PathRoutes {
    std::vector<Route> routes;  // one per method
    std::string allow;
  };
  struct Pattern {
    std::string text;
    std::regex regex;
    PathRoutes routes;
  };
  static void add_to(PathRoutes& path, std::string_view method, Handler handler, Runs runs);
  static RouteLookup choose(const PathRoutes& path, std::string_view method);
  std::vector<Pattern> patterns_;
  std::map<std::string, PathRoutes, std::less<>> exact_;
};

}  // namespace cudojo::http
