// Reservations in the store: inserted with their ids, cancelled (the row stays, with who and
// why), listed in force or all, on a real SQLite file that is reopened in between.
#include <gtest/gtest.h>

#include "daemon/store/sqlite_store.h"
#include "tests/daemon/store/store_fixture.h"
#include "tests/testing/test_util.h"

namespace longhaul::store {
namespace {

class ReservationStoreTest : public ReopenedStoreTest {
 protected:
  int64_t Insert(const std::string& holder, int64_t from_ms, int64_t until_ms) {
    ReservationRow r;
    r.agent_id = "n1";
    r.gpus = 4;
    r.holder_kind = "team";
    r.holder = holder;
    r.from_ms = from_ms;
    r.until_ms = until_ms;
    r.reason = "sprint";
    r.by = "ada";
    r.set_at_ms = 500;
    EXPECT_TRUE(store_->Begin().ok());
    Result<int64_t> id = store_->InsertReservation(r);
    EXPECT_TRUE(id.ok()) << id.status();
    EXPECT_TRUE(store_->Commit().ok());
    return id.value_or(0);
  }
};

TEST_F(ReservationStoreTest, InsertCancelAndListSurviveAReopen) {
  int64_t ended = Insert("nlp", 1000, 2000);
  int64_t on = Insert("vision", 1500, 9000);
  int64_t later = Insert("vision", 5000, 9000);
  EXPECT_LT(ended, on);
  ASSERT_TRUE(store_->Begin().ok());
  ASSERT_TRUE(store_->CancelReservation(later, 3000, "bob", "moved").ok());
  ASSERT_TRUE(store_->Commit().ok());
  Reopen();
  Result<std::vector<ReservationRow>> current = store_->LoadReservations(false, 2500);
  ASSERT_TRUE(current.ok()) << current.status();
  ASSERT_EQ(current->size(), 1u) << "neither the ended nor the cancelled one";
  const ReservationRow& r = (*current)[0];
  EXPECT_EQ(r.id, on);
  EXPECT_EQ(r.agent_id, "n1");
  EXPECT_EQ(r.gpus, 4);
  EXPECT_EQ(r.holder_kind, "team");
  EXPECT_EQ(r.holder, "vision");
  EXPECT_EQ(r.from_ms, 1500);
  EXPECT_EQ(r.until_ms, 9000);
  EXPECT_EQ(r.reason, "sprint");
  EXPECT_EQ(r.by, "ada");
  EXPECT_EQ(r.set_at_ms, 500);
  EXPECT_EQ(r.cancelled_at_ms, 0);
  Result<std::vector<ReservationRow>> all = store_->LoadReservations(true, 2500);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].id, ended) << "by start";
  EXPECT_EQ((*all)[2].id, later);
  EXPECT_EQ((*all)[2].cancelled_at_ms, 3000);
  EXPECT_EQ((*all)[2].cancelled_by, "bob");
  EXPECT_EQ((*all)[2].cancel_reason, "moved");
}

}  // namespace
}  // namespace longhaul::store
