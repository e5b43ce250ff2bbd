// The store's one-statement reads (daemon/store/query.h): rows in order, NotFound with the
// caller's message, and the cached statement reset however the read ends.
#include "daemon/store/query.h"

#include <gtest/gtest.h>

#include "tests/testing/test_util.h"

namespace longhaul::store {
namespace {

class StoreQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<Db>> db = Db::Open(dir_.path() + "/q.db", /*create=*/true,
                                              /*read_only=*/false);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
    ASSERT_TRUE(db_->Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, n INTEGER);"
                          "INSERT INTO t VALUES (1, 'a', 10), (2, 'b', NULL), (3, 'c', 30);")
                    .ok());
  }

  // Whether any statement of the connection is still stepping (holds its read open).
  bool AnyStatementBusy() {
    for (sqlite3_stmt* s = sqlite3_next_stmt(db_->raw(), nullptr); s != nullptr;
         s = sqlite3_next_stmt(db_->raw(), s)) {
      if (sqlite3_stmt_busy(s)) return true;
    }
    return false;
  }

  testing::TempDir dir_;
  std::unique_ptr<Db> db_;
};

std::string QueryTestName(const Stmt& st) { return st.Text(1); }

TEST_F(StoreQueryTest, AllBindsInOrderAndKeepsTheStatementsOrder) {
  const std::string sql = "SELECT id, name FROM t WHERE id >= ?1 AND name != ?2 ORDER BY id DESC";
  Result<std::vector<std::string>> names = QueryAll(db_.get(), sql, QueryTestName, int64_t{2}, "x");
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (std::vector<std::string>{"c", "b"}));
  // The cached statement again, other bindings: none of the first call's are left.
  names = QueryAll(db_.get(), sql, QueryTestName, int64_t{1}, "c");
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (std::vector<std::string>{"b", "a"}));
  EXPECT_FALSE(AnyStatementBusy());
}

TEST_F(StoreQueryTest, OneIsNotFoundWithTheCallersMessage) {
  const std::string sql = "SELECT id, name FROM t WHERE id = ?";
  Result<std::string> found = QueryOne(db_.get(), sql, "no row 3", QueryTestName, int64_t{3});
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, "c");
  Result<std::string> missing = QueryOne(db_.get(), sql, "no row 9", QueryTestName, int64_t{9});
  ASSERT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "no row 9");
}

TEST_F(StoreQueryTest, FirstStopsAfterOneRowAndResets) {
  Result<std::optional<std::optional<int64_t>>> n =
      QueryFirst(db_.get(), "SELECT n FROM t WHERE id >= ? ORDER BY id", FirstColumnOptInt, 2);
  ASSERT_TRUE(n.ok()) << n.status();
  ASSERT_TRUE(n->has_value());
  EXPECT_FALSE(n->value().has_value());  // row 2's NULL, not row 3's 30
  // Stopped before the last row, yet not left open: a write on the connection goes through.
  EXPECT_FALSE(AnyStatementBusy());
  EXPECT_TRUE(db_->Exec("DROP TABLE t").ok());
}

TEST_F(StoreQueryTest, EachStopsAtTheVisitorsErrorAndResets) {
  int seen = 0;
  Status st = QueryEach(db_.get(), "SELECT id FROM t ORDER BY id", [&](const Stmt& row) {
    ++seen;
    if (row.Int(0) == 2) return absl::DataLossError("row 2 is bad");
    return OkStatus();
  });
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(seen, 2);
  EXPECT_FALSE(AnyStatementBusy());
}

TEST_F(StoreQueryTest, AStepErrorIsReturned) {
  // A function that fails while stepping (abs of the smallest integer overflows).
  Result<std::vector<int64_t>> rows =
      QueryAll(db_.get(), "SELECT abs(?1) FROM t", FirstColumnInt, int64_t{INT64_MIN});
  EXPECT_FALSE(rows.ok());
  EXPECT_NE(rows.status().message().find("step"), absl::string_view::npos) << rows.status();
  EXPECT_FALSE(AnyStatementBusy());
}

}  // namespace
}  // namespace longhaul::store
