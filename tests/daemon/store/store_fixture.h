// The fixture of the store's tests: a real SQLite file in a temp dir, opened at SetUp and
// reopened on demand, as a restarted longhauld opens it.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "daemon/store/sqlite_store.h"
#include "tests/testing/test_util.h"

namespace longhaul::store {

class ReopenedStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }
  void Reopen() {
    store_.reset();
    auto s = SqliteStore::Open(dir_.Join("longhaul.db"));
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
  }

  testing::TempDir dir_;
  std::unique_ptr<SqliteStore> store_;
};

}  // namespace longhaul::store
