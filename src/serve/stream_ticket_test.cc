#include "serve/stream_ticket.h"

#include <gtest/gtest.h>

#include "serve/store.h"

namespace cudojo {
namespace {

TEST(StreamTicket, AnIssuedTicketReadsBackAndIsSignedByItsLearnersDigest) {
  const std::string digest = token_digest("a token");
  const std::string ticket = issue_stream_ticket(digest, 7, 42, 2'000'000'000);
  const auto read = read_stream_ticket(ticket);
  ASSERT_TRUE(read) << ticket;
  EXPECT_EQ(read->learner_id, 7);
  EXPECT_EQ(read->job_id, 42);
  EXPECT_EQ(read->expires_at, 2'000'000'000);
  EXPECT_TRUE(stream_ticket_is_signed_by(ticket, digest));
  EXPECT_FALSE(stream_ticket_is_signed_by(ticket, token_digest("another token")));
  EXPECT_EQ(ticket.find("a token"), std::string::npos);
  EXPECT_NE(issue_stream_ticket(digest, 7, 42, 2'000'000'000), ticket);  // a fresh nonce each time
}

TEST(StreamTicket, ChangingAnyFieldBreaksTheSignature) {
  const std::string digest = token_digest("a token");
  const std::string ticket = issue_stream_ticket(digest, 7, 42, 2'000'000'000);
  std::string other_job = ticket;
  other_job.replace(other_job.find(".42."), 4, ".43.");
  ASSERT_TRUE(read_stream_ticket(other_job));
  EXPECT_FALSE(stream_ticket_is_signed_by(other_job, digest));
  std::string later = ticket;
  later.replace(later.find(".2000000000."), 12, ".2000000001.");
  EXPECT_FALSE(stream_ticket_is_signed_by(later, digest));
}

TEST(StreamTicket, WhatIsNotATicketIsNotRead) {
  for (const char* text :
       {"", "v1", "v1.1.2.3.4.5", "v2.1.2.3.0123456789abcdef.0123456789abcdef0123456789abcdef",
        "v1.x.2.3.0123456789abcdef.0123456789abcdef0123456789abcdef",
        "v1.-1.2.3.0123456789abcdef.0123456789abcdef0123456789abcdef"})
    EXPECT_FALSE(read_stream_ticket(text)) << text;
  EXPECT_FALSE(read_stream_ticket(std::string(500, 'v')));
}

TEST(UsedStreamTickets, ATicketOpensOneStreamAndNoneOnceExpired) {
  UsedStreamTickets used;
  const StreamTicket ticket{7, 42, 1000, "0123456789abcdef"};
  EXPECT_TRUE(used.take(ticket, 990));
  EXPECT_FALSE(used.take(ticket, 991));
  const StreamTicket expired{7, 42, 1000, "fedcba9876543210"};
  EXPECT_FALSE(used.take(expired, 1001));
}

}  // namespace
}  // namespace cudojo
