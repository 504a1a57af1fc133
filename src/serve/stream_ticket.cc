#include "serve/stream_ticket.h"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <charconv>
#include <vector>

#include "serve/store.h"
#include "serve/store_internal.h"

namespace cudojo {

namespace {

constexpr std::string_view kVersion = "v1";

// The signature of a ticket's fields: 128 bits of HMAC-SHA256, as hex.
std::string signature(const std::string& token_digest, std::string_view fields) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  const std::string message = fmt::format("cudojo stream ticket|{}", fields);
  if (!HMAC(EVP_sha256(), token_digest.data(), static_cast<int>(token_digest.size()),
            reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &length)) {
    throw StoreError(StoreErrorCode::kInternal, "HMAC-SHA256 failed");
  }
  std::string hex;
  for (unsigned int i = 0; i < 16 && i < length; ++i) hex += fmt::format("{:02x}", mac[i]);
  return hex;
}

std::vector<std::string_view> split_dots(std::string_view text) {
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t dot = text.find('.');
    parts.push_back(text.substr(0, dot));
    if (dot == std::string_view::npos) return parts;
    text.remove_prefix(dot + 1);
  }
}

std::optional<std::int64_t> whole_number(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value <= 0) return std::nullopt;
  return value;
}

}  // namespace

std::string issue_stream_ticket(const std::string& token_digest, std::int64_t learner_id, std::int64_t job_id,
                                std::int64_t expires_at) {
  const std::string nonce = store_internal::random_token().substr(0, 16);
  const std::string fields = fmt::format("{}.{}.{}.{}.{}", kVersion, learner_id, job_id, expires_at, nonce);
  return fmt::format("{}.{}", fields, signature(token_digest, fields));
}

std::optional<StreamTicket> read_stream_ticket(std::string_view text) {
  if (text.size() > 200) return std::nullopt;
  const auto parts = split_dots(text);
  if (parts.size() != 6 || parts[0] != kVersion) return std::nullopt;
  const auto learner = whole_number(parts[1]);
  const auto job = whole_number(parts[2]);
  const auto expires = whole_number(parts[3]);
  if (!learner || !job || !expires || parts[4].size() != 16 || parts[5].size() != 32) return std::nullopt;
  return StreamTicket{*learner, *job, *expires, std::string(parts[4])};
}

bool stream_ticket_is_signed_by(std::string_view text, const std::string& token_digest) {
  const std::size_t last_dot = text.rfind('.');
  if (last_dot == std::string_view::npos) return false;
  const std::string expected = signature(token_digest, text.substr(0, last_dot));
  const std::string_view given = text.substr(last_dot + 1);
  return given.size() == expected.size() && CRYPTO_memcmp(given.data(), expected.data(), given.size()) == 0;
}

bool UsedStreamTickets::take(const StreamTicket& ticket, std::int64_t now) {
  std::lock_guard lock(mutex_);
  // Forget the tickets that have expired: they are refused by their time anyway.
  while (!by_expiry_.empty() && by_expiry_.begin()->first < now) {
    used_.erase(by_expiry_.begin()->second);
    by_expiry_.erase(by_expiry_.begin());
  }
  if (ticket.expires_at < now) return false;
  // Bounded: past this many live tickets (a client opening streams in a loop), streams are refused
  // until some expire, and the page polls meanwhile. A class opens a few hundred a minute.
  constexpr std::size_t kMaxRemembered = 65536;
  if (used_.size() >= kMaxRemembered) return false;
  if (!used_.emplace(ticket.nonce, ticket.expires_at).second) return false;
  by_expiry_.emplace(ticket.expires_at, ticket.nonce);
  return true;
}

}  // namespace cudojo
