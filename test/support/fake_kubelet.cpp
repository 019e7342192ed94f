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

void FakeKubelet::stop() {
  end_watch();
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server_->Wait();
    server_.reset();
  }
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

void FakeKubelet::end_watch() {
  std::unique_ptr<grpc::ClientContext> context;
  {
    const std::lock_guard lock(mutex_);
    if (stream_context_) stream_context_->TryCancel();
  }
  if (watcher_.joinable()) watcher_.join();
  const std::lock_guard lock(mutex_);
  stream_context_.reset();
}

grpc::Status FakeKubelet::on_register(const v1beta1::RegisterRequest& request) {
  if (request.version() != "v1beta1")
    return {grpc::StatusCode::INVALID_ARGUMENT, "unsupported version " + request.version()};
  if (!is_extended_resource_name(request.resource_name()))
    return {grpc::StatusCode::INVALID_ARGUMENT, "invalid resource name " + request.resource_name()};
  const std::string endpoint = dir_ + "/" + request.endpoint();
  struct stat st {};
  if (request.endpoint().find('/') != std::string::npos || ::lstat(endpoint.c_str(), &st) != 0 ||
      !S_ISSOCK(st.st_mode))
    return {grpc::StatusCode::INVALID_ARGUMENT, "no plugin socket at " + endpoint};
  // As a current kubelet: dial back, ask for the options, open ListAndWatch, all before
  // answering Register.
  auto channel = grpc::CreateChannel("unix://" + endpoint, grpc::InsecureChannelCredentials());
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10)))
    return {grpc::StatusCode::UNAVAILABLE, "cannot dial the plugin back at " + endpoint};
  auto stub = std::shared_ptr<v1beta1::DevicePlugin::Stub>(v1beta1::DevicePlugin::NewStub(channel));
  grpc::ClientContext context;
  v1beta1::DevicePluginOptions options;
  if (auto s = stub->GetDevicePluginOptions(&context, v1beta1::Empty(), &options); !s.ok())
    return s;
  end_watch();
  {
    const std::lock_guard lock(mutex_);
    registrations_.push_back(request);
    options_ = options;
    plugin_ = stub;
    stream_context_ = std::make_unique<grpc::ClientContext>();
  }
  const std::size_t before = lists_received();
  watcher_ = std::thread([this, stub] { watch(stub); });
  std::unique_lock lock(mutex_);
  if (!changed_.wait_for(lock, std::chrono::seconds(10), [&] { return lists_ > before; }))
    return {grpc::StatusCode::DEADLINE_EXCEEDED, "no device list from the plugin"};
  changed_.notify_all();
  return grpc::Status::OK;
}

void FakeKubelet::watch(std::shared_ptr<v1beta1::DevicePlugin::Stub> stub) {
  grpc::ClientContext* context = nullptr;
  {
    const std::lock_guard lock(mutex_);
    context = stream_context_.get();
  }
  auto reader = stub->ListAndWatch(context, v1beta1::Empty());
  v1beta1::ListAndWatchResponse response;
  while (reader->Read(&response)) {
    const std::lock_guard lock(mutex_);
    devices_.assign(response.devices().begin(), response.devices().end());
    ++lists_;
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

v1beta1::DevicePluginOptions FakeKubelet::options() const {
  const std::lock_guard lock(mutex_);
  return options_;
}

Devices FakeKubelet::devices() const {
  const std::lock_guard lock(mutex_);
  return devices_;
}

std::size_t FakeKubelet::lists_received() const {
  const std::lock_guard lock(mutex_);
  return lists_;
}

bool FakeKubelet::wait_for_devices(const std::function<bool(const Devices&)>& wanted,
                                   std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return wanted(devices_); });
}

grpc::Status FakeKubelet::allocate(const std::vector<std::string>& ids,
                                   v1beta1::AllocateResponse& response) {
  std::shared_ptr<v1beta1::DevicePlugin::Stub> plugin;
  {
    const std::lock_guard lock(mutex_);
    plugin = plugin_;
  }
  if (!plugin) return {grpc::StatusCode::FAILED_PRECONDITION, "no plugin registered"};
  v1beta1::AllocateRequest request;
  auto* container = request.add_container_requests();
  for (const auto& id : ids) container->add_devices_ids(id);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return plugin->Allocate(&context, request, &response);
}

grpc::Status FakeKubelet::preferred(const std::vector<std::string>& available,
                                    const std::vector<std::string>& must_include, int size,
                                    v1beta1::PreferredAllocationResponse& response) {
  std::shared_ptr<v1beta1::DevicePlugin::Stub> plugin;
  {
    const std::lock_guard lock(mutex_);
    plugin = plugin_;
  }
  if (!plugin) return {grpc::StatusCode::FAILED_PRECONDITION, "no plugin registered"};
  v1beta1::PreferredAllocationRequest request;
  auto* container = request.add_container_requests();
  for (const auto& id : available) container->add_available_deviceids(id);
  for (const auto& id : must_include) container->add_must_include_deviceids(id);
  container->set_allocation_size(size);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return plugin->GetPreferredAllocation(&context, request, &response);
}

}  // namespace gcr::test
