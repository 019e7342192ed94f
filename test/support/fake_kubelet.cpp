#include "fake_kubelet.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"

namespace gcr::test {

class FakeKubelet::Registration final : public v1beta1::Registration::Service {
 public:
  explicit Registration(FakeKubelet& kubelet) : kubelet_(kubelet) {}
  grpc::Status Register(grpc::ServerContext*, const v1beta1::RegisterRequest* request,
                        v1beta1::Empty*) override {
    return kubelet_.on_register(*request);
  }

 private:
  FakeKubelet& kubelet_;
};

FakeKubelet::FakeKubelet(std::string dir) : dir_(std::move(dir)) {
  start();
}

FakeKubelet::~FakeKubelet() {
  stop();
}

void FakeKubelet::start() {
  service_ = std::make_unique<Registration>(*this);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix://" + dir_ + "/kubelet.sock", grpc::InsecureServerCredentials());
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_) throw std::runtime_error("the fake kubelet cannot serve " + dir_ + "/kubelet.sock");
}

// The server first: a Register still being answered may add a stream, which end_all then ends.
void FakeKubelet::stop() {
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server_->Wait();
    server_.reset();
  }
  end_all();
  ::unlink((dir_ + "/kubelet.sock").c_str());
}

void FakeKubelet::restart() {
  stop();
  // As the kubelet's device manager does at start: every socket in the directory goes.
  if (DIR* d = ::opendir(dir_.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string path = dir_ + "/" + e->d_name;
      struct stat st {};
      if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) ::unlink(path.c_str());
    }
    ::closedir(d);
  }
  start();
}

void FakeKubelet::end_watch(const std::string& resource) {
  std::shared_ptr<Endpoint> endpoint;
  {
    const std::lock_guard lock(mutex_);
    const auto it = endpoints_.find(resource);
    if (it == endpoints_.end()) return;
    endpoint = std::move(it->second);
    endpoints_.erase(it);
    endpoint->stream->TryCancel();
    changed_.notify_all();
  }
  if (endpoint->watcher.joinable()) endpoint->watcher.join();
}

void FakeKubelet::end_all() {
  std::vector<std::string> resources;
  {
    const std::lock_guard lock(mutex_);
    for (const auto& [resource, endpoint] : endpoints_) resources.push_back(resource);
  }
  for (const auto& resource : resources) end_watch(resource);
}

grpc::Status FakeKubelet::on_register(const v1beta1::RegisterRequest& request) {
  if (request.version() != "v1beta1")
    return {grpc::StatusCode::INVALID_ARGUMENT, "unsupported version " + request.version()};
  if (!is_extended_resource_name(request.resource_name()))
    return {grpc::StatusCode::INVALID_ARGUMENT, "invalid resource name " + request.resource_name()};
  const std::string path = dir_ + "/" + request.endpoint();
  struct stat st {};
  if (request.endpoint().find('/') != std::string::npos || ::lstat(path.c_str(), &st) != 0 ||
      !S_ISSOCK(st.st_mode))
    return {grpc::StatusCode::INVALID_ARGUMENT, "no plugin socket at " + path};
  // As a current kubelet: dial back, ask for the options, open ListAndWatch, all before
  // answering Register. A new registration of a resource replaces the old one.
  auto channel = grpc::CreateChannel("unix://" + path, grpc::InsecureChannelCredentials());
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10)))
    return {grpc::StatusCode::UNAVAILABLE, "cannot dial the plugin back at " + path};
  auto endpoint = std::make_shared<Endpoint>();
  endpoint->stub =
      std::shared_ptr<v1beta1::DevicePlugin::Stub>(v1beta1::DevicePlugin::NewStub(channel));
  grpc::ClientContext context;
  if (auto s =
          endpoint->stub->GetDevicePluginOptions(&context, v1beta1::Empty(), &endpoint->options);
      !s.ok())
    return s;
  end_watch(request.resource_name());
  endpoint->stream = std::make_unique<grpc::ClientContext>();
  std::unique_lock lock(mutex_);
  // Started under the lock, so that a registration replacing this one finds a thread to join.
  endpoints_[request.resource_name()] = endpoint;
  endpoint->watcher = std::thread([this, watched = endpoint.get()] { watch(watched); });
  const auto replaced = [&] {
    const auto it = endpoints_.find(request.resource_name());
    return it == endpoints_.end() || it->second != endpoint;
  };
  if (!changed_.wait_for(lock, std::chrono::seconds(10),
                         [&] { return endpoint->lists > 0 || replaced(); }))
    return {grpc::StatusCode::DEADLINE_EXCEEDED, "no device list from the plugin"};
  if (endpoint->lists == 0) return {grpc::StatusCode::ABORTED, "replaced by a newer registration"};
  registrations_.push_back(request);
  changed_.notify_all();
  return grpc::Status::OK;
}

void FakeKubelet::watch(Endpoint* endpoint) {
  auto reader = endpoint->stub->ListAndWatch(endpoint->stream.get(), v1beta1::Empty());
  v1beta1::ListAndWatchResponse response;
  while (reader->Read(&response)) {
    const std::lock_guard lock(mutex_);
    endpoint->devices.assign(response.devices().begin(), response.devices().end());
    ++endpoint->lists;
    changed_.notify_all();
  }
  (void)reader->Finish();
}

std::vector<v1beta1::RegisterRequest> FakeKubelet::registrations() const {
  const std::lock_guard lock(mutex_);
  return registrations_;
}

bool FakeKubelet::wait_for_registrations(std::size_t count, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return registrations_.size() >= count; });
}

v1beta1::DevicePluginOptions FakeKubelet::options(const std::string& resource) const {
  const std::lock_guard lock(mutex_);
  const auto it = endpoints_.find(resource);
  return it == endpoints_.end() ? v1beta1::DevicePluginOptions() : it->second->options;
}

Devices FakeKubelet::devices(const std::string& resource) const {
  const std::lock_guard lock(mutex_);
  const auto it = endpoints_.find(resource);
  return it == endpoints_.end() ? Devices() : it->second->devices;
}

bool FakeKubelet::wait_for_devices(const std::function<bool(const Devices&)>& wanted,
                                   std::chrono::milliseconds timeout, const std::string& resource) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] {
    const auto it = endpoints_.find(resource);
    return it != endpoints_.end() && wanted(it->second->devices);
  });
}

std::shared_ptr<v1beta1::DevicePlugin::Stub> FakeKubelet::stub_of(
    const std::string& resource) const {
  const std::lock_guard lock(mutex_);
  const auto it = endpoints_.find(resource);
  return it == endpoints_.end() ? nullptr : it->second->stub;
}

grpc::Status FakeKubelet::allocate(const std::vector<std::string>& ids,
                                   v1beta1::AllocateResponse& response,
                                   const std::string& resource) {
  const auto plugin = stub_of(resource);
  if (!plugin)
    return {grpc::StatusCode::FAILED_PRECONDITION, "no plugin registered for " + resource};
  v1beta1::AllocateRequest request;
  auto* container = request.add_container_requests();
  for (const auto& id : ids) container->add_devices_ids(id);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return plugin->Allocate(&context, request, &response);
}

grpc::Status FakeKubelet::preferred(const std::vector<std::string>& available,
                                    const std::vector<std::string>& must_include, int size,
                                    v1beta1::PreferredAllocationResponse& response,
                                    const std::string& resource) {
  const auto plugin = stub_of(resource);
  if (!plugin)
    return {grpc::StatusCode::FAILED_PRECONDITION, "no plugin registered for " + resource};
  v1beta1::PreferredAllocationRequest request;
  auto* container = request.add_container_requests();
  for (const auto& id : available) container->add_available_deviceids(id);
  for (const auto& id : must_include) container->add_must_include_deviceids(id);
  container->set_allocation_size(size);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return plugin->GetPreferredAllocation(&context, request, &response);
}

std::vector<std::string> ctr_arguments(const v1beta1::ContainerAllocateResponse& answer) {
  std::vector<std::string> args;
  for (const auto& [name, value] : answer.envs())
    args.insert(args.end(), {"--env", name + "=" + value});
  for (const auto& m : answer.mounts()) {
    args.insert(args.end(),
                {"--mount", "type=bind,src=" + m.host_path() + ",dst=" + m.container_path() +
                                ",options=rbind:" + (m.read_only() ? "ro" : "rw")});
  }
  for (const auto& [key, value] : answer.annotations())
    args.insert(args.end(), {"--annotation", key + "=" + value});
  std::string cdi;
  for (const auto& d : answer.cdi_devices()) cdi += (cdi.empty() ? "" : ",") + d.name();
  if (!cdi.empty()) args.insert(args.end(), {"--annotation", "cdi.k8s.io/cri-devices=" + cdi});
  return args;
}

std::vector<std::string> ids_of(const Devices& devices) {
  std::vector<std::string> ids;
  for (const auto& d : devices) ids.push_back(d.id());
  return ids;
}

std::string health_of(const Devices& devices, const std::string& id) {
  for (const auto& d : devices) {
    if (d.id() == id) return d.health();
  }
  return "";
}

}  // namespace gcr::test
