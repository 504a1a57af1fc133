#include "http/client_address.h"

#include <arpa/inet.h>

#include <cstring>

namespace cudojo::http {

namespace {

// The 16 bytes of an address (IPv4 mapped into IPv6), or nullopt.
std::optional<std::array<std::uint8_t, 16>> address_bytes(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  const std::string copy(text);
  std::array<std::uint8_t, 16> bytes{};
  in_addr v4{};
  if (inet_pton(AF_INET, copy.c_str(), &v4) == 1) {
    bytes[10] = bytes[11] = 0xff;
    std::memcpy(bytes.data() + 12, &v4, 4);
    return bytes;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, copy.c_str(), &v6) == 1) {
    std::memcpy(bytes.data(), &v6, 16);
    return bytes;
  }
  return std::nullopt;
}

bool is_mapped_v4(const std::array<std::uint8_t, 16>& bytes) {
  for (int i = 0; i < 10; ++i) {
    if (bytes[i] != 0) return false;
  }
  return bytes[10] == 0xff && bytes[11] == 0xff;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

std::optional<std::string> normalized_address(std::string_view text) {
  const auto bytes = address_bytes(text);
  if (!bytes) return std::nullopt;
  char out[INET6_ADDRSTRLEN] = {};
  if (is_mapped_v4(*bytes)) {
    inet_ntop(AF_INET, bytes->data() + 12, out, sizeof out);
  } else {
    inet_ntop(AF_INET6, bytes->data(), out, sizeof out);
  }
  return std::string(out);
}

std::string address_group(std::string_view address) {
  auto bytes = address_bytes(address);
  if (!bytes) return std::string(address);
  if (is_mapped_v4(*bytes)) return normalized_address(address).value_or(std::string(address));
  for (int i = 8; i < 16; ++i) (*bytes)[i] = 0;
  char out[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, bytes->data(), out, sizeof out);
  return std::string(out) + "/64";
}

std::optional<TrustedProxies> TrustedProxies::parse(const std::vector<std::string>& entries,
                                                    std::string& problem) {
  TrustedProxies proxies;
  for (const std::string& entry : entries) {
    const std::size_t slash = entry.find('/');
    const auto bytes = address_bytes(std::string_view(entry).substr(0, slash));
    Network network;
    bool ok = bytes.has_value();
    if (ok) {
      network.address = *bytes;
      const bool v4 = is_mapped_v4(*bytes) && entry.find(':') == std::string::npos;
      network.prefix_bits = 128;
      if (slash != std::string::npos) {
        const std::string bits = entry.substr(slash + 1);
        const int limit = v4 ? 32 : 128;
        ok = !bits.empty() && bits.size() <= 3 && bits.find_first_not_of("0123456789") == std::string::npos &&
             std::stoi(bits) <= limit;
        if (ok) network.prefix_bits = std::stoi(bits) + (v4 ? 96 : 0);
      }
    }
    if (!ok) {
      problem = "'" + entry + "' is not an address or network (such as 127.0.0.1, ::1 or 10.0.0.0/8)";
      return std::nullopt;
    }
    proxies.networks_.push_back(network);
  }
  return proxies;
}

bool TrustedProxies::contains(std::string_view address) const {
  const auto bytes = address_bytes(trimmed(address));
  if (!bytes) return false;
  for (const Network& network : networks_) {
    bool inside = true;
    for (int bit = 0; bit < network.prefix_bits && inside; ++bit) {
      const std::uint8_t mask = static_cast<std::uint8_t>(0x80 >> (bit % 8));
      inside = ((*bytes)[bit / 8] & mask) == (network.address[bit / 8] & mask);
    }
    if (inside) return true;
  }
  return false;
}

std::string TrustedProxies::client_address(std::string_view peer,
                                           const std::vector<std::string_view>& forwarded_for) const {
  std::string client = normalized_address(peer).value_or(std::string(peer));
  if (!contains(peer)) return client;
  // Every entry, left to right, across the fields in the order they came.
  std::vector<std::string_view> hops;
  for (std::string_view field : forwarded_for) {
    while (!field.empty()) {
      const std::size_t comma = field.find(',');
      hops.push_back(trimmed(field.substr(0, comma)));
      field = comma == std::string_view::npos ? std::string_view() : field.substr(comma + 1);
    }
  }
  for (auto hop = hops.rbegin(); hop != hops.rend(); ++hop) {
    const auto address = normalized_address(*hop);
    if (!address) return client;  // the proxy that passed on a malformed entry
    client = *address;
    if (!contains(*address)) return client;
  }
  return client;
}

}  // namespace cudojo::http
