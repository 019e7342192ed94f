#include "deviceplugin/server.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include "base/fs.h"

namespace gcr {
namespace {

constexpr auto kShutdownGrace = std::chrono::seconds(2);
constexpr auto kRegisterDeadline = std::chrono::seconds(15);

}  // namespace

Status PluginServer::start(const std::string& socket_path) {
  stop();
  if (::unlink(socket_path.c_str()) != 0 && errno != ENOENT)
    return Error{"cannot remove the old socket: " + errno_text(errno) + " (" + socket_path + ")"};
  service_ = std::make_unique<PluginService>(state_, config_, logger_);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix://" + socket_path, grpc::InsecureServerCredentials());
  builder.RegisterService(service_.get());
  // The kubelet holds one stream and makes one call at a time: a few threads are plenty.
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 2);
  server_ = builder.BuildAndStart();
  if (!server_) return Error{"cannot serve the plugin's socket (" + socket_path + ")"};
  socket_path_ = socket_path;
  return {};
}

void PluginServer::stop() {
  if (!server_) return;
  service_->stop();
  server_->Shutdown(std::chrono::system_clock::now() + kShutdownGrace);
  server_->Wait();
  server_.reset();
  service_.reset();
  ::unlink(socket_path_.c_str());
}

Registration::Registration(const std::string& kubelet_socket, const std::string& endpoint,
                           const std::string& resource_name, int done_fd) {
  v1beta1::RegisterRequest request;
  request.set_version("v1beta1");
  request.set_endpoint(endpoint);
  request.set_resource_name(resource_name);
  *request.mutable_options() = plugin_options();
  context_.set_deadline(std::chrono::system_clock::now() + kRegisterDeadline);
  thread_ = std::thread(&Registration::call, this, kubelet_socket, std::move(request), done_fd);
}

Registration::~Registration() {
  context_.TryCancel();
  thread_.join();
}

void Registration::call(const std::string& kubelet_socket, const v1beta1::RegisterRequest& request,
                        int done_fd) {
  auto channel =
      grpc::CreateChannel("unix://" + kubelet_socket, grpc::InsecureChannelCredentials());
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::Empty reply;
  const grpc::Status status = stub->Register(&context_, request, &reply);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (status.ok())
      result_ = Status{};
    else
      result_ = Error{"registration refused or failed: " + status.error_message() + " (" +
                      kubelet_socket + ")"};
  }
  const std::uint64_t one = 1;
  (void)!::write(done_fd, &one, sizeof one);
}

std::optional<Status> Registration::result() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return result_;
}

}  // namespace gcr
