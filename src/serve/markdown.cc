#include "serve/markdown.h"

#include <cmark-gfm.h>

#include <cstdlib>
#include <memory>

namespace cudojo {

std::string markdown_to_html(const std::string& markdown) {
  std::unique_ptr<char, decltype(&std::free)> html(
      cmark_markdown_to_html(markdown.data(), markdown.size(), CMARK_OPT_DEFAULT), &std::free);
  return html ? std::string(html.get()) : std::string();
}

}  // namespace cudojo
