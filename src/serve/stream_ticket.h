// Tickets for event streams. A browser's EventSource cannot send an Authorization header, and a
// token in the URL would land in every proxy's access log, so the page first asks for a ticket
// (POST /api/jobs/{id}/ticket, with its token in the header) and opens the stream with that
// instead. A ticket names one learner and one job, lasts stream_ticket_seconds, opens one stream
// (a node remembers the tickets it has taken until they expire), and is signed with HMAC-SHA256
// keyed by the learner's stored token digest: any node of a shared store can check it without
// keeping anything, and a ticket dies with the token it was issued under.
//
//   v1.<learner id>.<job id>.<expires, unix seconds>.<nonce>.<signature>
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace cudojo {

struct StreamTicket {
  std::int64_t learner_id = 0;
  std::int64_t job_id = 0;
  std::int64_t expires_at = 0;  // unix seconds
  std::string nonce;
};

// A signed ticket; throws StoreError(kInternal) without randomness.
std::string issue_stream_ticket(const std::string& token_digest, std::int64_t learner_id, std::int64_t job_id,
                                std::int64_t expires_at);
// The ticket's fields, read but not yet trusted (the learner id says whose digest checks it);
// nullopt when it is not a ticket's shape.
std::optional<StreamTicket> read_stream_ticket(std::string_view text);
// Whether `text` carries the signature `token_digest` gives it.
bool stream_ticket_is_signed_by(std::string_view text, const std::string& token_digest);

// The tickets this node has taken, each kept until it expires: a ticket opens one stream only.
class UsedStreamTickets {
 public:
  // True the first time `ticket` is offered before it expires; false after.
  bool take(const StreamTicket& ticket, std::int64_t now);

 private:
  std::mutex mutex_;
  std::multimap<std::int64_t, std::string> by_expiry_;
  std::map<std::string, std::int64_t> used_;
};

}  // namespace cudojo
