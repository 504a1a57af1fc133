// Who sent a request. Behind a proxy (the nginx of docs/DEPLOY.md) every connection comes from the
// proxy's address, so the per-address limits (connections, sign-ups, the queue's share) would
// count the whole class as one client. A proxy the deployment names as trusted says who its
// client was in X-Forwarded-For, appending the address it saw; cudojo believes only the entries
// its trusted proxies added: walking from the right, the first address that is not a trusted proxy
// is the client. Anything a client writes to the left of that is never read, so it cannot pose as
// another address.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudojo::http {

class TrustedProxies {
 public:
  // Addresses ("127.0.0.1", "::1") and networks ("10.0.0.0/8", "fd00::/8"); nullopt when one is
  // malformed, with `problem` saying which.
  static std::optional<TrustedProxies> parse(const std::vector<std::string>& entries, std::string& problem);

  bool empty() const { return networks_.empty(); }
  bool contains(std::string_view address) const;
  // The client behind a connection from `peer`: the peer itself unless it is a trusted proxy; then
  // the rightmost address of the X-Forwarded-For values (in the order received) that is not a
  // trusted proxy. An entry that is not an address ends the walk: the client is the proxy that
  // passed it on.
  std::string client_address(std::string_view peer, const std::vector<std::string_view>& forwarded_for) const;

 private:
  struct Network {
    std::array<std::uint8_t, 16> address{};  // IPv4 as ::ffff:a.b.c.d
    int prefix_bits = 128;
  };
  std::vector<Network> networks_;
};

// What the per-address limits count a client by: an IPv4 address itself, and an IPv6 address's
// /64 network ("2001:db8:1:2::/64"), since one host is routinely given a whole /64 and could
// otherwise pose as endless addresses. Text that is not an address is returned as it is.
std::string address_group(std::string_view address);

// An address in its usual text form, an IPv4 address mapped into IPv6 ("::ffff:1.2.3.4") written
// as IPv4; nullopt when `text` is not an address.
std::optional<std::string> normalized_address(std::string_view text);

}  // namespace cudojo::http
