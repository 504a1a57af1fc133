#include "stage/stage_json.h"

#include <nlohmann/json.hpp>

#include "stage/contract_info.h"

namespace cudojo {

nlohmann::json stage_summary_json(const Stage& stage) {
  return {{"id", stage.id},
          {"alias", stage.slug_id()},
          {"title", stage.title},
          {"summary", stage.summary},
          {"signature", describe_signature(stage)}};
}

nlohmann::json stage_facts_json(const Stage& stage) {
  nlohmann::json facts = stage;  // slug, contract, kernel, launch, tests, gate
  facts.update(stage_summary_json(stage));
  facts["launch_text"] = describe_launch(stage);
  // A loaded stage always names a known contract (load_stage checks); a stage built in code
  // might not, and gets no driver text rather than a crash.
  const ContractInfo* contract = find_contract_info(stage.contract);
  facts["driver"] = contract ? contract->driver : "";
  facts["gate_text"] = describe_gate(stage);
  facts["tests_text"] = describe_tests(stage);
  return facts;
}

nlohmann::json stage_description_json(const Stage& stage) {
  nlohmann::json description = stage_facts_json(stage);
  description["lesson_markdown"] = stage.lesson_markdown;
  description["starter"] = stage.starter_source;
  // Every language the stage can be written in: what the kernel looks like there and where to start.
  nlohmann::json languages = nlohmann::json::object();
  for (const Language language : all_languages()) {
    const std::string* starter = stage.starter(language);
    if (!starter) continue;
    languages[std::string(to_string(language))] = {{"name", display_name(language)},
                                                   {"signature", describe_signature(stage, language)},
                                                   {"starter", *starter},
                                                   {"extension", source_extension(language)},
                                                   {"editor_mode", editor_mode(language)}};
  }
  description["languages"] = languages;
  return description;
}

}  // namespace cudojo
