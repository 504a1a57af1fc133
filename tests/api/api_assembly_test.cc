// POST /api/assembly (issue #28) against a real `cudojo serve`: who may ask (any signed-in account,
// nobody else), what it answers for the reduction/3 starter beside its reference, PTX lines tied to
// the source line they came from, a compile error, every malformed request, and the bounds on the
// CPU it takes (one assembly in flight per account, a few across the server). No GPU is needed;
// ptxas is, and without it every test here skips and says so.
#include <algorithm>
#include <fstream>
#include <thread>

#include "api_class_support.h"
#include "common/environment.h"
#include "run/tools.h"

namespace cudojo::api_testing {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// The 1-based line of `text` holding `needle`; 0 when none does.
int line_holding(const std::string& text, const std::string& needle) {
  std::istringstream lines(text);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (line.find(needle) != std::string::npos) return number;
  }
  return 0;
}

// A kernel whose compile takes seconds of CPU but stays inside the compile budget (about 3 s on
// a 2-core machine; 1000 terms take 10 s): long enough to overlap requests on purpose.
std::string slow_source() {
  return "template <int Low, int High> __device__ __forceinline__ float terms(const float* X, int N) {\n"
         "    if constexpr (High - Low == 1) return X[(threadIdx.x * 131 + Low * 7) % N] * Low;\n"
         "    else return terms<Low, (Low + High) / 2>(X, N) + terms<(Low + High) / 2, High>(X, N);\n"
         "}\n"
         "__global__ void reduce(const float* X, float* out, int N) { atomicAdd(out, terms<0, 600>(X, N)); "
         "}\n";
}

// As the server counts them: one a core, at most four.
int assemblies_at_once() { return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u)); }

class AssemblyApi : public ClassApi {
 protected:
  void SetUp() override {
    ClassApi::SetUp();
    if (IsSkipped()) return;
    if (find_cuda_tool("ptxas", env::kPtxas).empty())
      GTEST_SKIP() << "no ptxas on PATH or in /usr/local/cuda/bin: the server cannot show assembly here";
    start({"--workers", "0"});
  }
  Answer assembly(const std::string& token, const json& body) {
    return ask("POST", "/api/assembly", token, body);
  }
  static json starter_body(bool ptx = false, bool sass = false) {
    return {{"stage", "reduction/3"},
            {"language", "cuda"},
            {"source", read_text(testing::course_file("03-block-tree/starter.cu"))},
            {"ptx", ptx},
            {"sass", sass}};
  }
  static const json& row(const json& view, const std::string& whose) {
    for (const auto& item : view["kernels"])
      if (item["whose"] == whose && item["kernel"] == "reduce") return item;
    ADD_FAILURE() << "no row for " << whose << " in " << view.dump();
    static const json none;
    return none;
  }
};

TEST_F(AssemblyApi, AnySignedInAccountMayAskAndNobodyElse) {
  const std::string admin = make_admin();
  const MadeClass made = make_class(admin, "Kernels 101", "Ines Instructor");
  const std::string learner = sign_in("ada");
  EXPECT_EQ(assembly("", starter_body()).status, 401);
  EXPECT_EQ(assembly("not-a-token", starter_body()).status, 401);
  for (const auto& [role, token] : std::vector<std::pair<std::string, std::string>>{
           {"learner", learner}, {"instructor", made.instructor}, {"administrator", admin}}) {
    const Answer answer = assembly(token, starter_body());
    EXPECT_EQ(answer.status, 200) << role << ": " << answer.text;
    EXPECT_EQ(answer.body["stage"], "reduction/3") << role;
    EXPECT_EQ(answer.body["kernels"].size(), 2u) << role << ": " << answer.text;
  }
}

TEST_F(AssemblyApi, TheStarterSitsBesideTheReferenceAsTheCliShowsIt) {
  const Answer answer = assembly(sign_in("ada"), starter_body());
  ASSERT_EQ(answer.status, 200) << answer.text;
  EXPECT_EQ(answer.body["arch"], "sm_90");
  EXPECT_EQ(answer.body["language"], "cuda");
  EXPECT_EQ(answer.body["launch"]["threads_per_block"], 256);
  EXPECT_EQ(answer.body["launch"]["dynamic_shared_bytes"], 1024);
  const json& yours = row(answer.body, "yours");
  const json& reference = row(answer.body, "reference");
  // The starter adds with one atomic per element and waits at no barrier; the block tree does.
  EXPECT_EQ(yours["resources"]["barriers"], 0);
  EXPECT_EQ(reference["resources"]["barriers"], 1);
  EXPECT_GT(yours["resources"]["registers"].get<int>(), 0);
  EXPECT_EQ(yours["resources"]["spill_store_bytes"], 0);
  EXPECT_EQ(yours["resources"]["stack_frame_bytes"], 0);
  EXPECT_EQ(reference["occupancy"]["limited_by"], "warps");
  EXPECT_FALSE(answer.body.contains("ptx")) << "PTX only when asked";
  // The same figures as `cudojo asm --json`: one library answers both.
  const auto cli =
      testing::run_cli("asm reduction/3 " + testing::course_file("03-block-tree/starter.cu") + " --json");
  ASSERT_EQ(cli.exit_code, 0) << cli.out;
  EXPECT_EQ(answer.body["kernels"], json::parse(cli.out)["kernels"]);
}

TEST_F(AssemblyApi, PtxAndSassLinesNameTheSourceLineTheyCameFrom) {
  const json body = starter_body(true, true);
  const int atomic_line = line_holding(body["source"], "atomicAdd");
  ASSERT_GT(atomic_line, 0);
  const Answer answer = assembly(sign_in("ada"), body);
  ASSERT_EQ(answer.status, 200) << answer.text;
  ASSERT_TRUE(answer.body.contains("ptx")) << "PTX was asked for: " << answer.text;
  int atomics = 0;
  for (const auto& line : answer.body["ptx"]) {
    if (line["text"].get<std::string>().find("atom.global.add.f32") == std::string::npos) continue;
    ++atomics;
    EXPECT_EQ(line["line"], atomic_line) << line;
  }
  EXPECT_EQ(atomics, 1) << answer.body["ptx"];
  if (!answer.body.contains("sass")) {
    // This machine's toolkit lacks nvdisasm: the answer says so instead.
    EXPECT_NE(answer.body.value("sass_note", "").find("nvdisasm"), std::string::npos) << answer.text;
    return;
  }
  int tied = 0;
  for (const auto& function : answer.body["sass"])
    for (const auto& line : function["lines"])
      if (line["line"] == atomic_line) ++tied;
  EXPECT_GT(tied, 0) << answer.body["sass"];
}

TEST_F(AssemblyApi, ACompileErrorAnswersWithItsDiagnostics) {
  const Answer answer =
      assembly(sign_in("ada"), {{"stage", "reduction/2"}, {"source", compile_error_source()}});
  ASSERT_EQ(answer.status, 200) << answer.text;
  EXPECT_EQ(answer.body["compile"]["ok"], false);
  ASSERT_FALSE(answer.body["compile"]["diagnostics"].empty()) << answer.text;
  EXPECT_EQ(answer.body["compile"]["diagnostics"][0]["severity"], "error");
  EXPECT_GT(answer.body["compile"]["diagnostics"][0]["line"].get<int>(), 0);
  EXPECT_FALSE(answer.body.contains("kernels"));
}

TEST_F(AssemblyApi, EveryMalformedRequestIsRefusedWithItsReason) {
  const std::string token = sign_in("ada");
  struct Case {
    std::string why, body;
    int status;
  };
  const json starter = starter_body();
  auto with = [&](const char* name, const json& value) {
    json body = starter;
    body[name] = value;
    return body.dump();
  };
  auto without = [&](const char* name) {
    json body = starter;
    body.erase(name);
    return body.dump();
  };
  for (const Case& refused :
       std::vector<Case>{{"not JSON", "{\"stage\": ", 400},
                         {"not an object", "[1, 2]", 400},
                         {"no stage", without("stage"), 400},
                         {"a stage that is a number", with("stage", 3), 400},
                         {"no source", without("source"), 400},
                         {"a source that is not a string", with("source", json::array({"x"})), 400},
                         {"ptx not true or false", with("ptx", "yes"), 400},
                         {"sass not true or false", with("sass", 1), 400},
                         {"an unknown language", with("language", "fortran"), 400},
                         {"a language that is not a string", with("language", 7), 400},
                         {"a NUL in the source", with("source", std::string("int x;\0", 7)), 400},
                         {"an unknown stage", with("stage", "reduction/99"), 404},
                         {"a source past the judge's limit",
                          with("source", std::string(kDefaultLimits.max_source_bytes + 1, ' ')), 413}}) {
    const Answer answer = ask("POST", "/api/assembly", token, refused.body);
    EXPECT_EQ(answer.status, refused.status) << refused.why << ": " << answer.text;
    EXPECT_FALSE(answer.body.value("error", "").empty()) << refused.why << ": " << answer.text;
  }
  // The limit as the sentence states it, and JSON only.
  const Answer too_large = ask("POST", "/api/assembly", token,
                               with("source", std::string(kDefaultLimits.max_source_bytes + 1, ' ')));
  EXPECT_NE(too_large.body.value("error", "").find(std::to_string(kDefaultLimits.max_source_bytes)),
            std::string::npos);
  auto form = client().Post("/api/assembly", {{"Authorization", "Bearer " + token}}, "stage=reduction/3",
                            "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 415);
}

TEST_F(AssemblyApi, OneAssemblyAtATimePerAccount) {
  const std::string ada = sign_in("ada"), bob = sign_in("bob");
  const json slow = {{"stage", "reduction/3"}, {"source", slow_source()}};
  Answer first;
  std::thread in_flight([&] { first = assembly(ada, slow); });
  std::this_thread::sleep_for(500ms);  // the slow compile has begun, and lasts seconds
  const Answer second = assembly(ada, starter_body());
  EXPECT_EQ(second.status, 429) << second.text;
  EXPECT_FALSE(second.header("Retry-After").empty());
  EXPECT_NE(second.body.value("error", "").find("previous assembly"), std::string::npos) << second.text;
  // Another account is not held up by ada's (when the server runs more than one at once).
  if (assemblies_at_once() > 1) EXPECT_EQ(assembly(bob, starter_body()).status, 200);
  in_flight.join();
  EXPECT_EQ(first.status, 200) << first.text;
  EXPECT_EQ(first.body["kernels"].size(), 2u) << first.text;
  // Her place is given back with the answer.
  EXPECT_EQ(assembly(ada, starter_body()).status, 200);
}

TEST_F(AssemblyApi, AFewAssembliesAtOnceAcrossTheServer) {
  const int at_once = assemblies_at_once();
  const json slow = {{"stage", "reduction/3"}, {"source", slow_source()}};
  std::vector<std::string> tokens;
  for (int i = 0; i <= at_once; ++i) tokens.push_back(sign_in("learner" + std::to_string(i)));
  std::vector<Answer> answers(at_once);
  std::vector<std::thread> in_flight;
  for (int i = 0; i < at_once; ++i)
    in_flight.emplace_back([&, i] { answers[i] = assembly(tokens[i], slow); });
  std::this_thread::sleep_for(500ms);
  const Answer past_limit = assembly(tokens[at_once], starter_body());
  EXPECT_EQ(past_limit.status, 503) << past_limit.text;
  EXPECT_FALSE(past_limit.header("Retry-After").empty());
  for (auto& thread : in_flight) thread.join();
  for (const Answer& answer : answers) EXPECT_EQ(answer.status, 200) << answer.text;
  EXPECT_EQ(assembly(tokens[at_once], starter_body()).status, 200);
}

}  // namespace
}  // namespace cudojo::api_testing
