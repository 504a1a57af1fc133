#include "serve/server.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netdb.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

#include "common/environment.h"
#include "compile/nvrtc_compiler.h"
#include "run/judge.h"
#include "serve/api.h"
#include "serve/dispatcher.h"
#include "serve/heartbeat.h"
#include "serve/postgres_store.h"
#include "serve/store.h"
#include "serve/store_internal.h"

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

// httplib binds with SO_REUSEPORT, so a second server on a taken port would share it and split
// its requests. A probe without it fails when anything listens there.
bool port_is_free(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found) return true;
  bool free = true;
  for (addrinfo* address = found; address && free; address = address->ai_next) {
    const int probe = socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC, address->ai_protocol);
    if (probe < 0) continue;
    int yes = 1;
    setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (bind(probe, address->ai_addr, address->ai_addrlen) != 0 && errno == EADDRINUSE) free = false;
    close(probe);
  }
  freeaddrinfo(found);
  return free;
}

}  // namespace

int run_server(const std::vector<Stage>& course, const ServeSettings& settings) {
  // SIGINT and SIGTERM are taken by one thread with sigwait, so no handler runs inside the HTTP
  // or dispatcher threads (which inherit the blocked mask; workers get a clean one at spawn).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // A SQLite store belongs to one server: its folder is locked, and jobs left running by a
  // stopped server are taken back at once. A PostgreSQL store is shared: nothing is locked, and
  // jobs come back only when their leases run out.
  const bool shared_store = is_postgres_location(settings.store);
  const std::string location =
      settings.store.empty() ? (settings.data_dir / "cudojo.sqlite3").string() : settings.store;
  int data_lock = -1;
  if (!shared_store) {
    std::string problem;
    const fs::path folder =
        settings.store.empty() ? settings.data_dir : fs::path(settings.store).parent_path();
    data_lock = lock_data_folder(folder.empty() ? fs::path(".") : folder, problem);
    if (data_lock < 0) {
      fmt::print(stderr, "cudojo serve: {}\n", problem);
      return 2;
    }
  }
  if (settings.http && settings.port != 0 && !port_is_free(settings.host, settings.port)) {
    fmt::print(stderr, "cudojo serve: {}:{} is in use by another program\n", settings.host, settings.port);
    if (data_lock >= 0) close(data_lock);
    return 2;
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
  Store& store = *opened;
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
  node.workers = settings.workers >= 0 ? settings.workers : std::max(1, gpus.count);
  node.http = settings.http;
  // The claims of this process: its name and a random suffix, so a node restarted under the same
  // name never renews, and so keeps alive, the jobs of the process it replaced.
  const std::string holder = fmt::format("{}#{}", node.name, store_internal::random_token().substr(0, 8));

  Dispatcher::Settings dispatch;
  dispatch.workers = node.workers;
  dispatch.pin_gpus = settings.workers < 0 && gpus.count > 0;
  dispatch.worker_executable = executable;
  dispatch.cuda_include_dir = default_cuda_include_dir();
  dispatch.calibration_dir = settings.calibration_dir.string();
  dispatch.idle_poll_ms = settings.limits.dispatcher_idle_poll_ms;
  dispatch.next_workers_start_wait_ms = settings.limits.next_workers_start_wait_ms;
  dispatch.stop_grace_ms = settings.limits.stop_grace_ms;
  dispatch.lease_seconds = settings.limits.job_lease_seconds;
  dispatch.store_retry_ms = settings.limits.store_retry_ms;
  dispatch.holder = holder;
  dispatch.node_name = node.name;
  dispatch.host = node.host;
  dispatch.gpu = node.gpu;
  Dispatcher dispatcher(store, course, dispatch);
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
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    store.stop_watching();
    dispatcher.stop();
    heartbeat.stop();
    return 0;
  }

  httplib::Server server;
  server.new_task_queue = [threads = settings.limits.http_threads] {
    return new httplib::ThreadPool(threads);
  };
  server.set_payload_max_length(settings.limits.max_request_bytes);
  Api api(store, dispatcher, course, settings, node, gpus.count);
  api.register_routes(server);

  const int port = settings.port == 0 ? server.bind_to_any_port(settings.host) : settings.port;
  if (settings.port != 0 && !server.bind_to_port(settings.host, settings.port)) {
    fmt::print(stderr, "cudojo serve: cannot listen on {}:{}\n", settings.host, settings.port);
    return 2;
  }
  if (port < 0) {
    fmt::print(stderr, "cudojo serve: cannot listen on {}\n", settings.host);
    return 2;
  }
  start_judging();
  std::thread stopper([&] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    api.end_event_streams();  // open streams would otherwise hold the server for their full length
    server.stop();
  });
  fmt::print("cudojo serve: http://{}:{}/  {}\n", settings.host, port, summary);
  std::fflush(stdout);
  server.listen_after_bind();
  // Reached after a stop signal: running jobs get a short grace to finish and record their verdicts;
  // the rest go back to the queue (Dispatcher::stop).
  pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  store.stop_watching();
  dispatcher.stop();
  heartbeat.stop();
  return 0;
}

}  // namespace cudojo
