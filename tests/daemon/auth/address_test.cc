#include "daemon/auth/address.h"

#include <gtest/gtest.h>

namespace longhaul::auth {
namespace {

TEST(AddressTest, HostOfEveryForm) {
  EXPECT_EQ(HostOf("127.0.0.1:7070"), "127.0.0.1");
  EXPECT_EQ(HostOf("ipv4:10.0.0.2:5123"), "10.0.0.2");
  EXPECT_EQ(HostOf("ipv6:[::1]:5123"), "::1");
  EXPECT_EQ(HostOf("ipv6:%5B::1%5D:5123"), "::1");
  EXPECT_EQ(HostOf("[fd00::2]:7070"), "fd00::2");
  EXPECT_EQ(HostOf("dns:///coord.example:7070"), "coord.example");
  EXPECT_EQ(HostOf("coord.example"), "coord.example");
  EXPECT_EQ(HostOf("fd00::2"), "fd00::2");
}

TEST(AddressTest, LoopbackIs127Slash8AndColonColon1Only) {
  for (const char* a : {"127.0.0.1:7070", "127.0.0.2:1", "127.255.255.254:9", "[::1]:7070",
                        "ipv6:[::1]:5", "ipv4:127.0.0.1:5", "localhost:7070",
                        "[::ffff:127.0.0.1]:7070", "unix:/run/longhaul.sock"}) {
    EXPECT_TRUE(IsLoopback(a)) << a;
  }
  for (const char* a :
       {"0.0.0.0:7070", "[::]:7070", "192.0.2.2:7070", "128.0.0.1:7070", "126.255.255.255:1",
        "[fd00::2]:7070", "coord.example:7070", "[::ffff:10.0.0.1]:7070", "ipv4:10.0.0.1:5", ""}) {
    EXPECT_FALSE(IsLoopback(a)) << a;
  }
}

}  // namespace
}  // namespace longhaul::auth
