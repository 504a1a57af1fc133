// What both Store implementations share and nothing else needs: the learner-name rule, token
// generation, the clock of stores that keep time themselves, and what a full address share says.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cudojo::store_internal {

// The name as stored (spaces around trimmed), or nullopt when it breaks the rule: 1 to 40
// characters (not bytes) of letters of any script, digits, '_', '.', '-', an apostrophe, and single
// spaces between words; nothing invisible or direction-changing. Learners and staff alike.
std::optional<std::string> checked_name(const std::string& requested);
// The rule checked_name applies, as a sentence for whoever typed the name.
inline constexpr const char* kNameRule =
    "a name is 1 to 40 characters: letters, digits, '_', '.', '-', an apostrophe, and single spaces between "
    "words";
// checked_name, or StoreError(kInvalidName) saying the rule.
std::string checked_learner_name(const std::string& requested);

// A fresh class invite code: 10 characters of Crockford's base 32, upper case.
std::string random_invite_code();

// 256 random bits as lowercase hex; throws StoreError(kInternal) without randomness.
std::string random_token();

// Seconds since the epoch, by this machine's clock.
double now_seconds();

// The message of StoreError(kAddressBusy), `pending` being the address's jobs queued or running: both
// stores refuse in the same words.
std::string address_busy_message(std::int64_t pending);

}  // namespace cudojo::store_internal
