// list_pod_resources against a fake kubelet: a real gRPC server of the
// generated PodResourcesLister service on a temporary Unix socket.
#include "zeus/monitor/attribution/kubernetes/pod_resources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "fakes/kubelet/fake_kubelet.h"
#include "support/temp_dir.h"
#include "zeus/util/error.h"

namespace zeus::attribution {

// Field-by-field equality, for comparing what went over the wire with what
// came back.
bool operator==(const ContainerDevices& a, const ContainerDevices& b) {
  return a.resource_name == b.resource_name && a.device_ids == b.device_ids;
}
bool operator==(const ContainerResources& a, const ContainerResources& b) {
  return a.name == b.name && a.devices == b.devices && a.cpu_ids == b.cpu_ids;
}
bool operator==(const PodResources& a, const PodResources& b) {
  return a.name == b.name && a.namespace_ == b.namespace_ && a.containers == b.containers;
}

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::zeus::testing::FakeKubelet;
using ::zeus::testing::TempDir;
using namespace std::chrono_literals;

const std::string kGpuA = "GPU-8f1a6c2e-1111-2222-3333-444455556666";
const std::string kGpuB = "GPU-0b7d9e41-aaaa-bbbb-cccc-ddddeeeeffff";
const std::string kMig = "MIG-5e2c0d7a-9999-8888-7777-666655554444";

MATCHER_P3(IsRef, ns, pod_name, container_name, "") {
  return arg.namespace_ == ns && arg.pod == pod_name && arg.container == container_name;
}

std::vector<PodResources> exclusive_pods() {
  return {
      {"trainer-0", "ml", {{"main", {{"nvidia.com/gpu", {kGpuA}}}, {2, 3}}, {"logger", {}, {}}}},
      {"trainer-1", "ml", {{"main", {{"nvidia.com/gpu", {kGpuB}}}, {}}}},
      {"coredns", "kube-system", {{"coredns", {}, {}}}}};
}

std::vector<PodResources> time_sliced_pods() {
  return {
      {"infer", "team-b", {{"server", {{"nvidia.com/gpu", {kGpuA + "::0", kGpuA + "::2"}}}, {}}}},
      {"notebook", "team-a", {{"jupyter", {{"nvidia.com/gpu", {kGpuA + "::1"}}}, {}}}}};
}

std::vector<PodResources> mig_pods() {
  return {{"small",
           "ml",
           {{"main",
             {{"nvidia.com/mig-1g.10gb", {kMig}}, {"example.com/nic", {"eth1"}}},
             {0, 1, 2, 3}}}}};
}

class PodResourcesTest : public ::testing::Test {
 protected:
  TempDir dir_{"zeus_kubelet"};
  std::string socket_ = (dir_ / "kubelet.sock").string();
};

TEST_F(PodResourcesTest, ExclusiveGpusRoundTrip) {
  FakeKubelet kubelet(socket_);
  kubelet.set_pods(exclusive_pods());
  auto pods = list_pod_resources(socket_);
  EXPECT_EQ(pods, exclusive_pods());
  PodDeviceMap map(pods);
  EXPECT_THAT(map.holders_of_gpu(kGpuA), ElementsAre(IsRef("ml", "trainer-0", "main")));
  EXPECT_THAT(map.holders_of_gpu(kGpuB), ElementsAre(IsRef("ml", "trainer-1", "main")));
  EXPECT_EQ(kubelet.calls(), 1);
}

TEST_F(PodResourcesTest, TimeSlicedReplicasRoundTrip) {
  FakeKubelet kubelet(socket_);
  kubelet.set_pods(time_sliced_pods());
  auto pods = list_pod_resources(socket_);
  EXPECT_EQ(pods, time_sliced_pods());
  EXPECT_THAT(
      PodDeviceMap(pods).holders_of_gpu(kGpuA),
      ElementsAre(IsRef("team-b", "infer", "server"), IsRef("team-a", "notebook", "jupyter")));
}

TEST_F(PodResourcesTest, MigDevicesRoundTrip) {
  FakeKubelet kubelet(socket_);
  kubelet.set_pods(mig_pods());
  auto pods = list_pod_resources(socket_);
  EXPECT_EQ(pods, mig_pods());
  auto holder = PodDeviceMap(pods).holder_of_mig(kMig);
  ASSERT_TRUE(holder.has_value());
  EXPECT_THAT(*holder, IsRef("ml", "small", "main"));
}

TEST_F(PodResourcesTest, AnEmptyNodeListsNoPods) {
  FakeKubelet kubelet(socket_);
  EXPECT_TRUE(list_pod_resources(socket_).empty());
}

TEST_F(PodResourcesTest, FieldsOfANewerKubeletAreSkipped) {
  FakeKubelet kubelet(socket_);
  kubelet.set_pods(mig_pods());
  kubelet.set_unknown_fields(true);
  EXPECT_EQ(list_pod_resources(socket_), mig_pods());
  kubelet.set_pods(time_sliced_pods());
  EXPECT_EQ(list_pod_resources(socket_), time_sliced_pods());
}

TEST_F(PodResourcesTest, MissingSocketIsNotFoundWithTheMountHint) {
  try {
    list_pod_resources(socket_);
    FAIL() << "no error without a socket";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_THAT(e.what(), HasSubstr("no kubelet PodResources socket at " + socket_));
    EXPECT_THAT(e.what(), HasSubstr("mount /var/lib/kubelet/pod-resources into the pod"));
  }
}

TEST_F(PodResourcesTest, AKubeletThatNeverAnswersTimesOutWithinTheBound) {
  FakeKubelet kubelet(socket_);
  kubelet.set_pods(exclusive_pods());
  kubelet.set_hang(true);
  const auto start = std::chrono::steady_clock::now();
  try {
    list_pod_resources(socket_, 300ms);
    FAIL() << "a hung kubelet answered";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kTimeout) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("within 300 ms"));
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, 250ms);
  EXPECT_LT(elapsed, 3s);
  EXPECT_EQ(kubelet.calls(), 1);  // the call reached the server: not a connection failure
  kubelet.set_hang(false);
  EXPECT_EQ(list_pod_resources(socket_), exclusive_pods());
}

TEST_F(PodResourcesTest, ARestartedKubeletAnswersTheNextCall) {
  FakeKubelet kubelet(socket_);
  kubelet.set_pods(exclusive_pods());
  EXPECT_EQ(list_pod_resources(socket_), exclusive_pods());
  kubelet.stop();
  EXPECT_THROW(
      {
        try {
          list_pod_resources(socket_);
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), ErrorCode::kNotFound) << e.what();
          throw;
        }
      },
      Error);
  kubelet.set_pods(time_sliced_pods());
  kubelet.start();
  EXPECT_EQ(list_pod_resources(socket_), time_sliced_pods());
  // And a second server on the same path (a new kubelet process).
  kubelet.stop();
  FakeKubelet successor(socket_);
  successor.set_pods(mig_pods());
  EXPECT_EQ(list_pod_resources(socket_), mig_pods());
}

TEST_F(PodResourcesTest, ASocketNobodyServesIsAnIoErrorWithGrpcsStatus) {
  // What a crashed kubelet leaves: the path exists, nothing accepts on it.
  std::ofstream(socket_) << "not a socket";
  try {
    list_pod_resources(socket_, 2s);
    FAIL() << "no error from a dead socket";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("kubelet PodResources List at " + socket_ + " failed: "));
    EXPECT_THAT(e.what(), HasSubstr("gRPC status 14"));  // UNAVAILABLE
  }
}

TEST_F(PodResourcesTest, ARelativeSocketPathWorks) {
  FakeKubelet kubelet(socket_);
  kubelet.set_pods(mig_pods());
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir_.path());
  std::vector<PodResources> pods;
  EXPECT_NO_THROW(pods = list_pod_resources("kubelet.sock"));
  std::filesystem::current_path(cwd);
  EXPECT_EQ(pods, mig_pods());
}

}  // namespace
}  // namespace zeus::attribution
