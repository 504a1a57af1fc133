// Lessons are markdown; the page shows them as HTML rendered by cmark-gfm. Raw HTML in the source
// is dropped (cmark's safe mode), so a lesson cannot inject script into the page.
#pragma once

#include <string>

namespace cudojo {

std::string markdown_to_html(const std::string& markdown);

}  // namespace cudojo
