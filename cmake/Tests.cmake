# The tests and benchmarks: every test binary, its sources, and the ctest entries (labels unit, api,
# e2e, gpu, browser, ...). Included from CMakeLists.txt, so paths are the top folder's.
enable_testing()
include(GoogleTest)

# The store's ceiling, judging nothing (scripts/store-bench.sh): a benchmark, not a test.
add_executable(cudojo_store_bench tests/bench/store_bench.cc)
target_link_libraries(cudojo_store_bench PRIVATE cudojo_serve)
set_target_properties(cudojo_store_bench PROPERTIES BUILD_RPATH "${CUDOJO_RPATH}")

add_executable(cudojo_unit_tests
  src/common/limits_test.cc
  src/common/process_registry_test.cc
  src/stage/stage_test.cc
  src/stage/stage_json_test.cc
  src/stage/stage_parse_test.cc
  src/stage/kernel_scan_test.cc
  src/compile/include_policy_test.cc
  src/compile/nvrtc_compiler_test.cc
  src/compile/diagnostics_test.cc
  src/compile/ptx_barriers_test.cc
  src/compile/ptx_lines_test.cc src/compile/kernel_resources_test.cc src/compile/sass_listing_test.cc
  src/compile/check_build_test.cc
  src/compile/ptx_warp_collectives_test.cc
  src/compile/ptx_planting_test.cc
  src/compile/sandbox_test.cc
  src/compile/frontend_test.cc
  src/check/tolerance_test.cc
  src/check/datasets_test.cc
  src/check/findings_test.cc
  src/check/sanitizer_test.cc
  src/check/barriers_test.cc
  src/check/warp_collectives_test.cc
  src/check/exact_checks_test.cc
  src/compile/ptx_atomics_test.cc
  src/measure/stats_test.cc
  src/measure/profiler_test.cc
  src/gate/gate_test.cc
  src/gate/calibration_test.cc
  src/report/verdict_test.cc
  src/report/report_test.cc
  src/report/text_report_test.cc
  src/run/process_test.cc
  src/run/protocol_test.cc
  src/run/decide_test.cc src/run/hot_spots_test.cc
  src/run/tools_test.cc
  src/run/tool_marks_test.cc
  src/run/judge_test.cc
  src/run/judge_profile_test.cc
  src/run/gpu_profiler_test.cc
  src/run/stage_version_test.cc
  src/run/gpu_lease_test.cc
  src/gpu/gpu_turns_test.cc
  src/gpu/gpu_session_test.cc
  src/run/worker_builds_test.cc
  src/contract/float_sum_judge_test.cc
  src/gate/reference_test.cc
  src/serve/store_learners_test.cc
  src/serve/store_jobs_test.cc
  src/serve/store_queue_test.cc
  src/serve/store_queries_test.cc
  src/serve/store_classes_test.cc
  src/serve/store_rejudging_test.cc
  src/serve/store_shares_test.cc
  src/serve/classroom_test.cc
  src/serve/sqlite_store_test.cc
  src/serve/postgres_store_test.cc
  src/serve/markdown_test.cc
  src/serve/job_streams_test.cc
  src/serve/stream_ticket_test.cc
  src/serve/watched_store_test.cc
  src/serve/page_files_test.cc
  src/lab/output_test.cc
  src/cli/lesson_text.cc
  src/cli/lesson_text_test.cc
  src/cli/show_command.cc
  src/cli/show_command_test.cc
)
target_link_libraries(cudojo_unit_tests PRIVATE cudojo_core GTest::gtest_main)
target_compile_definitions(cudojo_unit_tests PRIVATE CUDOJO_FIXTURES_DIR="${CMAKE_CURRENT_SOURCE_DIR}/tests/fixtures"
  CUDOJO_CUDA_BIN_DIR="${CUDAToolkit_BIN_DIR}")
set_target_properties(cudojo_unit_tests PROPERTIES BUILD_RPATH "${CUDOJO_RPATH}")
# The HTTP front door's own tests (no store, no judge): a binary of their own, so the layer is tested
# as it stands alone.
add_executable(cudojo_http_tests src/http/uri_test.cc src/http/handler_pool_test.cc src/http/range_test.cc src/http/client_address_test.cc
  src/http/router_test.cc src/http/static_files_test.cc src/http/server_limits_test.cc
  src/http/server_streams_test.cc)
target_link_libraries(cudojo_http_tests PRIVATE cudojo_http GTest::gtest_main)
gtest_discover_tests(cudojo_http_tests PROPERTIES LABELS unit)
# A throwaway PostgreSQL cluster on loopback (Debian's postgresql package), started once for every
# test that needs one and stopped after them: the ctest fixture "postgres".
set(CUDOJO_TEST_POSTGRES_DIR "${CMAKE_BINARY_DIR}/test-postgres")
add_test(NAME postgres.start COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/postgres/cluster.sh start ${CUDOJO_TEST_POSTGRES_DIR})
add_test(NAME postgres.stop COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/postgres/cluster.sh stop ${CUDOJO_TEST_POSTGRES_DIR})
set_tests_properties(postgres.start PROPERTIES FIXTURES_SETUP postgres LABELS "postgres"
  ENVIRONMENT "CUDOJO_PG_OPTIONAL=1")
set_tests_properties(postgres.stop PROPERTIES FIXTURES_CLEANUP postgres LABELS "postgres"
  ENVIRONMENT "CUDOJO_PG_OPTIONAL=1")
set(CUDOJO_POSTGRES_ENVIRONMENT "CUDOJO_TEST_POSTGRES_FILE=${CUDOJO_TEST_POSTGRES_DIR}/url")
gtest_discover_tests(cudojo_unit_tests PROPERTIES LABELS unit FIXTURES_REQUIRED postgres
  ENVIRONMENT "${CUDOJO_POSTGRES_ENVIRONMENT}")

# Tests that drive the real cudojo binary (its worker processes and server included).
function(cudojo_binary_test target)
  add_executable(${target} ${ARGN})
  target_link_libraries(${target} PRIVATE cudojo_core GTest::gtest_main)
  target_compile_definitions(${target} PRIVATE
    CUDOJO_BINARY="$<TARGET_FILE:cudojo>"
    CUDOJO_SUBMISSIONS_DIR="${CMAKE_CURRENT_SOURCE_DIR}/tests/submissions")
  set_target_properties(${target} PROPERTIES BUILD_RPATH "${CUDOJO_RPATH}")
  add_dependencies(${target} cudojo)
endfunction()

# End-to-end tests of the CLI. The ones that need a GPU carry the label "gpu" and skip, with the
# reason printed, where no device is present.
cudojo_binary_test(cudojo_e2e_tests tests/e2e/cli_test.cc tests/e2e/cli_asm_test.cc tests/e2e/gpu_check_test.cc tests/e2e/languages_test.cc
  src/cli/cli_conventions_test.cc src/cli/completion_test.cc)
# The completion tests read the man page when there is one (they skip its test otherwise).
if(CUDOJO_HELP2MAN)
  target_compile_definitions(cudojo_e2e_tests PRIVATE CUDOJO_MAN_PAGE="${CMAKE_BINARY_DIR}/cudojo.1")
  add_dependencies(cudojo_e2e_tests cudojo_man)
endif()
gtest_discover_tests(cudojo_e2e_tests TEST_FILTER "Cli*" PROPERTIES LABELS "e2e")
gtest_discover_tests(cudojo_e2e_tests TEST_FILTER "Gpu*" PROPERTIES LABELS "gpu" SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

# The course author's commands on copies of the course: broken stages of each kind, `course check`
# by file and line, `stage new` for every contract checked clean; and the shipped course itself.
cudojo_binary_test(cudojo_course_tests src/cli/course_commands_test.cc)
target_compile_definitions(cudojo_course_tests PRIVATE CUDOJO_SOURCE_DIR="${CMAKE_CURRENT_SOURCE_DIR}")
gtest_discover_tests(cudojo_course_tests TEST_PREFIX "course." PROPERTIES LABELS "course" TIMEOUT 900)
add_test(NAME course.check_shipped COMMAND cudojo course check --course ${CMAKE_CURRENT_SOURCE_DIR}/course)
set_tests_properties(course.check_shipped PROPERTIES LABELS "course" TIMEOUT 900)

# The terminal as a client (issue #27): login, submit, status, history, pull and logout run in-process
# against a real `cudojo serve` on loopback, and as their own processes for Ctrl-C, a server stopped
# mid-wait and Debian's tinyproxy in between (skipped, saying so, without it); no GPU needed.
cudojo_binary_test(cudojo_client_tests tests/client/client_commands_test.cc tests/client/client_jobs_test.cc src/client/http_client_test.cc
  src/client/server_book_test.cc
  tests/client/client_signals_test.cc tests/client/client_proxy_test.cc
  src/cli/client_commands.cc src/cli/client_support.cc src/cli/client_follow.cc src/cli/cli_common.cc)
target_link_libraries(cudojo_client_tests PRIVATE cudojo_client CLI11::CLI11)
gtest_discover_tests(cudojo_client_tests TEST_PREFIX "client." PROPERTIES LABELS "api" TIMEOUT 300)

# API tests: the real server over HTTP, no GPU needed.
cudojo_binary_test(cudojo_api_tests tests/api/api_course_test.cc tests/api/api_jobs_test.cc
  tests/api/api_lifecycle_test.cc tests/api/api_front_door_test.cc tests/api/api_streams_test.cc
  tests/api/api_roles_test.cc tests/api/api_class_roles_test.cc tests/api/api_class_roster_test.cc
  tests/api/api_class_grid_test.cc tests/api/api_rejudging_test.cc tests/api/api_course_change_test.cc
  tests/api/api_withdraw_test.cc tests/api/api_share_test.cc tests/api/api_profile_test.cc
  tests/api/api_assembly_test.cc)
target_link_libraries(cudojo_api_tests PRIVATE PkgConfig::CPP_HTTPLIB)
gtest_discover_tests(cudojo_api_tests PROPERTIES LABELS "api")
# The whole API suite again with every server on PostgreSQL.
add_test(NAME api.postgresql COMMAND cudojo_api_tests)
set_tests_properties(api.postgresql PROPERTIES
  ENVIRONMENT "CUDOJO_API_STORE=postgresql;${CUDOJO_POSTGRES_ENVIRONMENT}"
  FIXTURES_REQUIRED postgres LABELS "api;postgres" TIMEOUT 900)
# Three cudojo processes on one PostgreSQL database (its own cluster): 300 submissions, a judge
# node killed mid-job, the database restarted mid-run; every job judged and recorded once.
add_test(NAME cluster.multi_node
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/tests/cluster/multi_node.py --cudojo $<TARGET_FILE:cudojo>
          --work ${CMAKE_BINARY_DIR}/test-cluster)
set_tests_properties(cluster.multi_node PROPERTIES LABELS "postgres;cluster" TIMEOUT 900)
# The same as hosts: each node in its own network namespace, the database on its own address, one
# judge host cut off while it runs jobs and then restored. Needs root (ip netns); skips otherwise.
# A rejudging across nodes: the course changed and reloaded by SIGHUP, a rejudging cancelled (nothing
# changes), another with a judge node SIGKILLed mid-rerun (each rerun recorded once), then applied.
add_test(NAME cluster.rejudge
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/tests/cluster/rejudge.py --cudojo $<TARGET_FILE:cudojo>
          --work ${CMAKE_BINARY_DIR}/test-rejudge)
set_tests_properties(cluster.rejudge PROPERTIES LABELS "postgres;cluster" TIMEOUT 600)
add_test(NAME cluster.partition
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/tests/cluster/partition.py --cudojo $<TARGET_FILE:cudojo>
          --work ${CMAKE_BINARY_DIR}/test-partition)
set_tests_properties(cluster.partition PROPERTIES LABELS "postgres;cluster" TIMEOUT 300 SKIP_RETURN_CODE 77)
# The same API tests with every client request through Debian's nginx and the configuration
# docs/DEPLOY.md installs (docs/deploy/cudojo-locations.conf).
add_test(NAME api.via_nginx COMMAND cudojo_api_tests)
set_tests_properties(api.via_nginx PROPERTIES ENVIRONMENT "CUDOJO_API_VIA_NGINX=1" LABELS "api;deploy" TIMEOUT 900)

# The front ends' own tests: every course file compiles, hostile files are refused (Python's unittest).
foreach(frontend numba rust)
  add_test(NAME frontends.${frontend}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/tests/frontends/test_${frontend}_frontend.py
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
  set_tests_properties(frontends.${frontend} PROPERTIES LABELS "frontends" TIMEOUT 600)
endforeach()

# Hostile load on loopback (issues #13 and #21): each attack, on a fresh server, while a well-behaved
# client measures its latency; about 2 minutes on 2 cores.
add_test(NAME load.hostile
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/tests/load/hostile_load.py $<TARGET_FILE:cudojo>)
set_tests_properties(load.hostile PROPERTIES LABELS "load" TIMEOUT 400)

# The API through Debian's nginx, configured as docs/DEPLOY.md says (skipped without nginx).
add_test(NAME deploy.nginx
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/tests/deploy/nginx_test.py $<TARGET_FILE:cudojo>)
set_tests_properties(deploy.nginx PROPERTIES LABELS "deploy" TIMEOUT 120 SKIP_RETURN_CODE 77)
# A class of 300 behind the same nginx (issue #23): a roster and its tokens, 300 joins by invite code
# from one address, and the per-address sign-up limit with the proxy trusted and not.
add_test(NAME deploy.class
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/tests/deploy/class_test.py $<TARGET_FILE:cudojo>)
set_tests_properties(deploy.class PROPERTIES LABELS "deploy" TIMEOUT 120 SKIP_RETURN_CODE 77)
# docs/DEPLOY.md's class walkthrough, every command as written, against a server behind nginx; and its
# table of limits against `cudojo serve --list-limits`.
add_test(NAME deploy.walkthrough
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/tests/deploy/walkthrough_test.py $<TARGET_FILE:cudojo>)
set_tests_properties(deploy.walkthrough PROPERTIES LABELS "deploy" TIMEOUT 120 SKIP_RETURN_CODE 77)

# The browser test: Debian's chromium driven by playwright-core (installed by scripts/setup.sh).
add_test(NAME browser.page
  COMMAND node ${CMAKE_CURRENT_SOURCE_DIR}/tests/browser/page_test.cjs $<TARGET_FILE:cudojo>
          ${CMAKE_CURRENT_SOURCE_DIR}/web ${CMAKE_BINARY_DIR}/browser-stage3-compile-error.png)
set_tests_properties(browser.page PROPERTIES LABELS "browser" TIMEOUT 120)
# The instructor's side and the learner's changes for a class (issue #23): roster, deadlines, a late job
# in the grid and the CSV, a token reset signing a browser out, drafts at a shared computer; axe
# checks of every staff view, wide and phone-sized.
add_test(NAME browser.class
  COMMAND node ${CMAKE_CURRENT_SOURCE_DIR}/tests/browser/class_test.cjs $<TARGET_FILE:cudojo>
          ${CMAKE_CURRENT_SOURCE_DIR}/web ${CMAKE_BINARY_DIR}/browser-class)
set_tests_properties(browser.class PROPERTIES LABELS "browser" TIMEOUT 180)
# The Assembly tab: the resource table, and a click on a source line lighting its machine code's lines.
add_test(NAME browser.assembly
  COMMAND node ${CMAKE_CURRENT_SOURCE_DIR}/tests/browser/assembly_test.cjs $<TARGET_FILE:cudojo>
          ${CMAKE_CURRENT_SOURCE_DIR}/web ${CMAKE_BINARY_DIR}/browser-assembly)
set_tests_properties(browser.assembly PROPERTIES LABELS "browser" TIMEOUT 180)
# The lesson's rendering (math, highlighted code, diagrams) in light and dark, wide and phone-sized.
# Rejudging: older stage versions, a rejudging the test judges by SQL, its flips, apply; a TA reads; axe
add_test(NAME browser.rejudge
  COMMAND node ${CMAKE_CURRENT_SOURCE_DIR}/tests/browser/rejudge_test.cjs $<TARGET_FILE:cudojo>
          ${CMAKE_CURRENT_SOURCE_DIR}/web ${CMAKE_BINARY_DIR}/browser-rejudge)
set_tests_properties(browser.rejudge PROPERTIES LABELS "browser" TIMEOUT 120)
# Issue #26, what the page says of a learner's runs: a verdict on its own stage, waiting told honestly
# (no judge, seconds, the server gone), Withdraw, no_device no attempt, marks after a reload, no
# account made by Run; at both widths, light and dark, with axe.
add_test(NAME browser.learner_run
  COMMAND node ${CMAKE_CURRENT_SOURCE_DIR}/tests/browser/learner_run_test.cjs $<TARGET_FILE:cudojo>
          ${CMAKE_CURRENT_SOURCE_DIR}/web ${CMAKE_BINARY_DIR}/browser-learner-run)
set_tests_properties(browser.learner_run PROPERTIES LABELS "browser" TIMEOUT 180)
# Navigation and keyboard (issue #26): landing text, skip links, the stage in view on a phone, the
# title, Back and Forward, leaving the editor, arrow-key tabs, History on a phone; both widths and
# schemes, axe.
add_test(NAME browser.navigation
  COMMAND node ${CMAKE_CURRENT_SOURCE_DIR}/tests/browser/navigation_test.cjs $<TARGET_FILE:cudojo>
          ${CMAKE_CURRENT_SOURCE_DIR}/web ${CMAKE_BINARY_DIR}/browser-navigation)
set_tests_properties(browser.navigation PROPERTIES LABELS "browser" TIMEOUT 180)
# Lessons for any GPU (issue #26): every lesson's figures from the judging GPU's calibration (the
# H200's as an example), no repository paths, code and formulas that fit or scroll, legible
# diagrams, the Rust signature the starter asks for; both widths and schemes, axe.
add_test(NAME browser.lesson_gpu
  COMMAND node ${CMAKE_CURRENT_SOURCE_DIR}/tests/browser/lesson_gpu_test.cjs $<TARGET_FILE:cudojo>
          ${CMAKE_CURRENT_SOURCE_DIR}/web ${CMAKE_BINARY_DIR}/browser-lesson-gpu)
set_tests_properties(browser.lesson_gpu PROPERTIES LABELS "browser" TIMEOUT 300)
# A link to one job (issue #26): made under a run's verdict, shown once with Copy, opened signed out
# (verdict, report, read-only source, nothing of the learner), said to be shared after a reload, a new
# link stopping the old, Stop sharing; both widths and schemes, axe.
add_test(NAME browser.share
  COMMAND node ${CMAKE_CURRENT_SOURCE_DIR}/tests/browser/share_test.cjs $<TARGET_FILE:cudojo>
          ${CMAKE_CURRENT_SOURCE_DIR}/web ${CMAKE_BINARY_DIR}/browser-share)
set_tests_properties(browser.share PROPERTIES LABELS "browser" TIMEOUT 180)
add_test(NAME browser.lesson
  COMMAND node ${CMAKE_CURRENT_SOURCE_DIR}/tests/browser/lesson_test.cjs ${CMAKE_CURRENT_SOURCE_DIR}/web
          ${CMAKE_BINARY_DIR}/browser-lesson)
set_tests_properties(browser.lesson PROPERTIES LABELS "browser" TIMEOUT 120)

# docs/openapi.yaml documents every route src/serve/api.cc registers, each with who may call it
# (x-roles), and nothing the server does not answer.
add_test(NAME docs.openapi_routes
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/tests/docs/openapi_routes_test.py ${CMAKE_CURRENT_SOURCE_DIR})
set_tests_properties(docs.openapi_routes PROPERTIES LABELS "unit")

# No include from a lower folder to a higher one (the table is the libraries' own, above).
add_test(NAME layers.includes
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/tests/layers/check_layers.py ${CMAKE_BINARY_DIR}/layers.txt
          ${CMAKE_CURRENT_SOURCE_DIR}/src)
set_tests_properties(layers.includes PROPERTIES LABELS "unit")

# Formatting, with the checked-in .clang-format.
add_test(NAME format.clang_format COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/format/check_format.sh
         ${CMAKE_CURRENT_SOURCE_DIR})
set_tests_properties(format.clang_format PROPERTIES LABELS "unit")
