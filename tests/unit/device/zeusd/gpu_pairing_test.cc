// Pairing this process's GPUs with zeusd's: by PCI address whatever the
// order or spelling on each side, by index only where an address is missing
// (with a note), and a GPU the daemon does not serve left unpaired with the
// reason.
#include "device/zeusd/gpu_pairing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace zeus::device_internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;

TEST(ZeusdGpuPairing, BothVendorsSpellingsOfOneAddressAreEqual) {
  EXPECT_EQ(normalized_pci_address("00000000:3B:00.0"), "0000:3b:00.0");  // NVML
  EXPECT_EQ(normalized_pci_address("0000:3b:00.0"), "0000:3b:00.0");      // AMD SMI
  EXPECT_EQ(normalized_pci_address(" 0001:C1:1f.7\n"), "0001:c1:1f.7");
  EXPECT_EQ(normalized_pci_address("3b:00.0"), "0000:3b:00.0");  // no domain: domain 0
  // Not an address: compared as given, lower-cased, never made to look like one.
  EXPECT_EQ(normalized_pci_address("GPU-1234"), "gpu-1234");
  EXPECT_EQ(normalized_pci_address("0000:3b:20.0"), "0000:3b:20.0");  // device 0x20 > 0x1f
  EXPECT_EQ(normalized_pci_address("0000:zz:00.0"), "0000:zz:00.0");
  EXPECT_EQ(normalized_pci_address(""), "");
}

std::vector<device::ZeusdStatus::GpuInfo> daemon_gpus(std::vector<std::string> addresses) {
  std::vector<device::ZeusdStatus::GpuInfo> out;
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    out.push_back({static_cast<int>(i), "GPU", addresses[i], true});
  }
  return out;
}

TEST(ZeusdGpuPairing, ReorderedVisibleDevicesPairByAddressNotIndex) {
  // HIP_VISIBLE_DEVICES=1,0: this process's GPU 0 is the node's GPU 1.
  const auto p = pair_with_daemon_gpus({{"0000:c2:00.0", 1}, {"0000:c1:00.0", 0}},
                                       daemon_gpus({"0000:C1:00.0", "00000000:c2:00.0"}));
  EXPECT_THAT(p.daemon_ids, ElementsAre(Optional(1), Optional(0)));
  EXPECT_THAT(p.notes, IsEmpty());
  // Even when the indices lie (the daemon numbers the GPUs differently).
  const auto q = pair_with_daemon_gpus({{"0000:c2:00.0", 0}}, daemon_gpus({"x", "0000:c2:00.0"}));
  EXPECT_THAT(q.daemon_ids, ElementsAre(Optional(1)));
}

TEST(ZeusdGpuPairing, AGpuTheDaemonDoesNotServeIsUnpairedWithTheReason) {
  const auto p = pair_with_daemon_gpus({{"0000:c1:00.0", 0}, {"0000:c2:00.0", 1}},
                                       daemon_gpus({"0000:c1:00.0"}));
  EXPECT_THAT(p.daemon_ids, ElementsAre(Optional(0), std::nullopt));
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_THAT(p.notes[0], HasSubstr("GPU 1 (0000:c2:00.0) is not among the GPUs zeusd serves "
                                    "(0000:c1:00.0)"));
}

TEST(ZeusdGpuPairing, MissingAddressesFallBackToIndicesAndSaySo) {
  // A daemon that gives no addresses at all: by the node's index, one note.
  auto none = daemon_gpus({"", ""});
  const auto p = pair_with_daemon_gpus({{"0000:c2:00.0", 1}, {"0000:c1:00.0", 0}}, none);
  EXPECT_THAT(p.daemon_ids, ElementsAre(Optional(1), Optional(0)));
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_THAT(p.notes[0], HasSubstr("paired with the daemon's by index"));
  // A local GPU without an address: by index, with a note naming it.
  const auto q =
      pair_with_daemon_gpus({{"", 1}, {"", 5}}, daemon_gpus({"0000:c1:00.0", "0000:c2:00.0"}));
  EXPECT_THAT(q.daemon_ids, ElementsAre(Optional(1), std::nullopt));
  EXPECT_THAT(q.notes, ElementsAre(HasSubstr("GPU 0 has no PCI address"),
                                   HasSubstr("GPU 1 has no PCI address"),
                                   HasSubstr("GPU 1 (index 5) is not among")));
}

}  // namespace
}  // namespace zeus::device_internal
