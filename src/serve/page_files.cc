#include "serve/page_files.h"

#include <fmt/format.h>

#include <array>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>

namespace cudojo {

namespace fs = std::filesystem;

namespace {

// The page's npm packages (scripts/setup.sh installs them): URL prefix, folder under node_modules.
constexpr std::array<std::array<const char*, 2>, 4> kVendorMounts = {{
    {"/vendor/codemirror/", "codemirror/"},
    {"/vendor/katex/", "katex/dist/"},
    {"/vendor/highlight/", "@highlightjs/cdn-assets/"},
    {"/vendor/diff/", "diff/dist/"},
}};

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A URL path with no "." or ".." segment, so it names a file inside its mount and nowhere else.
bool is_plain_path(const std::string& url) {
  return url.find("/./") == std::string::npos && url.find("/../") == std::string::npos &&
         !url.ends_with("/..") && !url.ends_with("/.") && url.find('\\') == std::string::npos;
}

// The file a /vendor/ URL names, or empty when it is not under a mount.
fs::path vendor_file(const fs::path& web_dir, const std::string& url) {
  if (!is_plain_path(url)) return {};
  for (const auto& [prefix, folder] : kVendorMounts) {
    if (url.starts_with(prefix))
      return web_dir / "node_modules" / (std::string(folder) + url.substr(std::strlen(prefix)));
  }
  return {};
}

}  // namespace

PageFileList find_page_files(const fs::path& web_dir) {
  PageFileList list;
  std::set<std::string> seen;
  auto add = [&](const std::string& url, const fs::path& file) {
    if (!seen.insert(url).second) return;
    std::error_code error;
    if (fs::is_regular_file(file, error)) {
      list.files.push_back({url, file});
    } else {
      list.missing.push_back(fmt::format("{} (for {}) is missing", file.string(), url));
    }
  };
  for (const char* own : {"index.html", "style.css", "lesson.js", "lesson.css", "favicon.svg"})
    add(std::string("/") + own, web_dir / own);
  add("/favicon.ico", web_dir / "favicon.svg");  // one SVG under both names browsers ask for
  std::error_code error;
  // The page's own modules (web/js/, loaded natively as ES modules): every plainly named .js file
  // there, in sub-folders too. Only regular files: a link could point anywhere.
  for (fs::recursive_directory_iterator it(web_dir / "js", fs::directory_options::none, error), end;
       !error && it != end; it.increment(error)) {
    const fs::path relative = it->path().lexically_relative(web_dir);
    static const std::regex kModuleName(R"(js(/[a-z0-9][a-z0-9_-]*)+\.js)");
    if (it->is_regular_file(error) && !it->is_symlink(error) &&
        std::regex_match(relative.generic_string(), kModuleName))
      add("/" + relative.generic_string(), it->path());
  }
  error.clear();
  for (const auto& entry : fs::directory_iterator(web_dir / "diagrams", error)) {
    if (entry.path().extension() == ".svg")
      add("/diagrams/" + entry.path().filename().string(), entry.path());
  }

  static const std::regex kVendorReference(R"re((?:src|href)="(/vendor/[^"?#]+)")re");
  static const std::regex kStylesheetUrl(R"re(url\((['"]?)([^)'"]+)\1\))re");
  const std::string page = read_text(web_dir / "index.html");
  for (std::sregex_iterator it(page.begin(), page.end(), kVendorReference), end; it != end; ++it) {
    const std::string url = (*it)[1];
    const fs::path file = vendor_file(web_dir, url);
    if (file.empty()) continue;
    add(url, file);
    if (!url.ends_with(".css")) continue;
    // What the stylesheet loads, relative to it.
    const std::string css = read_text(file);
    const std::string base = url.substr(0, url.rfind('/') + 1);
    for (std::sregex_iterator ref(css.begin(), css.end(), kStylesheetUrl); ref != end; ++ref) {
      std::string target = (*ref)[2];
      if (target.starts_with("data:") || target.find("://") != std::string::npos || target.starts_with("/"))
        continue;
      target = target.substr(0, target.find_first_of("?#"));
      const std::string loaded = base + target;
      if (const fs::path loaded_file = vendor_file(web_dir, loaded); !loaded_file.empty())
        add(loaded, loaded_file);
    }
  }
  return list;
}

}  // namespace cudojo
