#include "fakes/kubelet/fake_kubelet.h"

#include <google/protobuf/unknown_field_set.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <system_error>

#include "monitor/attribution/kubernetes/kubelet_pod_resources.grpc.pb.h"

namespace zeus::testing {
namespace {

google::protobuf::UnknownFieldSet& unknown_fields(google::protobuf::Message& message) {
  return *message.GetReflection()->MutableUnknownFields(&message);
}

// What a newer kubelet adds: ContainerResources.memory (4, a message of its
// own) and dynamic_resources (5), and fields no version has yet at every
// level, of each wire type.
void add_fields_of_a_newer_kubelet(v1::ListPodResourcesResponse& answer) {
  unknown_fields(answer).AddVarint(2, 7);
  for (auto& pod : *answer.mutable_pod_resources()) {
    unknown_fields(pod).AddLengthDelimited(15, "a field of the future");
    for (auto& container : *pod.mutable_containers()) {
      google::protobuf::UnknownFieldSet memory;
      memory.AddLengthDelimited(1, "memory");
      memory.AddVarint(2, 1ULL << 33);
      std::string memory_bytes;
      memory.SerializeToString(&memory_bytes);
      unknown_fields(container).AddLengthDelimited(4, memory_bytes);
      unknown_fields(container).AddLengthDelimited(5, std::string("\x0a\x03gpu", 5));
      for (auto& devices : *container.mutable_devices()) {
        unknown_fields(devices).AddFixed32(9, 0xfeedu);
        unknown_fields(devices).AddFixed64(10, 0xdeadbeefULL);
      }
    }
  }
}

}  // namespace

class FakeKubelet::Service final : public v1::PodResourcesLister::Service {
 public:
  grpc::Status List(grpc::ServerContext* context, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* answer) override {
    std::unique_lock lock(mutex_);
    ++calls_;
    // A kubelet that accepted the call and never answers: wait for the
    // client to give up (or the test to let go), polling cancellation, which
    // gRPC does not signal through this condition variable.
    while (hang_ && !stopping_ && !context->IsCancelled()) {
      changed_.wait_for(lock, std::chrono::milliseconds(5));
    }
    if (stopping_ || context->IsCancelled()) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the fake kubelet is stopping");
    }
    for (const auto& pod : pods_) {
      auto* wire_pod = answer->add_pod_resources();
      wire_pod->set_name(pod.name);
      wire_pod->set_namespace_(pod.namespace_);
      for (const auto& container : pod.containers) {
        auto* wire_container = wire_pod->add_containers();
        wire_container->set_name(container.name);
        for (const auto& devices : container.devices) {
          auto* wire_devices = wire_container->add_devices();
          wire_devices->set_resource_name(devices.resource_name);
          for (const auto& id : devices.device_ids) wire_devices->add_device_ids(id);
        }
        for (long long cpu : container.cpu_ids) wire_container->add_cpu_ids(cpu);
      }
    }
    if (unknown_fields_) add_fields_of_a_newer_kubelet(*answer);
    return grpc::Status::OK;
  }

  void set_pods(std::vector<attribution::PodResources> pods) {
    std::lock_guard lock(mutex_);
    pods_ = std::move(pods);
  }
  void set_unknown_fields(bool on) {
    std::lock_guard lock(mutex_);
    unknown_fields_ = on;
  }
  void set_hang(bool on) {
    std::lock_guard lock(mutex_);
    hang_ = on;
    changed_.notify_all();
  }
  void set_stopping(bool on) {
    std::lock_guard lock(mutex_);
    stopping_ = on;
    changed_.notify_all();
  }
  int calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<attribution::PodResources> pods_;
  bool unknown_fields_ = false;
  bool hang_ = false;
  bool stopping_ = false;
  int calls_ = 0;
};

struct FakeKubelet::Server {
  std::unique_ptr<grpc::Server> server;
};

FakeKubelet::FakeKubelet(std::string socket_path)
    : socket_path_(std::move(socket_path)), service_(std::make_unique<Service>()) {
  start();
}

FakeKubelet::~FakeKubelet() { stop(); }

void FakeKubelet::set_pods(std::vector<attribution::PodResources> pods) {
  service_->set_pods(std::move(pods));
}
void FakeKubelet::set_unknown_fields(bool on) { service_->set_unknown_fields(on); }
void FakeKubelet::set_hang(bool on) { service_->set_hang(on); }
int FakeKubelet::calls() const { return service_->calls(); }

void FakeKubelet::start() {
  if (server_) return;
  service_->set_stopping(false);
  // A socket file left by a kubelet that died holds the path.
  std::error_code ec;
  std::filesystem::remove(socket_path_, ec);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix://" + std::filesystem::absolute(socket_path_).string(),
                           grpc::InsecureServerCredentials());
  builder.RegisterService(service_.get());
  auto server = builder.BuildAndStart();
  if (!server) throw std::runtime_error("fake kubelet: cannot serve on " + socket_path_);
  server_ = std::make_unique<Server>(Server{std::move(server)});
}

void FakeKubelet::stop() {
  if (!server_) return;
  service_->set_stopping(true);
  server_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server_->server->Wait();
  server_.reset();
  std::error_code ec;
  std::filesystem::remove(socket_path_, ec);
}

}  // namespace zeus::testing
