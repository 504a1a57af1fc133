// What both Store implementations share and nothing else needs: the learner-name rule, token
// generation, the clock of stores that keep time themselves, and what a full address share says.
#pragma once

#include <cstdint>
#include <string>

namespace cudojo::store_internal {

// The name as stored (spaces around trimmed); throws StoreError(kInvalidName) when it breaks the
// rule: 1 to 40 characters of letters, digits, '_', '.', '-', and single spaces between words.
std::string checked_learner_name(const std::string& requested);

// 256 random bits as lowercase hex; throws StoreError(kInternal) without randomness.
std::string random_token();

// Seconds since the epoch, by this machine's clock.
double now_seconds();

// The message of StoreError(kAddressBusy), `pending` being the address's jobs queued or running: both
// stores refuse in the same words.
std::string address_busy_message(std::int64_t pending);

}  // namespace cudojo::store_internal
