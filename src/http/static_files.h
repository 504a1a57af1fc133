// The page's files, read into memory once at start and answered from there. A request can name
// only a file on the list (no path from a request is ever joined to a folder, so nothing else on
// the disk can be reached, and a name like "x.js%00.html" is simply not on it), each with the type
// its extension gives. Every answer shares the one copy, so a thousand clients fetching the same
// script cost the server no more memory than one; a byte range is one slice of it (http/range.h).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/message.h"

namespace cudojo::http {

// The Content-Type for a file, by its extension; nullopt for a kind the page never uses (which is
// then not served).
std::optional<std::string_view> content_type_for(const std::filesystem::path& file);

class StaticFiles {
 public:
  // Reads `file` and answers it at `url`. The problem, when it cannot be read or its kind is not
  // known.
  std::optional<std::string> add(const std::string& url, const std::filesystem::path& file);
  bool contains(std::string_view url) const { return files_.find(url) != files_.end(); }
  std::vector<std::string> urls() const;
  std::size_t total_bytes() const;
  // Answers a GET or HEAD for `url`, which must be on the list: 200, 304 when If-None-Match names
  // its ETag, 206 for one satisfiable byte range, 416 for a range past the end.
  void answer(std::string_view url, const Request& request, Response& response) const;

 private:
  struct File {
    std::shared_ptr<const std::string> bytes;
    std::string type;
    std::string etag;
  };
  std::map<std::string, File, std::less<>> files_;
};

}  // namespace cudojo::http
