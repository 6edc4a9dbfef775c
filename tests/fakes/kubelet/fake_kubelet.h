// A fake kubelet: a real gRPC server of the PodResources API
// (v1.PodResourcesLister/List, the service generated from our .proto) on a
// Unix socket, answering with the pods a test sets. Built as the static
// library fake_kubelet only when the kubernetes part is (ZEUS_WITH_KUBERNETES);
// include as "fakes/kubelet/fake_kubelet.h". Its header names no gRPC type, so
// a test that links fake_kubelet needs no gRPC headers of its own.
//
// API (namespace zeus::testing):
//   FakeKubelet kubelet(socket_path);   // serving on socket_path until destroyed
//   kubelet.set_pods({...});            // what List answers from now on
//   kubelet.set_unknown_fields(true);   // answers carry fields our .proto does not
//                                       //   declare (a newer kubelet's)
//   kubelet.set_hang(true);             // List accepts and never answers (until
//                                       //   set_hang(false), stop or the client's deadline)
//   kubelet.stop(); kubelet.start();    // the kubelet restarting on the same path
//   kubelet.calls()                     // List calls received so far
//
// Thread-safety: the setters may be called while clients call List.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "zeus/monitor/attribution/kubernetes.h"

namespace zeus::testing {

class FakeKubelet {
 public:
  // Starts serving; throws std::runtime_error when the socket cannot be bound.
  explicit FakeKubelet(std::string socket_path);
  ~FakeKubelet();
  FakeKubelet(const FakeKubelet&) = delete;
  FakeKubelet& operator=(const FakeKubelet&) = delete;

  void set_pods(std::vector<attribution::PodResources> pods);
  void set_unknown_fields(bool on);
  void set_hang(bool on);
  // Stops serving (releasing hung calls) and removes the socket, as a
  // kubelet that exits does; start() serves again on the same path.
  void stop();
  void start();
  int calls() const;
  const std::string& socket_path() const { return socket_path_; }

 private:
  class Service;
  std::string socket_path_;
  std::unique_ptr<Service> service_;
  struct Server;
  std::unique_ptr<Server> server_;
};

}  // namespace zeus::testing
