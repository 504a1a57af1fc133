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
#include "serve/store.h"

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

int count_gpus(const std::string& executable) {
  FILE* pipe = popen((executable + " gpus 2>/dev/null").c_str(), "r");
  if (!pipe) return 0;
  int count = 0;
  if (std::fscanf(pipe, "%d", &count) != 1) count = 0;
  pclose(pipe);
  return count;
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

  std::string problem;
  const int data_lock = lock_data_folder(settings.data_dir, problem);
  if (data_lock < 0) {
    fmt::print(stderr, "cudojo serve: {}\n", problem);
    return 2;
  }
  if (settings.port != 0 && !port_is_free(settings.host, settings.port)) {
    fmt::print(stderr, "cudojo serve: {}:{} is in use by another program\n", settings.host, settings.port);
    close(data_lock);
    return 2;
  }

  const fs::path database = settings.data_dir / "cudojo.sqlite3";
  std::unique_ptr<Store> opened;
  try {
    opened = std::make_unique<Store>(database, settings.limits.database_busy_timeout_ms);
  } catch (const StoreError& error) {
    fmt::print(stderr, "cudojo serve: the database {} cannot be used: {}\n", database.string(), error.what());
    return 2;
  }
  Store& store = *opened;
  const int requeued = store.requeue_interrupted();

  const std::string executable = self_executable();
  const int gpus = count_gpus(executable);
  Dispatcher::Settings dispatch;
  dispatch.workers = settings.workers >= 0 ? settings.workers : std::max(1, gpus);
  dispatch.pin_gpus = settings.workers < 0 && gpus > 0;
  dispatch.worker_executable = executable;
  dispatch.cuda_include_dir = default_cuda_include_dir();
  dispatch.calibration_dir = settings.calibration_dir.string();
  dispatch.idle_poll_ms = settings.limits.dispatcher_idle_poll_ms;
  dispatch.next_workers_start_wait_ms = settings.limits.next_workers_start_wait_ms;
  dispatch.stop_grace_ms = settings.limits.stop_grace_ms;
  Dispatcher dispatcher(store, course, dispatch);

  httplib::Server server;
  server.new_task_queue = [threads = settings.limits.http_threads] {
    return new httplib::ThreadPool(threads);
  };
  server.set_payload_max_length(settings.limits.max_request_bytes);
  Api api(store, dispatcher, course, settings, gpus);
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
  dispatcher.start();
  std::thread stopper([&] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    api.end_event_streams();  // open streams would otherwise hold the server for their full length
    server.stop();
  });
  fmt::print("cudojo serve: http://{}:{}/  data {}  workers {} ({} GPU{})  requeued {}\n", settings.host,
             port, settings.data_dir.string(), dispatch.workers, gpus, gpus == 1 ? "" : "s", requeued);
  std::fflush(stdout);
  server.listen_after_bind();
  // Reached after a stop signal: running jobs get a short grace to finish and record their verdicts;
  // the rest go back to the queue (Dispatcher::stop).
  pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  dispatcher.stop();
  return 0;
}

}  // namespace cudojo
