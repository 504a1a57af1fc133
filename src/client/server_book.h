// The servers a learner has logged in to, by name: $XDG_CONFIG_HOME/cudojo/servers.json (default
// ~/.config/cudojo), the folder 0700 and the file 0600 because it holds bearer tokens. Written
// whole to a temporary file and renamed, so a crash never leaves half a file.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

namespace cudojo::client {

// The file cannot be read, parsed or written; what() says which file and what to do.
struct ServerBookError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ServerEntry {
  std::string url;
  std::string token;
  std::string learner;  // the name the server gave, for `cudojo login`'s answer; may be empty
  std::string cacert;   // --cacert given at login, used by every later command; may be empty
};

// $XDG_CONFIG_HOME/cudojo/servers.json, or $HOME/.config/cudojo/servers.json.
std::filesystem::path default_server_book_path();

class ServerBook {
 public:
  // An empty book when the file does not exist.
  static ServerBook load(const std::filesystem::path& file);
  void save() const;

  std::optional<ServerEntry> find(const std::string& name) const;
  void put(const std::string& name, const ServerEntry& entry) { servers_[name] = entry; }
  bool remove(const std::string& name) { return servers_.erase(name) > 0; }
  const std::map<std::string, ServerEntry>& servers() const { return servers_; }
  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
  std::map<std::string, ServerEntry> servers_;
};

}  // namespace cudojo::client
