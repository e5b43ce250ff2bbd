// XIDs from the kernel log: the parser on the driver's line forms (open-gpu-kernel-modules'
// kernel_rc.c, and older drivers' as found in logs), the reader following a file from its
// open, and the backend that adds them to the fake NVML's samples by PCI bus id.
#include "agent/gpu/kmsg_xid.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>

#include "agent/gpu/kernel_log_xids.h"
#include "agent/gpu/nvml_backend.h"
#include "core/logging.h"
#include "tests/agent/fake_nvml/fake_nvml_state.h"
#include "tests/testing/test_util.h"

namespace longhaul::agent {
namespace {

// A line and what it must parse to.
struct KmsgXidCase {
  const char* what;
  std::string line;
  std::string bus;
  int xid;
  std::optional<int64_t> pid;
  std::string process, text;
};

TEST(KmsgXidParseTest, ReadsEveryFormOfTheDriversLine) {
  const std::vector<KmsgXidCase> cases = {
      {"the current driver's line",
       "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, "
       "GPU has fallen off the bus.",
       "0000:3b:00", 79, 1234, "python3", "GPU has fallen off the bus."},
      // One read() of /dev/kmsg: the prefix, a message with commas in it, the dictionary.
      {"a /dev/kmsg record, process unknown",
       "3,1843,5812345678,-;NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, "
       "Graphics SM Warp Exception on (GPC 7, TPC 1, SM 0): Out Of Range Address\n"
       " SUBSYSTEM=pci\n DEVICE=+pci:0000:cb:00.0\n",
       "0000:cb:00", 13, std::nullopt, "",
       "Graphics SM Warp Exception on (GPC 7, TPC 1, SM 0): Out Of Range Address"},
      {"an older driver's, pid only",
       "NVRM: Xid (PCI:0000:01:00): 79, pid=1122, GPU has fallen off the bus.\n", "0000:01:00", 79,
       1122, "", "GPU has fallen off the bus."},
      {"an older driver's, neither",
       "NVRM: Xid (PCI:0000:23:00): 79, GPU has fallen off the "
       "bus.",
       "0000:23:00", 79, std::nullopt, "", "GPU has fallen off the bus."},
      {"the XID alone", "NVRM: Xid (PCI:0000:23:00): 48", "0000:23:00", 48, std::nullopt, "", ""},
      {"a bus id with the function, upper case",
       "NVRM: Xid (PCI:00000000:3B:00.0): 48, pid=7, name=train, An uncorrectable double bit "
       "error (DBE) has been detected.",
       "0000:3b:00", 48, 7, "train", "An uncorrectable double bit error (DBE) has been detected."},
      {"MIG: GPU and compute instance",
       "NVRM: Xid (PCI:0000:3b:00 GPU-I:01 GPU-CI:00): 94, "
       "pid=42, name=vllm, Contained: SM (0x1).",
       "0000:3b:00", 94, 42, "vllm", "Contained: SM (0x1)."},
      {"MIG: GPU instance only", "NVRM: Xid (PCI:0002:00:00 GPU-I:03): 119, pid=1, name=x, y",
       "0002:00:00", 119, 1, "x", "y"},
      {"as dmesg prints it",
       "[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 31, pid=79749, "
       "name=exe, Ch 0000000a, intr 00000000. MMU Fault",
       "0000:3b:00", 31, 79749, "exe", "Ch 0000000a, intr 00000000. MMU Fault"},
      {"as journalctl prints it",
       "Dec 05 02:00:00 node1 kernel: NVRM: Xid (PCI:0000:3b:00): "
       "79, pid=1, name=a, GPU has fallen off the bus.",
       "0000:3b:00", 79, 1, "a", "GPU has fallen off the bus."},
  };
  for (const KmsgXidCase& c : cases) {
    SCOPED_TRACE(c.what);
    std::optional<KmsgXid> x = ParseKmsgXid(c.line);
    ASSERT_TRUE(x.has_value()) << c.line;
    EXPECT_EQ(x->pci_bus_id, c.bus);
    EXPECT_EQ(x->xid, c.xid);
    EXPECT_EQ(x->pid, c.pid);
    EXPECT_EQ(x->process, c.process);
    EXPECT_EQ(x->text, c.text);
  }
}

TEST(KmsgXidParseTest, OtherAndMalformedLinesAreNotXids) {
  for (const char* line : {
           "",
           "6,1,2,-;",
           "NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.",
           "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15",
           "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress",
           "NVRM: Xid (PCI:zz:00:00): 79, GPU has fallen off the bus.",
           "NVRM: Xid (PCI:0000:3b:00): , pid=1, name=a, b",
           "NVRM: Xid (PCI:0000:3b:00): 79x, pid=1",
           "NVRM: Xid (PCI:0000:3b:00 79, pid=1",
           "NVRM: Xid (PCI:0000:3b:00)",
           "NVRM: Xid (PCI:0000:3b:00): 12345678, too long",
           "NVRM: Xid (PCI:0000:3b:ff): 79, device past 0x1f",
       }) {
    EXPECT_FALSE(ParseKmsgXid(line).has_value()) << line;
  }
}

TEST(KmsgXidParseTest, BusIdsNormalise) {
  EXPECT_EQ(NormalizePciBusId("00000000:3B:00.0"), "0000:3b:00");
  EXPECT_EQ(NormalizePciBusId("0000:3b:00"), "0000:3b:00");
  EXPECT_EQ(NormalizePciBusId(" 3b:00.0 "), "0000:3b:00");
  EXPECT_EQ(NormalizePciBusId("00010000:01:1f.7"), "10000:01:1f");
  EXPECT_FALSE(NormalizePciBusId("").has_value());
  EXPECT_FALSE(NormalizePciBusId("3b").has_value());
  EXPECT_FALSE(NormalizePciBusId("0000:3b:00.").has_value());
  EXPECT_FALSE(NormalizePciBusId("0000:3b:00.0:1").has_value());
  EXPECT_FALSE(NormalizePciBusId("000000000:3b:00").has_value()) << "nine digits of domain";
}

void AppendTo(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app) << text;
}

TEST(KmsgXidReaderTest, FollowsAFileFromItsOpen) {
  testing::TempDir tmp;
  std::string path = tmp.Join("kmsg");
  testing::WriteTextFile(path, "NVRM: Xid (PCI:0000:3b:00): 79, before the agent started\n");
  KmsgXidReader reader(path);
  ASSERT_TRUE(reader.on()) << reader.off_reason();
  EXPECT_TRUE(reader.Poll().empty()) << "only what is written after the open";

  AppendTo(path, "6,10,100,-;eth0: link up\n6,11,200,-;NVRM: Xid (PCI:0000:3c:00): 48, pid=9");
  EXPECT_TRUE(reader.Poll().empty()) << "a line without its newline waits";
  AppendTo(path, ", name=a, DBE\n3,12,300,-;NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen\n");
  std::vector<KmsgXid> got = reader.Poll();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].pci_bus_id, "0000:3c:00");
  EXPECT_EQ(got[0].xid, 48);
  EXPECT_EQ(got[0].text, "DBE");
  EXPECT_EQ(got[1].xid, 79);
  EXPECT_TRUE(reader.Poll().empty()) << "each line is read once";
}

TEST(KmsgXidReaderTest, AMissingLogIsOffWithTheReason) {
  testing::TempDir tmp;
  KmsgXidReader reader(tmp.Join("no-kmsg"));
  EXPECT_FALSE(reader.on());
  EXPECT_NE(reader.off_reason().find("no-kmsg: No such file or directory"), std::string::npos)
      << reader.off_reason();
  EXPECT_TRUE(reader.Poll().empty());
}

TEST(KmsgXidReaderTest, DevKmsgIsReadWithoutBlockingOrRefusedWithTheReason) {
  KmsgXidReader reader("/dev/kmsg");
  if (!reader.on()) {
    // Not root and kernel.dmesg_restrict = 1, or a container without the device.
    EXPECT_NE(reader.off_reason().find("/dev/kmsg: "), std::string::npos);
    if (reader.off_reason().find("ermission") != std::string::npos ||
        reader.off_reason().find("not permitted") != std::string::npos) {
      EXPECT_NE(reader.off_reason().find("CAP_SYSLOG"), std::string::npos) << reader.off_reason();
    }
    GTEST_SKIP() << reader.off_reason();
  }
  reader.Poll();  // returns: the device is read with O_NONBLOCK from its end
  EXPECT_TRUE(reader.on()) << reader.off_reason();
}

// The fake NVML's GPUs (bus ids 0000:3b:00, 0000:3c:00) with the kernel log in a temp file.
class KernelLogXidsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = tmp_.Join("nvml.json");
    kmsg_ = tmp_.Join("kmsg");
    testing::WriteTextFile(kmsg_, "");
    ::setenv("LONGHAUL_FAKE_NVML_STATE", state_.c_str(), 1);
    gpus_ = testing::FakeGpus(2);
    sink_ = std::make_shared<spdlog::sinks::ostream_sink_mt>(log_);
    GetLogger("agent")->sinks().push_back(sink_);
  }
  void TearDown() override {
    auto& sinks = GetLogger("agent")->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
    ::unsetenv("LONGHAUL_FAKE_NVML_STATE");
  }
  KernelLogXids Open() {
    testing::WriteFakeNvmlState(state_, gpus_);
    auto nvml = OpenNvml(LONGHAUL_FAKE_NVML);
    EXPECT_TRUE(nvml.ok()) << nvml.status();
    return AddKernelLogXids(std::move(*nvml), kmsg_);
  }
  std::vector<GpuSample> Sample(GpuBackend& b) {
    auto s = b.Sample();
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : std::vector<GpuSample>{};
  }

  testing::TempDir tmp_;
  std::string state_, kmsg_;
  std::vector<testing::FakeGpuState> gpus_;
  std::ostringstream log_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

TEST_F(KernelLogXidsTest, AddsTheLogsXidsToTheGpuWithoutNvmlEvents) {
  gpus_[1].xid_events = false;
  KernelLogXids k = Open();
  EXPECT_FALSE(k.warn);
  EXPECT_EQ(k.note, "XIDs of GPU 1 from the kernel log (" + kmsg_ + ")");
  auto* backend = dynamic_cast<KernelLogXidBackend*>(k.backend.get());
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->name(), "nvml");
  ASSERT_EQ(backend->devices().size(), 2u);
  EXPECT_EQ(backend->devices()[1].pci_bus_id, "00000000:3C:00.0");
  EXPECT_TRUE(backend->devices()[0].xid_events);
  EXPECT_FALSE(backend->devices()[1].xid_events);

  AppendTo(kmsg_,
           "6,1,1,-;NVRM: Xid (PCI:0000:3c:00): 79, pid=1234, name=python3, GPU has fallen off "
           "the bus.\n");
  std::vector<GpuSample> s = Sample(*backend);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].xids, std::vector<int>{79});
  EXPECT_TRUE(s[0].xids.empty());
  EXPECT_NE(log_.str().find("GPU 1: XID 79 in the kernel log (PCI 0000:3c:00, pid 1234, "
                            "python3): GPU has fallen off the bus."),
            std::string::npos)
      << log_.str();
  EXPECT_TRUE(Sample(*backend)[1].xids.empty()) << "each XID once";

  // GPU 0 has NVML's events: its XID counts once, from NVML, though the log shows it too.
  gpus_[0].xids = {48};
  testing::WriteFakeNvmlState(state_, gpus_);
  AppendTo(kmsg_, "3,2,2,-;NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=a, DBE\n");
  s = Sample(*backend);
  EXPECT_EQ(s[0].xids, std::vector<int>{48});
  EXPECT_TRUE(s[1].xids.empty());
  EXPECT_EQ(backend->added(), 1u);

  // A bus id that is none of this node's GPUs: logged and ignored.
  AppendTo(kmsg_, "3,3,3,-;NVRM: Xid (PCI:0000:99:00): 79, GPU has fallen off the bus.\n");
  s = Sample(*backend);
  EXPECT_TRUE(s[0].xids.empty());
  EXPECT_TRUE(s[1].xids.empty());
  EXPECT_EQ(backend->ignored(), 1u);
  EXPECT_NE(log_.str().find("XID 79 names PCI 0000:99:00, which is none of this node's GPUs; "
                            "ignored"),
            std::string::npos)
      << log_.str();
}

TEST_F(KernelLogXidsTest, NotUsedWhenNvmlDeliversEveryGpusXids) {
  KernelLogXids k = Open();
  EXPECT_EQ(dynamic_cast<KernelLogXidBackend*>(k.backend.get()), nullptr);
  EXPECT_FALSE(k.warn);
  EXPECT_EQ(k.note, "XIDs from NVML's events; the kernel log is not read");
}

TEST_F(KernelLogXidsTest, AnUnreadableLogIsSaidOnceAsAWarning) {
  gpus_[0].xid_events = gpus_[1].xid_events = false;
  kmsg_ = tmp_.Join("missing-kmsg");
  KernelLogXids k = Open();
  EXPECT_EQ(dynamic_cast<KernelLogXidBackend*>(k.backend.get()), nullptr);
  EXPECT_TRUE(k.warn);
  EXPECT_NE(k.note.find("XIDs of GPU 0, 1 are not seen: the kernel log is not read: " + kmsg_ +
                        ": No such file or directory"),
            std::string::npos)
      << k.note;
  ASSERT_NE(k.backend, nullptr);
  EXPECT_EQ(Sample(*k.backend).size(), 2u) << "the GPUs are sampled as before";
}

}  // namespace
}  // namespace longhaul::agent
