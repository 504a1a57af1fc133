// What both Store implementations share and nothing else needs: the learner-name rule, token
// generation, the clock of stores that keep time themselves, and what a full address share says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "serve/store.h"
#include "serve/store_rejudging.h"

namespace cudojo::store_internal {

// The name as stored (spaces around trimmed), or nullopt when it breaks the rule: 1 to 40
// characters (not bytes) of letters of the common scripts, digits, '_', '.', '-', an apostrophe, and
// single spaces between words; nothing invisible, blank or direction-changing. Learners and staff
// alike.
std::optional<std::string> checked_name(const std::string& requested);
// Whether `text` holds a code point that is not valid UTF-8, a control character, or one that is
// invisible or changes direction (spaces of other widths, fillers, joiners, bidi controls): what a
// class's name, an address or any other text shown beside others must not hold.
bool has_invisible_or_control(std::string_view text);

// The rule checked_name applies, as a sentence for whoever typed the name.
inline constexpr const char* kNameRule =
    "a name is 1 to 40 characters: letters, digits, '_', '.', '-', an apostrophe, and single spaces between "
    "words";
// checked_name, or StoreError(kInvalidName) saying the rule.
std::string checked_learner_name(const std::string& requested);

// Refuses a learner that `wanted`'s caps or the class's names do not allow, given what the class holds
// now (counted by the caller in the insert's own transaction): StoreError kConflict with the class's
// size, kTooManyJoins past its hourly joins, kNameTaken for a name an active learner has.
void check_new_learner(const NewLearner& wanted, const std::string& name, std::int64_t active_learners,
                       std::int64_t invites_last_hour, bool name_taken);

// StoreError kConflict when a class of `active_learners` is over `max_class_learners` (0: no cap).
void check_class_size(std::int64_t active_learners, std::int64_t max_class_learners);
// The refusal of a roster row whose student id is a removed learner's (kConflict).
StoreError removed_student(const std::string& student_id, const std::string& name);
// The refusal of a change to a learner: another active learner has `name` (`name_clash`), or another
// learner has `student_id` (kNameTaken).
StoreError learner_clash(bool name_clash, const std::string& name,
                         const std::optional<std::string>& student_id);

// StoreError kConflict when the member of staff whose role changes is an instructor of the class
// (`is_instructor`) and it has no other (`other_instructors`).
void check_instructor_kept(bool is_instructor, std::int64_t other_instructors);

// A fresh class invite code: 10 characters of Crockford's base 32, upper case.
std::string random_invite_code();

// 256 random bits as lowercase hex; throws StoreError(kInternal) without randomness.
std::string random_token();

// Seconds since the epoch, by this machine's clock.
double now_seconds();

// The message of StoreError(kAddressBusy), `pending` being the address's jobs queued or running: both
// stores refuse in the same words.
std::string address_busy_message(std::int64_t pending);

// A stored rejudging state back to its enum; an unknown word reads as judging.
RejudgingState parse_rejudging_state(std::string_view word);
// Throws StoreError kConflict when a rejudging's filter matched no job, or more than `max_jobs`.
void check_rejudging_size(std::int64_t matched, std::int64_t max_jobs);
// Throws StoreError kConflict unless the rejudging is still judging (`state` as stored) and, when
// applying, none of its reruns (`waiting`) is left to judge.
// When applying, also refused: a rerun that ended without a verdict on the kernel (`unjudged`:
// internal_error or no_device where its job had another verdict, which it would replace), or reruns judged
// under more than one version of a stage (`versions`: a reload came in the middle).
void check_rejudging_open(std::int64_t rejudging_id, const std::string& state, bool apply,
                          std::int64_t waiting, std::int64_t unjudged = 0, std::int64_t versions = 0);

// Throws unless a link to a job may be made (serve/store_shares.h): kNotAllowed when the learner's
// class has links turned off (`class_shares` false); kConflict unless the job is finished (`state` as
// stored) and its learner has fewer than `max_live` live links to other jobs (`live_elsewhere`).
void check_new_share(const std::string& state, std::int64_t live_elsewhere, std::int64_t max_live,
                     bool class_shares);
// `note` with how many live links turning a class's links off stopped, when it stopped any.
AuditNote with_links_stopped(AuditNote note, int stopped);
// The longest token a link's lookup hashes; anything longer opens nothing.
inline constexpr std::size_t kMaxShareTokenLength = 128;

}  // namespace cudojo::store_internal
