// PodDeviceMap: which pod and container hold a GPU, from the kubelet's
// PodResources listing as the NVIDIA device plugin fills it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "zeus/monitor/attribution/kubernetes.h"

namespace zeus::attribution {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr const char* kGpuA = "GPU-8f1a6c2e-1111-2222-3333-444455556666";
constexpr const char* kGpuB = "GPU-0b7d9e41-aaaa-bbbb-cccc-ddddeeeeffff";
constexpr const char* kMig = "MIG-5e2c0d7a-9999-8888-7777-666655554444";

PodResources pod(std::string ns, std::string name, std::vector<ContainerResources> containers) {
  return {std::move(name), std::move(ns), std::move(containers)};
}

ContainerResources container(std::string name, std::string resource, std::vector<std::string> ids) {
  return {std::move(name), {{std::move(resource), std::move(ids)}}, {}};
}

MATCHER_P3(IsRef, ns, pod_name, container_name, "") {
  return arg.namespace_ == ns && arg.pod == pod_name && arg.container == container_name;
}

TEST(PodDeviceMap, ExclusiveGpuHasItsOneContainer) {
  PodDeviceMap map({pod("ml", "trainer-0", {container("main", "nvidia.com/gpu", {kGpuA})}),
                    pod("ml", "trainer-1", {container("main", "nvidia.com/gpu", {kGpuB})})});
  EXPECT_THAT(map.holders_of_gpu(kGpuA), ElementsAre(IsRef("ml", "trainer-0", "main")));
  EXPECT_THAT(map.holders_of_gpu(kGpuB), ElementsAre(IsRef("ml", "trainer-1", "main")));
  EXPECT_FALSE(map.empty());
}

TEST(PodDeviceMap, TimeSlicedReplicasListEveryHolderOncePerContainerInOrder) {
  const std::string a = kGpuA;
  // Two pods share GPU A (replicas 0, 3 and 1); one container holds two
  // replicas; the sidecar holds a replica too; another pod has GPU B.
  PodDeviceMap map({
      pod("team-b", "infer",
          {container("server", "nvidia.com/gpu", {a + "::3", a + "::0"}),
           container("sidecar", "nvidia.com/gpu.shared", {a + "::5"})}),
      pod("team-a", "notebook", {container("jupyter", "nvidia.com/gpu", {a + "::1"})}),
      pod("team-c", "batch", {container("main", "nvidia.com/gpu", {std::string(kGpuB) + "::0"})}),
  });
  EXPECT_THAT(map.holders_of_gpu(kGpuA),
              ElementsAre(IsRef("team-b", "infer", "server"), IsRef("team-b", "infer", "sidecar"),
                          IsRef("team-a", "notebook", "jupyter")));
  EXPECT_THAT(map.holders_of_gpu(kGpuB), ElementsAre(IsRef("team-c", "batch", "main")));
  // A UUID that is a prefix of another's is not that GPU.
  EXPECT_THAT(map.holders_of_gpu(a.substr(0, a.size() - 2)), IsEmpty());
}

TEST(PodDeviceMap, MigDeviceHasTheHolderOfItsInstance) {
  const std::string other_mig = "MIG-77aa0d7a-9999-8888-7777-666655554444";
  PodDeviceMap map(
      {pod("ml", "small", {container("main", "nvidia.com/mig-1g.10gb", {kMig})}),
       pod("ml", "whole", {container("main", "nvidia.com/gpu", {kGpuA})}),
       pod("ml", "shared-1", {container("a", "nvidia.com/mig-2g.20gb", {other_mig + "::1"})}),
       pod("ml", "shared-0", {container("b", "nvidia.com/mig-2g.20gb", {other_mig + "::0"})})});
  ASSERT_TRUE(map.holder_of_mig(kMig).has_value());
  EXPECT_THAT(*map.holder_of_mig(kMig), IsRef("ml", "small", "main"));
  // A time-sliced MIG device: its first listed holder.
  ASSERT_TRUE(map.holder_of_mig(other_mig).has_value());
  EXPECT_THAT(*map.holder_of_mig(other_mig), IsRef("ml", "shared-1", "a"));
  // The MIG holder is not a holder of the whole GPU A (the map knows no
  // parents: that is the MIG layout's job).
  EXPECT_THAT(map.holders_of_gpu(kGpuA), ElementsAre(IsRef("ml", "whole", "main")));
  EXPECT_FALSE(map.holder_of_mig("MIG-00000000-0000-0000-0000-000000000000").has_value());
}

TEST(PodDeviceMap, GpuIdsUnderAnyResourceNameAndAmdGpusCount) {
  PodDeviceMap map({pod("ml", "renamed", {container("main", "example.com/a100", {kGpuA})}),
                    pod("ml", "amd", {container("main", "amd.com/gpu", {"0000:c1:00.0"})}),
                    pod("net", "router", {container("main", "example.com/nic", {"eth1"})})});
  EXPECT_THAT(map.holders_of_gpu(kGpuA), ElementsAre(IsRef("ml", "renamed", "main")));
  EXPECT_THAT(map.holders_of_gpu("0000:c1:00.0"), ElementsAre(IsRef("ml", "amd", "main")));
  // Devices that are not GPUs are not mapped.
  EXPECT_THAT(map.holders_of_gpu("eth1"), IsEmpty());
}

TEST(PodDeviceMap, PodNamedOnlyWhenTheNameIsUniqueOnTheNode) {
  PodDeviceMap map({pod("team-a", "worker", {container("main", "nvidia.com/gpu", {kGpuA})}),
                    pod("team-b", "worker", {container("main", "nvidia.com/gpu", {kGpuB})}),
                    pod("team-a", "solo", {}),
                    pod("kube-system", "dns", {container("coredns", "", {})})});
  // The same name in two namespaces: a HOSTNAME that cannot tell them apart.
  EXPECT_FALSE(map.pod_named("worker").has_value());
  // A pod without devices is still a pod of the node.
  auto solo = map.pod_named("solo");
  ASSERT_TRUE(solo.has_value());
  EXPECT_THAT(*solo, IsRef("team-a", "solo", ""));
  EXPECT_THAT(map.pod_named("dns").value(), IsRef("kube-system", "dns", ""));
  EXPECT_FALSE(map.pod_named("absent").has_value());
  EXPECT_FALSE(map.pod_named("work").has_value());
}

TEST(PodDeviceMap, UnknownDeviceHasNoHolder) {
  PodDeviceMap map({pod("ml", "trainer", {container("main", "nvidia.com/gpu", {kGpuA})})});
  EXPECT_THAT(map.holders_of_gpu(kGpuB), IsEmpty());
  EXPECT_FALSE(map.holder_of_mig(kMig).has_value());
  EXPECT_THAT(map.holders_of_gpu(""), IsEmpty());

  PodDeviceMap nothing;
  EXPECT_TRUE(nothing.empty());
  EXPECT_THAT(nothing.holders_of_gpu(kGpuA), IsEmpty());
  EXPECT_FALSE(nothing.pod_named("trainer").has_value());
  // Pods without GPUs leave the device map empty.
  EXPECT_TRUE(PodDeviceMap({pod("ml", "cpu-only", {container("main", "cpu", {})})}).empty());
}

}  // namespace
}  // namespace zeus::attribution
