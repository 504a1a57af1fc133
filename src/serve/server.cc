#include "serve/server.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "common/environment.h"
#include "compile/nvrtc_compiler.h"
#include "http/router.h"
#include "http/server.h"
#include "run/judge.h"
#include "serve/api.h"
#include "serve/course_catalog.h"
#include "serve/dispatcher.h"
#include "serve/heartbeat.h"
#include "serve/job_streams.h"
#include "serve/postgres_store.h"
#include "serve/store.h"
#include "serve/store_internal.h"
#include "serve/watched_store.h"

namespace cudojo {

namespace fs = std::filesystem;

fs::path default_web_dir() {
  if (const char* env = std::getenv(env::kWeb); env && *env) return env;
  const fs::path built = fs::path(CUDOJO_COURSE_DIR).parent_path() / "web";
  if (fs::exists(built / "index.html")) return built;
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  return exe.parent_path().parent_path() / "web";
}

fs::path default_data_dir() {
  if (const char* env = std::getenv(env::kData); env && *env) return env;
  return fs::current_path() / "cudojo-data";
}

// The ids that name this process's GPUs to a child: CUDA_VISIBLE_DEVICES's entries when it is set
// (a child given "1" of a parent that sees "2,3" would see the machine's GPU 1), else 0..count-1.
std::vector<std::string> visible_gpu_ids(int count) {
  std::vector<std::string> ids;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible && *visible) {
    std::stringstream entries(visible);
    for (std::string entry; std::getline(entries, entry, ',');) {
      if (!entry.empty()) ids.push_back(entry);
    }
  }
  if (static_cast<int>(ids.size()) < count) {
    ids.clear();
    for (int gpu = 0; gpu < count; ++gpu) ids.push_back(std::to_string(gpu));
  }
  ids.resize(static_cast<std::size_t>(std::max(count, 0)));
  return ids;
}

GpuSurvey survey_gpus(const std::string& executable) {
  GpuSurvey survey;
  FILE* pipe = popen((executable + " gpus 2>/dev/null").c_str(), "r");
  if (!pipe) return survey;
  if (std::fscanf(pipe, "%d\n", &survey.count) != 1) survey.count = 0;
  char name[256];
  if (survey.count > 0 && std::fgets(name, sizeof name, pipe)) {
    std::string model = name;
    while (!model.empty() && (model.back() == '\n' || model.back() == '\r')) model.pop_back();
    if (!model.empty()) survey.model = model;
  }
  pclose(pipe);
  return survey;
}

std::string this_host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || !name[0]) return "localhost";
  return name;
}

namespace {

// One server per data folder: two would both requeue and judge the same running jobs. The lock is
// the kernel's (flock), so it goes with the process however it ends. Returns the open descriptor
// that holds it, or -1 with `problem` saying why.
int lock_data_folder(const fs::path& data_dir, std::string& problem) {
  std::error_code error;
  fs::create_directories(data_dir, error);
  const fs::path lock_file = data_dir / "cudojo.lock";
  const int fd = open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    problem = fmt::format("cannot open {}: {}", lock_file.string(), std::strerror(errno));
    return -1;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    problem =
        fmt::format("another cudojo serve is using {} (it holds {})", data_dir.string(), lock_file.string());
    close(fd);
    return -1;
  }
  return fd;
}

// Waits for SIGINT or SIGTERM; each SIGHUP before them reloads the course and says how that went.
void wait_for_stop(const sigset_t& signals, CourseCatalog& catalog) {
  for (;;) {
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    if (signal_number != SIGHUP) return;
    if (catalog.root().empty()) {
      fmt::print(stderr, "cudojo serve: SIGHUP: this server was started without a course folder to reload\n");
      continue;
    }
    const CourseReload reload = catalog.reload();
    fmt::print(reload.replaced ? stdout : stderr, "cudojo serve: SIGHUP: {}\n", reload.message);
    for (const std::string& problem : reload.problems) fmt::print(stderr, "  {}\n", problem);
    std::fflush(stdout);
  }
}

}  // namespace

int run_server(const std::vector<Stage>& course, const ServeSettings& settings) {
  // SIGINT and SIGTERM are taken by one thread with sigwait, so no handler runs inside the HTTP
  // or dispatcher threads (which inherit the blocked mask; workers get a clean one at spawn).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);  // reload the course (taken by the same sigwait)
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  // A client that leaves while it is being answered must not end the server.
  signal(SIGPIPE, SIG_IGN);

  std::string problem;
  const auto proxies = http::TrustedProxies::parse(settings.trusted_proxies, problem);
  if (!proxies) {
    fmt::print(stderr, "cudojo serve: --trusted-proxy {}\n", problem);
    return 2;
  }

  // A SQLite store belongs to one server: its folder is locked, and jobs left running by a
  // stopped server are taken back at once. A PostgreSQL store is shared: nothing is locked, and
  // jobs come back only when their leases run out.
  const bool shared_store = is_postgres_location(settings.store);
  const std::string location =
      settings.store.empty() ? (settings.data_dir / "cudojo.sqlite3").string() : settings.store;
  int data_lock = -1;
  if (!shared_store) {
    const fs::path folder =
        settings.store.empty() ? settings.data_dir : fs::path(settings.store).parent_path();
    data_lock = lock_data_folder(folder.empty() ? fs::path(".") : folder, problem);
    if (data_lock < 0) {
      fmt::print(stderr, "cudojo serve: {}\n", problem);
      return 2;
    }
  }

  // The listener comes first, before the store is touched: a port another program holds ends the
  // start here. Routes are added before it starts; its hooks reach the Api once there is one.
  http::Router router;
  Api* api_for_hooks = nullptr;
  std::optional<http::Server> server;
  int port = 0;
  if (settings.http) {
    http::ServerSettings front;
    front.host = settings.host;
    front.port = settings.port;
    front.limits = settings.limits;
    front.trusted_proxies = *proxies;
    front.answer_headers = Api::answer_headers();
    front.before_body = [&api_for_hooks](const http::Request& head, http::Response& response) {
      return api_for_hooks && api_for_hooks->before_body(head, response);
    };
    front.on_exception = [&api_for_hooks](const http::Request& request, http::Response& response,
                                          std::exception_ptr error) {
      if (api_for_hooks) api_for_hooks->on_exception(request, response, error);
    };
    server.emplace(router, std::move(front));
    try {
      port = server->listen();
    } catch (const http::ServerError& error) {
      fmt::print(stderr, "cudojo serve: {}\n", error.what());
      if (data_lock >= 0) close(data_lock);
      return 2;
    }
  }

  std::unique_ptr<Store> opened;
  try {
    opened =
        open_store(location, settings.limits.database_busy_timeout_ms, settings.limits.postgres_connections);
  } catch (const StoreError& error) {
    fmt::print(stderr, "cudojo serve: the database {} cannot be used: {}\n",
               shared_store ? redact_postgres_url(location) : location, error.what());
    return 2;
  }
  WatchedStore store(*opened);
  int requeued = 0;
  try {
    requeued = store.requeue_interrupted();
  } catch (const StoreError& error) {
    fmt::print(stderr, "cudojo serve: the database {} cannot be used: {}\n", store.location(), error.what());
    return 2;
  }

  const std::string executable = self_executable();
  const GpuSurvey gpus = settings.workers == 0 ? GpuSurvey{} : survey_gpus(executable);
  NodeInfo node;
  node.host = this_host_name();
  node.name = settings.node_name.empty() ? fmt::format("{}-{}", node.host, getpid()) : settings.node_name;
  node.gpu = gpus.model;
  // Without a GPU every job ends no_device at once: one slot says so as well as four.
  node.workers = settings.workers >= 0 ? settings.workers
                 : gpus.count > 0      ? gpus.count * settings.limits.judge_slots_per_gpu
                                       : 1;
  node.http = settings.http;
  // The claims of this process: its name and a random suffix, so a node restarted under the same
  // name never renews, and so keeps alive, the jobs of the process it replaced.
  const std::string holder = fmt::format("{}#{}", node.name, store_internal::random_token().substr(0, 8));

  // Outlives the dispatcher, which wakes it whenever one of this node's jobs changes.
  JobStreams streams(store, settings.limits);
  Dispatcher::Settings dispatch;
  dispatch.workers = node.workers;
  dispatch.gpus = gpus.count;
  dispatch.gpu_ids = visible_gpu_ids(gpus.count);
  dispatch.worker_executable = executable;
  dispatch.cuda_include_dir = default_cuda_include_dir();
  dispatch.calibration_dir = settings.calibration_dir.string();
  dispatch.all_metrics = settings.all_metrics;
  dispatch.idle_poll_ms = settings.limits.dispatcher_idle_poll_ms;
  dispatch.stop_grace_ms = settings.limits.stop_grace_ms;
  dispatch.lease_seconds = settings.limits.job_lease_seconds;
  dispatch.store_retry_ms = settings.limits.store_retry_ms;
  dispatch.holder = holder;
  dispatch.node_name = node.name;
  dispatch.host = node.host;
  dispatch.gpu = node.gpu;
  dispatch.on_job_changed = [&streams] { streams.poke(); };
  CourseCatalog catalog(settings.course_root, settings.calibration_dir, course);
  Dispatcher dispatcher(store, catalog, dispatch);
  // Jobs queued by other nodes wake this node's idle judges at once (a shared store only). Started
  // with the dispatcher; whatever way this function is left, the store stops calling into the
  // dispatcher before the dispatcher is destroyed (this guard is declared after it).
  struct StopWatching {
    Store& store;
    ~StopWatching() { store.stop_watching(); }
  } stop_watching_on_exit{store};
  auto start_judging = [&] {
    dispatcher.start();
    if (node.workers > 0) store.watch_new_jobs([&dispatcher] { dispatcher.notify(); });
  };
  Heartbeat heartbeat(store, {node, [&dispatcher] { return dispatcher.running_claims(); },
                              settings.limits.job_lease_seconds, settings.limits.heartbeat_ms});
  try {
    heartbeat.start();
  } catch (const std::exception& error) {
    fmt::print(stderr, "cudojo serve: cannot register this node: {}\n", error.what());
    return 2;
  }

  const std::string summary = fmt::format(
      "store {}  node {}  workers {} ({} GPU{}{})  requeued {}", store.location(), node.name, node.workers,
      gpus.count, gpus.count == 1 ? "" : "s", gpus.count > 0 ? ", " + gpus.model : std::string(), requeued);
  if (!settings.http) {
    // A judging host: no listener; it runs until a stop signal.
    start_judging();
    fmt::print("cudojo serve: no HTTP  {}\n", summary);
    std::fflush(stdout);
    wait_for_stop(stop_signals, catalog);
    store.stop_watching();
    dispatcher.stop();
    heartbeat.stop();
    return 0;
  }

  Api api(store, dispatcher, streams, catalog, settings, node, gpus.count);
  api.register_routes(router);
  api_for_hooks = &api;
  // The server's connections hold streams' places and the Api's handlers: it goes first, whatever
  // way this function is left.
  struct ServerFirst {
    std::optional<http::Server>& server;
    ~ServerFirst() { server.reset(); }
  } server_first{server};
  start_judging();
  streams.start();
  server->start();
  fmt::print("cudojo serve: http://{}:{}/  {}\n", settings.host, port, summary);
  std::fflush(stdout);
  wait_for_stop(stop_signals, catalog);
  // Open streams end first (they would otherwise hold their connections open); then the front door
  // closes. Running jobs get a short grace to finish and record their verdicts; the rest go back to
  // the queue (Dispatcher::stop).
  streams.stop();
  server->stop();
  store.stop_watching();
  dispatcher.stop();
  heartbeat.stop();
  return 0;
}

}  // namespace cudojo
