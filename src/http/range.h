// Byte ranges (RFC 9110 section 14): a static file answers one range or its whole body, never a
// multipart answer. A client that asks for many ranges gets the whole body once (a server may
// ignore Range), so no request can make an answer larger than the file; one that asks only for
// bytes past the end gets 416.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace cudojo::http {

struct RangeAnswer {
  enum class Kind { kWhole, kPart, kUnsatisfiable };
  Kind kind = Kind::kWhole;
  std::size_t first = 0;   // kPart: the first byte sent
  std::size_t length = 0;  // kPart: how many bytes from `first`
};

// What `range` (the Range field's value, nullopt when absent) asks of a body of `size` bytes.
// Malformed or multiple ranges, and units other than bytes, are ignored: the whole body.
RangeAnswer answer_range(std::optional<std::string_view> range, std::size_t size);

}  // namespace cudojo::http
