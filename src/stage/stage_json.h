// A stage as the learner reads it, in JSON: built here once, so `cudojo stages --json`,
// `cudojo show --json` and the server's /api/stages answers cannot drift apart. The server adds
// only what needs the server (the lesson rendered to HTML); docs/openapi.yaml lists the keys.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "stage/stage.h"

namespace cudojo {

// id, alias, title, summary, signature: one entry of GET /api/stages.
nlohmann::json stage_summary_json(const Stage& stage);

// The summary and the stage file's facts (contract, kernel, launch, tests, gate), with the
// launch, driver and gate in words (launch_text, driver, gate_text): one entry of
// `cudojo stages --json`.
nlohmann::json stage_facts_json(const Stage& stage);

// The facts with the texts a learner starts from: lesson_markdown and starter. Printed by
// `cudojo show --json`; GET /api/stages/{id} sends it with lesson_html added.
nlohmann::json stage_description_json(const Stage& stage);

}  // namespace cudojo
