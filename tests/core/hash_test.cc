#include "core/hash.h"

#include <gtest/gtest.h>

namespace longhaul {
namespace {

TEST(HashTest, Sha256OfKnownInput) {
  EXPECT_EQ(Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(HashTest, FieldBoundariesMatter) {
  FieldHasher a, b;
  a.Add("ab");
  a.Add("c");
  b.Add("a");
  b.Add("bc");
  EXPECT_NE(a.HexDigest(), b.HexDigest());
}

}  // namespace
}  // namespace longhaul
