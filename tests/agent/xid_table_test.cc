// The XID table: the built-in data file, an operator's overrides, bad files named.
#include "agent/gpu/xid_table.h"

#include <gtest/gtest.h>

#include "tests/testing/test_util.h"

namespace longhaul::agent {
namespace {

TEST(XidTableTest, BuiltinClassifiesNvidiasPublishedClasses) {
  ASSERT_TRUE(XidTable::Parse(BuiltinXidTableCsv(), "built-in").ok());
  XidTable t = XidTable::Builtin();
  EXPECT_GE(t.size(), 20u);
  for (int xid : {48, 63, 64, 74, 79, 92, 94, 95}) {
    EXPECT_EQ(t.Classify(xid).cls, XidClass::kHardware) << xid;
  }
  for (int xid : {13, 31, 43}) EXPECT_EQ(t.Classify(xid).cls, XidClass::kApplication) << xid;
  EXPECT_EQ(t.Classify(79).description, "GPU has fallen off the bus");
  EXPECT_EQ(t.Classify(9999).cls, XidClass::kUnknown);
}

TEST(XidTableTest, AnOperatorFileReplacesAndAddsEntries) {
  testing::TempDir dir;
  std::string path = dir.Join("xids.csv");
  testing::WriteTextFile(path,
                         "# ours: 13 has meant a bad board here\n"
                         "13, hardware, Graphics engine exception (hardware on our fleet)\n"
                         "\n"
                         "500,info,Something new\n");
  auto t = XidTable::BuiltinWithOverrides(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->Classify(13).cls, XidClass::kHardware);
  EXPECT_EQ(t->Classify(500).cls, XidClass::kInfo);
  EXPECT_EQ(t->Classify(31).cls, XidClass::kApplication) << "the rest stays built in";
}

TEST(XidTableTest, BadEntriesAreNamedWithFileAndLine) {
  auto bad_class = XidTable::Parse("13,application,ok\n79,fatal,oops\n", "ops.csv");
  ASSERT_FALSE(bad_class.ok());
  EXPECT_NE(bad_class.status().message().find("ops.csv line 2"), absl::string_view::npos)
      << bad_class.status();
  EXPECT_NE(bad_class.status().message().find("hardware, application or info"),
            absl::string_view::npos);
  EXPECT_FALSE(XidTable::Parse("x,hardware,d\n", "f").ok());
  EXPECT_FALSE(XidTable::Parse("79 hardware\n", "f").ok());
  auto missing = XidTable::BuiltinWithOverrides("/nonexistent/xids.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/xids.csv"), absl::string_view::npos);
}

}  // namespace
}  // namespace longhaul::agent
