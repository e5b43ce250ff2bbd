// The shim's exit record on a full disk: exit.json's bytes are reserved before the stage
// starts, so a stage that fills the disk cannot cost the record of how it ended.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/shim/shim.h"
#include "agent/shim/shim_files.h"
#include "core/fs.h"
#include "tests/testing/test_util.h"
#include "tests/testing/tmpfs.h"

namespace longhaul::shim {
namespace {

using nlohmann::json;
using testing::BinPath;
using testing::ReadTextFile;
using testing::TmpfsMount;

TEST(ExitRecordTest, TheLargestRecordFitsTheReservation) {
  // Every byte of the reason a control character: six bytes each once escaped.
  std::string reason(3 * kMaxExitReasonBytes, '\x01');
  std::string rec =
      ExitRecordJson(-2147483647, 255, INT64_MAX, reason, true, INT32_MAX, INT64_MAX, INT64_MAX);
  EXPECT_LE(static_cast<int64_t>(rec.size()), kExitRecordReserve);
  json doc = json::parse(rec);
  EXPECT_EQ(doc["reason"].get<std::string>().size(), kMaxExitReasonBytes);
  EXPECT_EQ(doc["memory_peak_bytes"], INT64_MAX);
  EXPECT_EQ(doc["cpu_usec"], INT64_MAX);
  // What the cgroup did not measure is left out.
  json plain = json::parse(ExitRecordJson(0, 0, 1, "", false));
  EXPECT_FALSE(plain.contains("memory_peak_bytes"));
  EXPECT_FALSE(plain.contains("cpu_usec"));

  // A cut never splits a UTF-8 sequence (which would turn into U+FFFD).
  std::string euros;
  while (euros.size() < 2 * kMaxExitReasonBytes) euros += "\xE2\x82\xAC";
  std::string cut = json::parse(ExitRecordJson(0, 0, 1, euros, false))["reason"];
  EXPECT_LE(cut.size(), kMaxExitReasonBytes);
  EXPECT_EQ(cut.size() % 3, 0u);
  EXPECT_EQ(cut, euros.substr(0, cut.size()));

  // A short reason is kept whole.
  EXPECT_EQ(json::parse(ExitRecordJson(3, 0, 1, "cancelled", false))["reason"], "cancelled");
}

TEST(ExitRecordTest, ReservedRecordIsPublishedOnAFullDiskAndAnUnreservedOneIsNot) {
  TmpfsMount fs(1 << 20);
  if (!fs.ok()) GTEST_SKIP() << fs.error();
  PreparedFile reserved(fs.path(), kExitRecordReserve);
  ASSERT_TRUE(reserved.reserved()) << std::strerror(reserved.reserve_error());
  PreparedFile unreserved(fs.path(), 0);
  ASSERT_EQ(fs.Fill("fill"), ENOSPC);

  std::string rec = ExitRecordJson(0, 0, 1700000000000, "", false);
  // Without a reservation the full disk refuses the record: what used to happen.
  EXPECT_FALSE(unreserved.Publish(fs.Join("other.json"), rec));
  EXPECT_FALSE(PathExists(fs.Join("other.json")));
  // With one, it is written in place and cut to its length.
  ASSERT_TRUE(reserved.Publish(fs.Join("exit.json"), rec));
  EXPECT_EQ(ReadTextFile(fs.Join("exit.json")), rec);
  struct stat st;
  ASSERT_EQ(::stat(fs.Join("exit.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(rec.size()));
}

TEST(ExitRecordTest, ReservationFailsCleanlyOnADiskAlreadyFull) {
  TmpfsMount fs(1 << 20);
  if (!fs.ok()) GTEST_SKIP() << fs.error();
  ASSERT_EQ(fs.Fill("fill"), ENOSPC);
  PreparedFile f(fs.path(), kExitRecordReserve);
  EXPECT_FALSE(f.reserved());
  EXPECT_EQ(f.reserve_error(), ENOSPC);
}

// The real shim, its attempt directory on a small tmpfs, and a stage that fills it and then
// exits 0: exit.json says 0.
TEST(ExitRecordTest, ShimRecordsTheExitOfAStageThatFilledTheDisk) {
  TmpfsMount fs(4 << 20);
  if (!fs.ok()) GTEST_SKIP() << fs.error();
  std::string dir = fs.Join("attempt");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  std::string script = "cat /dev/zero > " + fs.Join("big") +
                       " 2>/dev/null; i=0; while [ $i -lt 2000 ]; do echo progress $i; "
                       "i=$((i+1)); done; exit 0";
  std::vector<std::string> args = {BinPath("longhaul-shim"), "--dir", dir, "--", "/bin/sh",
                                   "-c", script};
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(126);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  json exit = json::parse(ReadTextFile(dir + "/exit.json"));
  EXPECT_EQ(exit["exit_code"], 0);
  EXPECT_EQ(exit["signal"], 0);
  EXPECT_EQ(exit["start_failed"], false);
  // The stage did fill it: the record was written after the disk was full.
  EXPECT_EQ(fs.Fill("more"), ENOSPC);
}

}  // namespace
}  // namespace longhaul::shim
