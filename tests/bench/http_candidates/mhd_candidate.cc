// mhd_candidate: a stand-in for `cudojo serve` built on GNU libmicrohttpd 0.9.75, used only to
// measure that library against the hostile-client attacks of issue #21 (scripts/http-candidates.sh
// runs it). It is not part of the product: it serves three fixed routes from memory and nothing
// else, so that whatever the attacks do to it is the library's doing, configured the way a careful
// deployment would configure it.
//
// Written from the documentation in /usr/include/microhttpd.h.
//
//   build: g++ -std=c++20 -O2 -Wall -Wextra -o /tmp/mhd_candidate
//   tests/bench/http_candidates/mhd_candidate.cc -lmicrohttpd run:   mhd_candidate --port N --file
//   PATH/katex.min.js     (port 0 picks a free port)

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace {

// POST bodies are read and thrown away up to this many bytes; a declared Content-Length above it is
// answered 413 before any of the body is read.
constexpr std::size_t kMaxBody = 256 * 1024;

struct Responses {
  MHD_Response* health = nullptr;
  MHD_Response* stages = nullptr;
  MHD_Response* katex = nullptr;
  MHD_Response* not_found = nullptr;
  MHD_Response* too_large = nullptr;
};

// What one request has seen so far; it lives from the first call of the access handler to the
// request-completed callback.
struct RequestState {
  std::size_t body_bytes = 0;
};

// The bodies live for the whole run, so every response refers to them with MHD_RESPMEM_PERSISTENT
// (no copy) and each response object is created once and handed to MHD_queue_response for every
// request that wants it (MHD counts references on a response; queueing it does not consume it).
const std::string kHealthBody = R"({"ok": true})";
const std::string kNotFoundBody = R"({"error": "no such route"})";
const std::string kTooLargeBody = R"({"error": "request body over 256 KiB"})";
std::string g_stages_body;
std::string g_katex_body;

std::string BuildStages() {
  static constexpr const char* kStages[12][2] = {
      {"reduction/1", "Sum of a vector, one block"},
      {"reduction/2", "Sum of a vector, many blocks and a second pass"},
      {"reduction/3", "Warp shuffles instead of shared memory"},
      {"scan/1", "Inclusive prefix sum within a block"},
      {"scan/2", "Decoupled look-back across blocks"},
      {"transpose/1", "Matrix transpose through shared memory"},
      {"transpose/2", "Avoiding shared-memory bank conflicts"},
      {"gemm/1", "Naive matrix multiply, one thread per output"},
      {"gemm/2", "Tiled matrix multiply in shared memory"},
      {"gemm/3", "Register tiling and vectorised loads"},
      {"softmax/1", "Row-wise softmax with a numerically safe maximum"},
      {"histogram/1", "Histogram with shared-memory atomics"},
  };
  std::string out = "[";
  for (int i = 0; i < 12; ++i) {
    if (i != 0) out += ",";
    out += "\n  {\"id\": \"";
    out += kStages[i][0];
    out += "\", \"title\": \"";
    out += kStages[i][1];
    out += "\", \"order\": " + std::to_string(i + 1);
    out +=
        ", \"summary\": \"Write the kernel, pass the judge's correctness checks on the fixed inputs, "
        "then meet the stage's time budget on the reference GPU.\", \"languages\": [\"cuda\", "
        "\"triton\"], \"points\": 100}";
  }
  out += "\n]\n";
  return out;
}

MHD_Response* Persistent(const std::string& body, const char* content_type) {
  MHD_Response* r =
      MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_PERSISTENT);
  if (r == nullptr) return nullptr;
  if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type) != MHD_YES) {
    MHD_destroy_response(r);
    return nullptr;
  }
  return r;
}

// MHD's own log lines (connection limit reached, per-IP limit reached, bad requests, ...) go to
// stderr. Under a flood they would come one per refused connection, so after the first 50 only
// every 1000th is printed, with its running count.
std::atomic<unsigned long> g_log_lines{0};

void Log(void*, const char* fmt, va_list ap) {
  const unsigned long n = ++g_log_lines;
  if (n > 50 && n % 1000 != 0) return;
  char line[512];
  std::vsnprintf(line, sizeof line, fmt, ap);
  std::size_t len = std::strlen(line);
  while (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
  std::fprintf(stderr, "mhd[%lu]: %s\n", n, line);
}

void Completed(void*, MHD_Connection*, void** con_cls, MHD_RequestTerminationCode) {
  delete static_cast<RequestState*>(*con_cls);
  *con_cls = nullptr;
}

MHD_Result Handle(void* cls, MHD_Connection* connection, const char* url, const char* method,
                  const char* /*version*/, const char* /*upload_data*/, std::size_t* upload_data_size,
                  void** con_cls) {
  const auto& resp = *static_cast<const Responses*>(cls);

  // First call: the headers are in, no body has been read yet.
  if (*con_cls == nullptr) {
    *con_cls = new RequestState;
    const char* length =
        MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (length != nullptr) {
      // MHD has already refused a Content-Length that is not a number before calling us, so this
      // parse only has to tell big from small.
      char* end = nullptr;
      const unsigned long long declared = std::strtoull(length, &end, 10);
      if (declared > kMaxBody) {
        // A response queued before the body arrives makes MHD skip the body and close the
        // connection after answering; it also sends no "100 Continue" to a client that asked.
        return MHD_queue_response(connection, MHD_HTTP_CONTENT_TOO_LARGE, resp.too_large);
      }
    }
    return MHD_YES;  // MHD answers "100 Continue" itself where the client asked for it.
  }

  auto* state = static_cast<RequestState*>(*con_cls);
  if (*upload_data_size != 0) {
    // A body chunk. MHD does not allow a response to be queued while body data is being handed
    // over, so a chunked body that grows past the bound (no Content-Length to refuse up front)
    // can only be stopped by closing the connection.
    state->body_bytes += *upload_data_size;
    *upload_data_size = 0;  // read and discarded
    return state->body_bytes > kMaxBody ? MHD_NO : MHD_YES;
  }

  // The request is complete.
  const std::string_view m = method;
  const std::string_view u = url;
  // HEAD is served as GET: MHD sends the headers of the response without its body.
  if (m == MHD_HTTP_METHOD_GET || m == MHD_HTTP_METHOD_HEAD) {
    if (u == "/api/health") return MHD_queue_response(connection, MHD_HTTP_OK, resp.health);
    if (u == "/api/stages") return MHD_queue_response(connection, MHD_HTTP_OK, resp.stages);
    // libmicrohttpd 0.9.75 has no Range support of its own: a "Range" header is ignored and the
    // whole file is answered 200, whatever the header says (see README.md for what was observed).
    if (u == "/vendor/katex/katex.min.js") return MHD_queue_response(connection, MHD_HTTP_OK, resp.katex);
  }
  return MHD_queue_response(connection, MHD_HTTP_NOT_FOUND, resp.not_found);
}

bool ReadFile(const char* path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

void Usage() { std::fprintf(stderr, "usage: mhd_candidate --port N --file PATH\n"); }

}  // namespace

int main(int argc, char** argv) {
  long port = -1;
  const char* file = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--port" && i + 1 < argc) {
      char* end = nullptr;
      port = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || port < 0 || port > 65535) port = -2;
    } else if (a == "--file" && i + 1 < argc) {
      file = argv[++i];
    } else {
      Usage();
      return 2;
    }
  }
  if (port < 0 || file == nullptr) {
    Usage();
    return 2;
  }
  if (!ReadFile(file, g_katex_body)) {
    std::fprintf(stderr, "mhd_candidate: cannot read %s\n", file);
    return 1;
  }
  g_stages_body = BuildStages();

  // Every connection is a descriptor; the connection limit below means nothing if the process runs
  // out of descriptors first, so the soft limit goes up to the hard one.
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &nofile) != 0) std::perror("mhd_candidate: setrlimit(RLIMIT_NOFILE)");
  }

  // A client that resets its connection while we write must cost us an EPIPE, not the process.
  // (MHD also masks SIGPIPE in the threads it starts; this covers the main thread and is cheap.)
  ::signal(SIGPIPE, SIG_IGN);

  // SIGTERM and SIGINT are blocked before MHD starts its thread, so that thread inherits the mask
  // and the signals are only ever taken by sigwait() below, in the main thread.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  Responses resp;
  resp.health = Persistent(kHealthBody, "application/json");
  resp.stages = Persistent(g_stages_body, "application/json");
  resp.katex = Persistent(g_katex_body, "text/javascript; charset=utf-8");
  resp.not_found = Persistent(kNotFoundBody, "application/json");
  resp.too_large = Persistent(kTooLargeBody, "application/json");
  if (!resp.health || !resp.stages || !resp.katex || !resp.not_found || !resp.too_large) {
    std::fprintf(stderr, "mhd_candidate: cannot create responses\n");
    return 1;
  }

  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

  const unsigned int flags =
      // Errors are logged (through Log above, rate-limited), not silently swallowed.
      MHD_USE_ERROR_LOG |
      // One internal thread running an epoll loop. epoll, named explicitly rather than left to
      // MHD_USE_AUTO, because select() stops at FD_SETSIZE (1024) descriptors and poll() rescans
      // every descriptor on each wake-up, while the connection limit below is 16384. One thread
      // and no pool, because every handler here answers from memory without blocking, so a
      // second thread would add no capacity on loopback; and because MHD's daemon.c divides
      // MHD_OPTION_CONNECTION_LIMIT evenly among the threads of a pool (each worker accepts
      // from the shared listening socket on its own), so with a pool of 2 one worker could be
      // full at 8192 while the other had room. One thread keeps the limit the one written here.
      MHD_USE_EPOLL_INTERNAL_THREAD;

  MHD_Daemon* daemon = MHD_start_daemon(
      flags, static_cast<uint16_t>(port), nullptr, nullptr, &Handle, &resp,
      // First, so that start-up messages also go through it (microhttpd.h asks for this).
      MHD_OPTION_EXTERNAL_LOGGER, &Log, nullptr,
      // 127.0.0.1 only; the port argument above is ignored once an address is given.
      MHD_OPTION_SOCK_ADDR, reinterpret_cast<sockaddr*>(&addr),
      // At most 16384 connections in all, so descriptors and memory stay bounded. Observed (see
      // README.md): at the limit MHD stops accepting; later connects wait unanswered in the
      // kernel's accept queue until a connection ends, so this bounds resources, not availability.
      MHD_OPTION_CONNECTION_LIMIT, 16384u,
      // One address may hold at most 512 of them, so one host cannot take all 16384. Observed: the
      // 513th is accepted and closed at once (the client reads EOF, no bytes). It counts per source
      // address, so it does not stop one attacker with 32 addresses.
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, 512u,
      // A connection with no traffic for 10 s is closed, whether it is mid-request or idle between
      // keep-alive requests. It is a timeout of inactivity, as microhttpd.h says, not a deadline:
      // observed, a client sending one header line every 4.5 s stayed connected past 75 s.
      MHD_OPTION_CONNECTION_TIMEOUT, 10u,
      // Each connection gets one memory pool of 32 KiB for its read buffer, request line, headers
      // and the response headers, which is how MHD bounds the header size and so per-connection
      // memory. Observed: headers that do not fit get 431 Request Header Fields Too Large (a
      // request line that does not fit, 414 URI Too Long); a request that fits with too little
      // room left to build the response is closed with no answer at all.
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<std::size_t>(32 * 1024),
      // An explicit accept queue of 1024 instead of the platform default (SOMAXCONN, 4096 with
      // Debian 12's glibc), so the depth is the same wherever it runs: this many connects may wait
      // in the kernel during a burst or while MHD is at its connection limit.
      MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
      // Strict parsing: an HTTP/1.1 request without Host is refused (observed: 400) and a space in
      // the URL is not allowed (observed: closed with no answer). Less tolerant of odd clients,
      // less room for disagreement with a proxy in front about where a request ends.
      MHD_OPTION_STRICT_FOR_CLIENT, 1,
      // Frees the per-request state however the request ends (answered, timed out, reset).
      MHD_OPTION_NOTIFY_COMPLETED, &Completed, nullptr, MHD_OPTION_END);
  if (daemon == nullptr) {
    std::fprintf(stderr, "mhd_candidate: MHD_start_daemon failed on 127.0.0.1:%ld\n", port);
    return 1;
  }

  const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
  const unsigned bound = info != nullptr ? info->port : static_cast<unsigned>(port);
  std::printf("cudojo serve: http://127.0.0.1:%u/  (libmicrohttpd candidate)\n", bound);
  std::fflush(stdout);

  int sig = 0;
  while (sigwait(&stop_signals, &sig) != 0) {
  }

  // Closes the listening socket and every connection, and joins MHD's thread.
  MHD_stop_daemon(daemon);
  MHD_destroy_response(resp.health);
  MHD_destroy_response(resp.stages);
  MHD_destroy_response(resp.katex);
  MHD_destroy_response(resp.not_found);
  MHD_destroy_response(resp.too_large);
  return 0;
}
