#include "client/server_book.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace cudojo::client {

namespace fs = std::filesystem;

fs::path default_server_book_path() {
  if (const char* config = std::getenv("XDG_CONFIG_HOME"); config && *config == '/')
    return fs::path(config) / "cudojo" / "servers.json";
  const char* home = std::getenv("HOME");
  if (!home || !*home)
    throw ServerBookError(
        "neither XDG_CONFIG_HOME nor HOME is set, so there is nowhere to keep servers.json");
  return fs::path(home) / ".config" / "cudojo" / "servers.json";
}

ServerBook ServerBook::load(const fs::path& file) {
  ServerBook book;
  book.file_ = file;
  std::ifstream in(file);
  if (!in) {
    if (fs::exists(file)) throw ServerBookError(fmt::format("cannot read {}", file.string()));
    return book;
  }
  // It holds bearer tokens: a file others can read (copied in, or made with a loose umask) is made
  // the owner's alone, as login makes it.
  struct stat status {};
  if (stat(file.c_str(), &status) == 0 && S_ISREG(status.st_mode) && status.st_uid == getuid() &&
      (status.st_mode & 077) != 0)
    chmod(file.c_str(), 0600);
  std::ostringstream text;
  text << in.rdbuf();
  const nlohmann::json parsed = nlohmann::json::parse(text.str(), nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object() ||
      !parsed.value("servers", nlohmann::json::object()).is_object())
    throw ServerBookError(fmt::format(
        "{} is not a cudojo servers file; move it away and run `cudojo login` again", file.string()));
  const nlohmann::json servers = parsed.value("servers", nlohmann::json::object());
  for (const auto& [name, value] : servers.items()) {
    if (!value.is_object()) continue;
    for (const char* key : {"url", "token", "learner", "cacert"})
      if (value.contains(key) && !value[key].is_string())
        throw ServerBookError(
            fmt::format("{}: the server '{}' has a {} that is not a string; fix it, or "
                        "run `cudojo login URL --as {}` again",
                        file.string(), name, key, name));
    ServerEntry entry;
    entry.url = value.value("url", "");
    entry.token = value.value("token", "");
    entry.learner = value.value("learner", "");
    entry.cacert = value.value("cacert", "");
    book.servers_[name] = entry;
  }
  return book;
}

void ServerBook::save() const {
  // A servers.json that is a link (into a dotfiles folder) is written where it points, not replaced.
  std::error_code error;  // a file not there yet is no link
  const bool link = fs::is_symlink(fs::symlink_status(file_, error));
  const fs::path file = link ? fs::weakly_canonical(file_, error) : file_;
  if (link && error)
    throw ServerBookError(fmt::format("cannot follow {}: {}", file_.string(), error.message()));
  error.clear();
  const fs::path folder = file_.parent_path();
  fs::create_directories(folder, error);
  if (error) throw ServerBookError(fmt::format("cannot make {}: {}", folder.string(), error.message()));
  // The folder is cudojo's own: only its owner may list it.
  chmod(folder.c_str(), 0700);
  nlohmann::json servers = nlohmann::json::object();
  for (const auto& [name, entry] : servers_)
    servers[name] = {
        {"url", entry.url}, {"token", entry.token}, {"learner", entry.learner}, {"cacert", entry.cacert}};
  const std::string text = nlohmann::json{{"servers", servers}}.dump(2) + "\n";
  const fs::path temporary = file.string() + ".tmp";
  unlink(temporary.c_str());
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    throw ServerBookError(fmt::format("cannot write {}: {}", temporary.string(), std::strerror(errno)));
  fchmod(fd, 0600);  // whatever the umask
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  const bool ok = written == text.size() && fsync(fd) == 0;
  close(fd);
  if (!ok || rename(temporary.c_str(), file.c_str()) != 0) {
    unlink(temporary.c_str());
    throw ServerBookError(fmt::format("cannot write {}: {}", file.string(), std::strerror(errno)));
  }
}

std::optional<ServerEntry> ServerBook::find(const std::string& name) const {
  const auto found = servers_.find(name);
  if (found == servers_.end()) return std::nullopt;
  return found->second;
}

}  // namespace cudojo::client
