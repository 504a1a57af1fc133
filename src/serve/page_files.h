// Which files the page uses, found from the page itself: its own files (and its modules under
// web/js/), the lesson diagrams, and
// every /vendor/ script and stylesheet web/index.html names, with whatever those stylesheets load
// (KaTeX's fonts). Nothing else under web/node_modules is served: not the packages' demo pages,
// read-me files or sources, which would otherwise run on the app's origin.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cudojo {

struct PageFile {
  std::string url;  // "/vendor/katex/katex.min.js"
  std::filesystem::path file;
};

struct PageFileList {
  std::vector<PageFile> files;
  // What the page names but the installation lacks (run scripts/setup.sh), one sentence each.
  std::vector<std::string> missing;
};

PageFileList find_page_files(const std::filesystem::path& web_dir);

}  // namespace cudojo
