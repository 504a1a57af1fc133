#include "serve/markdown.h"

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>

#include <cstdlib>
#include <memory>
#include <mutex>

namespace cudojo {

std::string markdown_to_html(const std::string& markdown) {
  // GitHub's extensions: the lessons' tables, and strikethrough. Registered once per process.
  static std::once_flag registered;
  std::call_once(registered, [] { cmark_gfm_core_extensions_ensure_registered(); });
  std::unique_ptr<cmark_parser, decltype(&cmark_parser_free)> parser(cmark_parser_new(CMARK_OPT_DEFAULT),
                                                                     &cmark_parser_free);
  for (const char* name : {"table", "strikethrough"}) {
    if (cmark_syntax_extension* extension = cmark_find_syntax_extension(name)) {
      cmark_parser_attach_syntax_extension(parser.get(), extension);
    }
  }
  cmark_parser_feed(parser.get(), markdown.data(), markdown.size());
  std::unique_ptr<cmark_node, decltype(&cmark_node_free)> document(cmark_parser_finish(parser.get()),
                                                                   &cmark_node_free);
  if (!document) return {};
  // CMARK_OPT_DEFAULT leaves out CMARK_OPT_UNSAFE: raw HTML in a lesson is dropped, not passed on.
  std::unique_ptr<char, decltype(&std::free)> html(
      cmark_render_html(document.get(), CMARK_OPT_DEFAULT, cmark_parser_get_syntax_extensions(parser.get())),
      &std::free);
  return html ? std::string(html.get()) : std::string();
}

}  // namespace cudojo
