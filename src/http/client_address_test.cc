#include "http/client_address.h"

#include <gtest/gtest.h>

namespace cudojo::http {
namespace {

TrustedProxies proxies(const std::vector<std::string>& entries) {
  std::string problem;
  auto parsed = TrustedProxies::parse(entries, problem);
  EXPECT_TRUE(parsed) << problem;
  return parsed.value_or(TrustedProxies{});
}

TEST(TrustedProxies, AddressesAndNetworksOfBothFamilies) {
  const auto trusted = proxies({"127.0.0.1", "10.0.0.0/8", "fd00::/8", "::1"});
  EXPECT_TRUE(trusted.contains("127.0.0.1"));
  EXPECT_FALSE(trusted.contains("127.0.0.2"));
  EXPECT_TRUE(trusted.contains("10.200.3.4"));
  EXPECT_FALSE(trusted.contains("11.0.0.1"));
  EXPECT_TRUE(trusted.contains("fd12:3456::1"));
  EXPECT_TRUE(trusted.contains("::1"));
  EXPECT_TRUE(trusted.contains("::ffff:10.1.2.3"));  // IPv4 mapped into IPv6 is the same address
  EXPECT_FALSE(trusted.contains("not an address"));
}

TEST(TrustedProxies, MalformedEntriesAreRefusedByName) {
  for (const char* bad : {"localhost", "10.0.0.0/33", "10.0.0.0/", "1.2.3.4/x", "::1/129", ""}) {
    std::string problem;
    EXPECT_FALSE(TrustedProxies::parse({bad}, problem)) << bad;
    EXPECT_NE(problem.find(bad), std::string::npos) << problem;
  }
}

TEST(ClientAddress, AnUntrustedPeerIsTheClientWhateverItForwards) {
  const auto trusted = proxies({"127.0.0.1"});
  EXPECT_EQ(trusted.client_address("203.0.113.9", {"198.51.100.1"}), "203.0.113.9");
  EXPECT_EQ(TrustedProxies{}.client_address("127.0.0.1", {"198.51.100.1"}), "127.0.0.1");
}

TEST(ClientAddress, BehindTrustedProxiesTheRightmostUntrustedHopIsTheClient) {
  const auto trusted = proxies({"127.0.0.1", "10.0.0.0/8"});
  EXPECT_EQ(trusted.client_address("127.0.0.1", {"198.51.100.7"}), "198.51.100.7");
  // A client that writes its own X-Forwarded-For cannot pose as another: nginx appends the real one.
  EXPECT_EQ(trusted.client_address("127.0.0.1", {"1.1.1.1, 198.51.100.7"}), "198.51.100.7");
  // Two proxies of ours: the load balancer's hop is skipped.
  EXPECT_EQ(trusted.client_address("127.0.0.1", {"198.51.100.7, 10.1.1.1"}), "198.51.100.7");
  // Fields in the order received count as one list.
  EXPECT_EQ(trusted.client_address("127.0.0.1", {"1.1.1.1", "198.51.100.8"}), "198.51.100.8");
  // No header: the proxy itself.
  EXPECT_EQ(trusted.client_address("127.0.0.1", {}), "127.0.0.1");
  // A malformed hop ends the walk at the proxy that passed it on.
  EXPECT_EQ(trusted.client_address("127.0.0.1", {"198.51.100.7, garbage"}), "127.0.0.1");
  EXPECT_EQ(trusted.client_address("::ffff:127.0.0.1", {"2001:db8::5"}), "2001:db8::5");
}

TEST(AddressGroup, IPv4IsItselfAndIPv6IsItsSlash64) {
  EXPECT_EQ(address_group("192.0.2.1"), "192.0.2.1");
  EXPECT_EQ(address_group("::ffff:192.0.2.1"), "192.0.2.1");
  EXPECT_EQ(address_group("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::/64");
  EXPECT_EQ(address_group("2001:db8:1:2::1"), address_group("2001:db8:1:2:ffff::9"));
  EXPECT_NE(address_group("2001:db8:1:2::1"), address_group("2001:db8:1:3::1"));
}

}  // namespace
}  // namespace cudojo::http
