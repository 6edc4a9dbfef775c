// parse_cgroup_owner: each runtime's, the kubelet's and slurmstepd's shapes,
// and near misses that must give empty fields rather than a wrong id.
#include <gtest/gtest.h>

#include <string>

#include "zeus/monitor/attribution/consumers.h"

namespace zeus::attribution {
namespace {

const std::string kId = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const std::string kUid = "1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d";
const std::string kUidUnderscores = "1b2c3d4e_5f60_4a7b_8c9d_0e1f2a3b4c5d";

struct Expected {
  std::string runtime, container_id, pod_uid, slurm_job;
};

void expect_owner(const std::string& path, const Expected& want) {
  const CgroupOwner owner = parse_cgroup_owner(path);
  EXPECT_EQ(owner.runtime, want.runtime) << path;
  EXPECT_EQ(owner.container_id, want.container_id) << path;
  EXPECT_EQ(owner.pod_uid, want.pod_uid) << path;
  EXPECT_EQ(owner.slurm_job, want.slurm_job) << path;
}

TEST(CgroupOwnerTest, KubernetesSystemdDriver) {
  const std::string pod = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                          kUidUnderscores + ".slice";
  expect_owner(pod + "/cri-containerd-" + kId + ".scope", {"containerd", kId, kUid, ""});
  expect_owner(pod + "/crio-" + kId + ".scope", {"cri-o", kId, kUid, ""});
  expect_owner(pod + "/crio-conmon-" + kId + ".scope", {"cri-o", kId, kUid, ""});
  expect_owner(pod + "/docker-" + kId + ".scope", {"docker", kId, kUid, ""});
  expect_owner(pod, {"", "", kUid, ""});  // the pod's own cgroup: no container yet
  expect_owner("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" +
                   kUidUnderscores + ".slice/cri-containerd-" + kId + ".scope",
               {"containerd", kId, kUid, ""});
  // Guaranteed pods have no QoS level.
  expect_owner(
      "/kubepods.slice/kubepods-pod" + kUidUnderscores + ".slice/cri-containerd-" + kId + ".scope",
      {"containerd", kId, kUid, ""});
  // crun's sub-cgroup inside the scope changes nothing.
  expect_owner(pod + "/crio-" + kId + ".scope/container", {"cri-o", kId, kUid, ""});
}

TEST(CgroupOwnerTest, KubernetesCgroupfsDriver) {
  expect_owner("/kubepods/besteffort/pod" + kUid + "/" + kId, {"", kId, kUid, ""});
  expect_owner("/kubepods/burstable/pod" + kUid + "/" + kId, {"", kId, kUid, ""});
  expect_owner("/kubepods/pod" + kUid + "/" + kId, {"", kId, kUid, ""});  // guaranteed
  expect_owner("/kubepods/burstable/pod" + kUid + "/crio-" + kId, {"cri-o", kId, kUid, ""});
  expect_owner("/kubepods/burstable/pod" + kUid, {"", "", kUid, ""});
}

TEST(CgroupOwnerTest, StaticPodsHaveHashUids) {
  // The kubelet names a static pod by a 32-digit hash of its manifest.
  const std::string hash = "a5fc6b2bd3bfae4c5b5e5d4f4f3e2c1a";
  expect_owner("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + hash + ".slice",
               {"", "", hash, ""});
  expect_owner("/kubepods/burstable/pod" + hash + "/" + kId, {"", kId, hash, ""});
}

TEST(CgroupOwnerTest, DockerAndPodman) {
  expect_owner("/system.slice/docker-" + kId + ".scope", {"docker", kId, "", ""});
  expect_owner("/docker/" + kId, {"docker", kId, "", ""});
  expect_owner("/machine.slice/libpod-" + kId + ".scope", {"podman", kId, "", ""});
  expect_owner("/machine.slice/libpod-conmon-" + kId + ".scope", {"podman", kId, "", ""});
  expect_owner(
      "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + kId + ".scope/container",
      {"podman", kId, "", ""});
}

TEST(CgroupOwnerTest, SlurmJobs) {
  expect_owner("/slurm/uid_1000/job_42/step_0", {"", "", "", "42"});
  expect_owner("/slurm/uid_1000/job_42/step_batch/task_0", {"", "", "", "42"});
  expect_owner("/system.slice/slurmstepd.scope/job_42/step_batch/user/task_0", {"", "", "", "42"});
  expect_owner("/slurm_node07/uid_0/job_4294967294/step_extern", {"", "", "", "4294967294"});
}

TEST(CgroupOwnerTest, UnknownShapesGiveNothing) {
  for (const std::string path :
       {"", "/", "/user.slice/user-1000.slice/session-3.scope", "/system.slice/containerd.service",
        "0::/", "/docker", "/init.scope", "//"}) {
    expect_owner(path, {});
  }
}

TEST(CgroupOwnerTest, NearMissContainerIdsGiveEmptyFields) {
  const std::string short_id = kId.substr(1);  // 63 digits
  std::string upper = kId;
  upper[10] = 'A';
  std::string not_hex = kId;
  not_hex[0] = 'g';
  for (const std::string& id : {short_id, kId + "0", upper, not_hex}) {
    expect_owner("/system.slice/docker-" + id + ".scope", {});
    expect_owner("/docker/" + id, {});
    expect_owner("/machine.slice/libpod-" + id + ".scope", {});
    expect_owner("/kubepods/burstable/pod" + kUid + "/" + id, {"", "", kUid, ""});
  }
  expect_owner("/system.slice/docker-" + kId + ".service", {});
  expect_owner("/system.slice/containerd-" + kId + ".scope", {});
  expect_owner("/system.slice/" + kId, {});  // a bare id outside docker or a pod
}

TEST(CgroupOwnerTest, NearMissPodUidsGiveEmptyFields) {
  const std::string id_scope = "/cri-containerd-" + kId + ".scope";
  std::string upper = kUidUnderscores;
  upper[0] = 'B';
  for (const std::string& uid : {kUidUnderscores.substr(1), kUidUnderscores + "0", upper,
                                 kUid /* dashes where the systemd driver writes '_' */,
                                 std::string("1b2c3d4e5_f60_4a7b_8c9d_0e1f2a3b4c5d")}) {
    expect_owner("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uid +
                     ".slice" + id_scope,
                 {"containerd", kId, "", ""});
  }
  expect_owner("/kubepods.slice/kubepods-guaranteed-pod" + kUidUnderscores + ".slice", {});
  expect_owner("/kubepods/burstable/pod" + kUidUnderscores + "/" + kId, {});
  expect_owner("/kubepods/burstable/pod" + kUid.substr(1) + "/" + kId, {});
  expect_owner("/other/pod" + kUid + "/" + kId, {});  // not under the kubelet's tree
}

TEST(CgroupOwnerTest, NearMissSlurmJobsGiveEmptyFields) {
  for (const std::string path :
       {"/slurm/uid_0/job_/step_0", "/slurm/uid_0/job_4x/step_0", "/slurm/uid_0/job_042/step_0",
        "/slurm/uid_0/job_12345678901/step_0", "/slurm/uid_0/jobs_42", "/user.slice/job_42"}) {
    expect_owner(path, {});
  }
}

TEST(CgroupOwnerTest, OddCharactersNeverMatch) {
  expect_owner("/system.slice/docker-" + kId + ".scope/we ird \"q\" 'x'", {"docker", kId, "", ""});
  expect_owner("/we ird \"docker-" + kId + ".scope\"", {});
  expect_owner("/slurm/uid_0/job_42 /step_0", {});
}

}  // namespace
}  // namespace zeus::attribution
