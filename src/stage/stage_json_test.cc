#include "stage/stage_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "stage/contract_info.h"

namespace cudojo {
namespace {

using nlohmann::json;

Stage made_up_stage() {
  Stage stage;
  stage.id = "reduction/9";
  stage.slug = "made-up";
  stage.title = "A made-up stage";
  stage.summary = "Sums with one atomic per block.";
  stage.contract = "one_accumulator";
  stage.kernel = "reduce";
  stage.launch.dynamic_shared_bytes = 1024;
  stage.test_sizes = {1, 257};
  stage.data_sets = {"exact"};
  stage.performance_size = 1 << 20;
  stage.lesson_markdown = "# Guard the value\n";
  stage.starter_source = "__global__ void reduce(const float* X, float* out, int N) {}\n";
  return stage;
}

// Every key of `part` is in `whole` with the same value.
void expect_contains(const json& whole, const json& part) {
  for (const auto& [key, value] : part.items()) {
    ASSERT_TRUE(whole.contains(key)) << key;
    EXPECT_EQ(whole[key], value) << key;
  }
}

TEST(StageJson, SummaryNamesTheStageAndItsKernel) {
  const json summary = stage_summary_json(made_up_stage());
  EXPECT_EQ(summary.size(), 5u) << summary.dump();
  EXPECT_EQ(summary["id"], "reduction/9");
  EXPECT_EQ(summary["alias"], "reduction/made-up");
  EXPECT_EQ(summary["title"], "A made-up stage");
  EXPECT_EQ(summary["summary"], "Sums with one atomic per block.");
  EXPECT_EQ(summary["signature"], "__global__ void reduce(const float* X, float* out, int N)");
}

TEST(StageJson, FactsAddTheStageFileAndItsWordsButNoTexts) {
  const Stage stage = made_up_stage();
  const json facts = stage_facts_json(stage);
  expect_contains(facts, stage_summary_json(stage));
  expect_contains(facts, json(stage));  // contract, kernel, launch, tests, gate as the stage file says
  EXPECT_EQ(facts["launch_text"], describe_launch(stage));
  EXPECT_EQ(facts["driver"], find_contract_info("one_accumulator")->driver);
  EXPECT_EQ(facts["gate_text"], describe_gate(stage));
  EXPECT_FALSE(facts.contains("lesson_markdown"));
  EXPECT_FALSE(facts.contains("starter"));
}

TEST(StageJson, DescriptionAddsLessonMarkdownStarterAndLanguagesUnderOneNameEach) {
  Stage stage = made_up_stage();
  stage.other_starters[Language::kRust] = "// a Rust starter\n";
  const json description = stage_description_json(stage);
  expect_contains(description, stage_facts_json(stage));
  EXPECT_EQ(description["lesson_markdown"], "# Guard the value\n");
  EXPECT_EQ(description["starter"], stage.starter_source);
  EXPECT_EQ(description.size(), stage_facts_json(stage).size() + 3);
  // Only the languages the stage has a starter in; Python has none here.
  const json& languages = description["languages"];
  ASSERT_EQ(languages.size(), 2u);
  EXPECT_EQ(languages["cuda"]["starter"], stage.starter_source);
  EXPECT_EQ(languages["rust"]["starter"], "// a Rust starter\n");
  EXPECT_EQ(languages["rust"]["extension"], ".rs");
  EXPECT_EQ(languages["rust"]["signature"], describe_signature(stage, Language::kRust));
  EXPECT_FALSE(languages.contains("python"));
}

TEST(StageJson, AStageWithAnUnknownContractHasNoDriverTextInsteadOfACrash) {
  Stage stage = made_up_stage();
  stage.contract = "no_such_contract";
  EXPECT_EQ(stage_facts_json(stage)["driver"], "");
}

}  // namespace
}  // namespace cudojo
