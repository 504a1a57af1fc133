#include "http/static_files.h"

#include <fmt/format.h>

#include <fstream>
#include <functional>

#include "http/range.h"

namespace cudojo::http {

namespace fs = std::filesystem;

std::optional<std::string_view> content_type_for(const fs::path& file) {
  const std::string extension = file.extension().string();
  if (extension == ".html") return "text/html; charset=utf-8";
  if (extension == ".js") return "text/javascript; charset=utf-8";
  if (extension == ".css") return "text/css; charset=utf-8";
  if (extension == ".svg") return "image/svg+xml";
  if (extension == ".woff2") return "font/woff2";
  if (extension == ".woff") return "font/woff";
  if (extension == ".ttf") return "font/ttf";
  if (extension == ".png") return "image/png";
  if (extension == ".json") return "application/json";
  return std::nullopt;
}

std::optional<std::string> StaticFiles::add(const std::string& url, const fs::path& file) {
  const auto type = content_type_for(file);
  if (!type) return fmt::format("{} is not a kind of file the page serves", file.string());
  std::error_code error;
  if (!fs::is_regular_file(file, error)) return fmt::format("{} is missing", file.string());
  std::ifstream in(file, std::ios::binary);
  if (!in) return fmt::format("{} cannot be read", file.string());
  auto bytes =
      std::make_shared<std::string>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Changes with the content, so a browser revalidating after an upgrade gets the new file.
  const std::string etag =
      fmt::format("\"{:016x}-{:x}\"", std::hash<std::string_view>{}(*bytes), bytes->size());
  files_[url] = {std::move(bytes), std::string(*type), etag};
  return std::nullopt;
}

std::vector<std::string> StaticFiles::urls() const {
  std::vector<std::string> urls;
  for (const auto& [url, file] : files_) urls.push_back(url);
  return urls;
}

std::size_t StaticFiles::total_bytes() const {
  std::size_t total = 0;
  for (const auto& [url, file] : files_) total += file.bytes->size();
  return total;
}

void StaticFiles::answer(std::string_view url, const Request& request, Response& response) const {
  const auto found = files_.find(url);
  if (found == files_.end()) return response.set_error(404, "no such file");
  const File& file = found->second;
  response.set_header("Content-Type", file.type);
  response.set_header("ETag", file.etag);
  // Revalidated on every use: the URLs carry no version, so a cached copy must not outlive an upgrade.
  response.set_header("Cache-Control", "no-cache");
  response.set_header("Accept-Ranges", "bytes");
  if (const auto match = request.header("If-None-Match");
      match && (*match == "*" || match->find(file.etag) != std::string_view::npos)) {
    response.status = 304;
    return;
  }
  const std::size_t size = file.bytes->size();
  response.shared_body = file.bytes;
  response.shared_offset = 0;
  response.shared_length = size;
  response.status = 200;
  // If-Range names the copy the client holds a part of; another copy means the whole body.
  const auto if_range = request.header("If-Range");
  const RangeAnswer range =
      if_range && *if_range != file.etag ? RangeAnswer{} : answer_range(request.header("Range"), size);
  if (range.kind == RangeAnswer::Kind::kUnsatisfiable) {
    response.shared_body.reset();
    response.set_header("Content-Range", fmt::format("bytes */{}", size));
    response.set_error(416, fmt::format("the file has {} bytes; ask for a range within them", size));
    return;
  }
  if (range.kind == RangeAnswer::Kind::kPart) {
    response.status = 206;
    response.shared_offset = range.first;
    response.shared_length = range.length;
    response.set_header("Content-Range",
                        fmt::format("bytes {}-{}/{}", range.first, range.first + range.length - 1, size));
  }
}

}  // namespace cudojo::http
