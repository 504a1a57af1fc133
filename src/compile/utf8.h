// Text that leaves the compiler (diagnostics, logs, excerpts) goes into JSON, which must be valid
// UTF-8; a learner's source is not (a Latin-1 comment), and a log cut at a byte limit can end inside
// a character. These two helpers are the whole remedy: replace what is not UTF-8, and cut only
// between characters. Header-only so that every folder can use it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cudojo {

// The length of the valid UTF-8 sequence starting at text[at] (1 to 4), or 0 when the bytes there
// do not start one (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, or a
// sequence cut short).
inline std::size_t utf8_sequence_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) return 0;
  }
  return length;
}

// The text with every byte that is not part of valid UTF-8 replaced by U+FFFD.
inline std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

// The longest prefix of at most max_bytes bytes that does not end inside a UTF-8 character.
inline std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  // Back off over continuation bytes (at most three) to the start of the character cut in two.
  for (int i = 0; i < 3 && end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80; ++i) --end;
  return text.substr(0, end);
}

// The 1-based column, in characters, of the byte at offset `byte` of one line.
inline int utf8_column(std::string_view line, std::size_t byte) {
  int column = 1;
  for (std::size_t i = 0; i < byte && i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) ++column;
  }
  // A caret under the second byte of a character points at that character.
  if (byte < line.size() && (static_cast<unsigned char>(line[byte]) & 0xC0) == 0x80) --column;
  return column;
}

}  // namespace cudojo
