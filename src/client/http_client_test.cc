// The client's own rules, no server needed: URLs and which proxy the environment names.
#include "client/http_client.h"

#include <gtest/gtest.h>

#include <map>

namespace cudojo::client {
namespace {

std::function<const char*(const char*)> environment(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const char* name) -> const char* {
    static thread_local std::string held;
    const auto found = values.find(name);
    if (found == values.end()) return nullptr;
    held = found->second;
    return held.c_str();
  };
}

TEST(ClientUrl, SplitsSchemeHostPortAndPrefix) {
  const ParsedUrl url = parse_url("https://GPU.example.edu:8443/cudojo/");
  EXPECT_EQ(url.scheme, "https");
  EXPECT_EQ(url.host, "gpu.example.edu");
  EXPECT_EQ(url.port, 8443);
  EXPECT_EQ(url.base_path, "/cudojo");
  EXPECT_EQ(parse_url("http://10.0.0.5").port, 80);
  EXPECT_EQ(parse_url("https://class.example").port, 443);
}

TEST(ClientUrl, RefusesWhatIsNotAnHttpUrl) {
  EXPECT_THROW(parse_url("gpu.example.edu"), ClientSetupError);
  EXPECT_THROW(parse_url("ftp://gpu.example.edu"), ClientSetupError);
  EXPECT_THROW(parse_url("http://gpu.example.edu:99999"), ClientSetupError);
  EXPECT_THROW(parse_url("https://user:secret@gpu.example.edu"), ClientSetupError);
}

// A query or fragment once read as "the port must be a number" (http://host:8080?x=1).
TEST(ClientUrl, AQueryOrFragmentIsRefusedSayingSo) {
  for (const char* url : {"http://gpu.example.edu:8080?x=1", "https://gpu.example.edu#top", "http://h/p?q"}) {
    try {
      parse_url(url);
      ADD_FAILURE() << url << " was taken";
    } catch (const ClientSetupError& error) {
      EXPECT_NE(std::string(error.what()).find("no ?query or #fragment"), std::string::npos) << error.what();
    }
  }
}

TEST(ClientProxy, HttpsUsesHttpsProxyWithCredentials) {
  const auto proxy = proxy_for(
      parse_url("https://gpu.example.edu"),
      environment({{"HTTPS_PROXY", "http://me:pw@proxy.school:3128"}, {"HTTP_PROXY", "http://other:1"}}));
  ASSERT_TRUE(proxy);
  EXPECT_EQ(proxy->host, "proxy.school");
  EXPECT_EQ(proxy->port, 3128);
  EXPECT_EQ(proxy->user, "me");
  EXPECT_EQ(proxy->password, "pw");
}

TEST(ClientProxy, LowerCaseNamesAndHttpProxyForHttp) {
  const auto proxy =
      proxy_for(parse_url("http://gpu.example.edu"), environment({{"http_proxy", "proxy.school:8080"}}));
  ASSERT_TRUE(proxy);
  EXPECT_EQ(proxy->host, "proxy.school");
  EXPECT_EQ(proxy->port, 8080);
  // No port: 1080, as curl assumes.
  EXPECT_EQ(
      proxy_for(parse_url("http://gpu.example.edu"), environment({{"http_proxy", "proxy.school"}}))->port,
      1080);
}

TEST(ClientProxy, NoProxyNamesHostsAndDomains) {
  const auto env =
      environment({{"HTTPS_PROXY", "http://proxy:3128"}, {"NO_PROXY", "intranet, .example.edu"}});
  EXPECT_FALSE(proxy_for(parse_url("https://gpu.example.edu"), env));
  EXPECT_FALSE(proxy_for(parse_url("https://example.edu"), env));
  EXPECT_FALSE(proxy_for(parse_url("https://intranet"), env));
  EXPECT_TRUE(proxy_for(parse_url("https://notexample.edu"), env));
  EXPECT_FALSE(proxy_for(parse_url("https://anything"),
                         environment({{"HTTPS_PROXY", "http://proxy:3128"}, {"NO_PROXY", "*"}})));
}

// As curl: loopback goes through the proxy like any host unless no_proxy names it.
TEST(ClientProxy, LoopbackGoesThroughAProxyUnlessNoProxyNamesIt) {
  EXPECT_TRUE(
      proxy_for(parse_url("http://127.0.0.1:8080"), environment({{"http_proxy", "http://proxy:3128"}})));
  EXPECT_FALSE(proxy_for(parse_url("http://127.0.0.1:8080"),
                         environment({{"http_proxy", "http://proxy:3128"}, {"no_proxy", "127.0.0.1"}})));
  EXPECT_FALSE(proxy_for(parse_url("http://localhost:8080"),
                         environment({{"HTTP_PROXY", "http://proxy:3128"}, {"NO_PROXY", "localhost"}})));
  EXPECT_FALSE(proxy_for(parse_url("http://gpu.example.edu"), environment({})));
}

}  // namespace
}  // namespace cudojo::client
