// How long `longhaul admin backup` takes against the size of the store: builds stores of
// several sizes (store_builder.h: finished runs, EVENTS_PER_RUN event lines each), then times
// store::BackupDatabase on each (the online copy, the integrity_check of the copy, and the
// whole call with fsync and rename), and for comparison the same copy made with VACUUM INTO.
// Prints one line per store: size, and the median of --repeat calls of each.
//
//   backup_bench [--dir /var/tmp/longhaul-backup-bench] [--runs 1000,10000,100000]
//                [--events-per-run 100] [--repeat 5]
//
// Stores are kept in DIR (runs-N.db) and reused by later runs. Put DIR on a real disk.
#include <sqlite3.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/store/store_builder.h"
#include "core/strings.h"
#include "daemon/store/backup.h"

namespace longhaul::bench {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// VACUUM INTO `dest` from a connection of its own; milliseconds, or -1 on error.
double VacuumIntoMs(const std::string& db, const std::string& dest) {
  sqlite3* c = nullptr;
  if (sqlite3_open_v2(db.c_str(), &c, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return -1;
  auto start = std::chrono::steady_clock::now();
  std::string sql = "VACUUM INTO '" + dest + "'";
  int rc = sqlite3_exec(c, sql.c_str(), nullptr, nullptr, nullptr);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  sqlite3_close(c);
  return rc == SQLITE_OK ? ms : -1;
}

int Main(int argc, char** argv) {
  CLI::App app{"backup_bench: longhaul admin backup's time against the store's size"};
  std::string dir = "/var/tmp/longhaul-backup-bench";
  std::vector<int64_t> runs = {1'000, 10'000, 100'000};
  int64_t events_per_run = 100;
  int repeat = 5;
  app.add_option("--dir", dir, "where the stores are built and kept (a real disk)");
  app.add_option("--runs", runs, "store sizes, in finished runs")->delimiter(',');
  app.add_option("--events-per-run", events_per_run, "event lines per run");
  app.add_option("--repeat", repeat, "timed backups of each store (median reported)");
  CLI11_PARSE(app, argc, argv);
  std::filesystem::create_directories(dir);

  std::printf("%9s %10s %10s %9s %9s %9s %9s %12s\n", "runs", "events", "MiB", "copy_ms",
              "check_ms", "total_ms", "MiB/s", "vacuum_ms");
  for (int64_t n : runs) {
    std::string db = StrCat(dir, "/runs-", n, "-", events_per_run, ".db");
    if (!std::filesystem::exists(db)) {
      StoreShape shape;
      shape.runs = n;
      shape.events = n * events_per_run;
      Result<BuiltStore> built = BuildStore(db, shape);
      if (!built.ok()) {
        std::fprintf(stderr, "build %s: %s\n", db.c_str(), ToStd(built.status().message()).c_str());
        return 1;
      }
    }
    std::vector<double> copy, check, total, vacuum;
    int64_t bytes = 0;
    for (int i = 0; i < repeat; ++i) {
      std::string dest = StrCat(dir, "/copy.db");
      std::filesystem::remove(dest);
      Result<store::BackupResult> b = store::BackupDatabase(db, dest);
      if (!b.ok()) {
        std::fprintf(stderr, "backup %s: %s\n", db.c_str(), ToStd(b.status().message()).c_str());
        return 1;
      }
      copy.push_back(static_cast<double>(b->copy_ms));
      check.push_back(static_cast<double>(b->check_ms));
      total.push_back(static_cast<double>(b->total_ms));
      bytes = b->bytes;
      std::filesystem::remove(dest);
      vacuum.push_back(VacuumIntoMs(db, dest));
      std::filesystem::remove(dest);
    }
    double mib = static_cast<double>(bytes) / (1 << 20);
    double med_copy = Median(copy);
    std::printf("%9lld %10lld %10.1f %9.0f %9.0f %9.0f %9.0f %12.0f\n", static_cast<long long>(n),
                static_cast<long long>(n * events_per_run), mib, med_copy, Median(check),
                Median(total), med_copy > 0 ? mib / (med_copy / 1000) : 0, Median(vacuum));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace longhaul::bench

int main(int argc, char** argv) { return longhaul::bench::Main(argc, argv); }
