// `longhaul quotas`' table (docs/cli.md, "quotas"): each account's figures, `-` where a quota
// names none, and the fair-share line.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/commands.h"

namespace longhaul::cli {
namespace {

v1::Quota QuotaRow(const std::string& account, int32_t in_use, int32_t borrowed, int32_t lent,
                   int32_t waiting) {
  v1::Quota q;
  q.set_account(account);
  q.set_in_use(in_use);
  q.set_borrowed(borrowed);
  q.set_lent(lent);
  q.set_stages_waiting(waiting);
  return q;
}

TEST(QuotasTableTest, ShowsEachAccountsFiguresAndWhoSetItsQuota) {
  v1::ListQuotasResponse resp;
  resp.set_fair_share_half_life_ms(24 * 3'600'000LL);
  v1::Quota* nlp = resp.add_quotas();
  *nlp = QuotaRow("team:nlp", 0, 0, 2, 0);
  nlp->set_has_quota(true);
  nlp->set_gpus(2);
  nlp->set_set_by("--quota");
  nlp->set_decayed_gpu_hours(3.25);
  v1::Quota* vision = resp.add_quotas();
  *vision = QuotaRow("team:vision", 6, 2, 0, 3);
  vision->set_has_quota(true);
  vision->set_gpus(4);
  vision->set_borrow(8);
  vision->set_gpu_hours(500);
  vision->set_period("7d");
  vision->set_window_gpu_hours(120.5);
  vision->set_decayed_gpu_hours(31.2);
  vision->set_set_by("ada");
  *resp.add_quotas() = QuotaRow("user:bob", 1, 1, 0, 1);
  std::ostringstream out;
  RenderQuotas(resp, out);
  EXPECT_EQ(out.str(),
            "ACCOUNT      GUARANTEED  LIMIT  IN USE  BORROWED  LENT  GPU-H USED      FAIR SHARE  "
            "WAITING  SET BY\n"
            "team nlp              2      2       0         0     2  -               3.25 GPU-h  "
            "      0  --quota\n"
            "team vision           4      8       6         2     0  120/500 per 7d  31.2 GPU-h  "
            "      3  ada\n"
            "user bob              -      -       1         1     0  -                  0 GPU-h  "
            "      1  (no quota)\n"
            "fair share: past GPU-hours count half as much every 1d; the least used for its "
            "guarantee goes first\n");
}

TEST(QuotasTableTest, SaysWhenFairShareIsOff) {
  v1::ListQuotasResponse resp;
  *resp.add_quotas() = QuotaRow("user:bob", 1, 1, 0, 0);
  std::ostringstream out;
  RenderQuotas(resp, out);
  EXPECT_NE(out.str().find("fair share: off (--fair-share-half-life 0); the queue goes by class "
                           "and age\n"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("(no quota)"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace longhaul::cli
