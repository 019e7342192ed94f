#include "cri_client.h"

#include <chrono>
#include <iostream>
#include <stdexcept>
#include <thread>
#include <utility>

#include <grpcpp/grpcpp.h>

#include "cri/api.grpc.pb.h"

namespace gcr::test {

struct CriClient::Connection {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<runtime::v1::RuntimeService::Stub> runtime;
};

namespace {

// A call's context, with a deadline of `seconds`.
std::unique_ptr<grpc::ClientContext> context(int seconds = 60) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return context;
}

// Throws `CRI <call> failed: <message> (<socket>)` unless `status` is OK.
void check(const CriClient& cri, const grpc::Status& status, const std::string& call) {
  if (!status.ok())
    throw std::runtime_error("CRI " + call + " failed: " + status.error_message() + " (" +
                             cri.socket() + ")");
}

runtime::v1::RuntimeService::Stub& runtime_of(const CriClient& cri) {
  return *cri.connection().runtime;
}

// The ContainerConfig fields the kubelet fills from a device plugin's ContainerAllocateResponse:
// envs, mounts, devices, annotations and (Kubernetes 1.31 on, KEP-4009) CDI_devices.
void add_allocation(runtime::v1::ContainerConfig& config,
                    const v1beta1::ContainerAllocateResponse& answer) {
  for (const auto& [name, value] : answer.envs()) {
    auto* env = config.add_envs();
    env->set_key(name);
    env->set_value(value);
  }
  for (const auto& m : answer.mounts()) {
    auto* mount = config.add_mounts();
    mount->set_container_path(m.container_path());
    mount->set_host_path(m.host_path());
    mount->set_readonly(m.read_only());
  }
  for (const auto& d : answer.devices()) {
    auto* device = config.add_devices();
    device->set_container_path(d.container_path());
    device->set_host_path(d.host_path());
    device->set_permissions(d.permissions());
  }
  for (const auto& [key, value] : answer.annotations())
    (*config.mutable_annotations())[key] = value;
  for (const auto& d : answer.cdi_devices()) config.add_cdi_devices()->set_name(d.name());
}

}  // namespace

CriClient::CriClient(const std::string& socket)
    : socket_(socket), connection_(std::make_unique<Connection>()) {
  connection_->channel =
      grpc::CreateChannel("unix://" + socket, grpc::InsecureChannelCredentials());
  connection_->runtime = runtime::v1::RuntimeService::NewStub(connection_->channel);
}

CriClient::~CriClient() = default;

void CriClient::wait_until_ready() const {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::string why = "no answer";
  while (std::chrono::steady_clock::now() < until) {
    runtime::v1::StatusResponse status;
    const grpc::Status answered = connection_->runtime->Status(context(2).get(), {}, &status);
    if (answered.ok()) {
      why.clear();
      for (const auto& c : status.status().conditions()) {
        if (c.type() == "RuntimeReady" && c.status()) return;
        why += c.type() + "=" + (c.status() ? "true" : "false") + " " + c.reason() + " " +
               c.message() + "; ";
      }
    } else {
      why = answered.error_message();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error("CRI Status failed: the runtime is not ready after 30 s: " + why + " (" +
                           socket_ + ")");
}

std::string CriClient::version() const {
  runtime::v1::VersionResponse version;
  check(*this, connection_->runtime->Version(context().get(), {}, &version), "Version");
  return version.runtime_name() + " " + version.runtime_version();
}

CriPod::CriPod(const CriClient& cri, const std::string& name, const std::string& handler,
               const std::string& log_dir)
    : cri_(cri), config_(std::make_unique<runtime::v1::PodSandboxConfig>()) {
  auto* metadata = config_->mutable_metadata();
  metadata->set_name(name);
  metadata->set_uid(name + "-uid");
  metadata->set_namespace_("default");
  config_->set_log_directory(log_dir);
  config_->mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(
      runtime::v1::NODE);
  runtime::v1::RunPodSandboxRequest request;
  *request.mutable_config() = *config_;
  request.set_runtime_handler(handler);
  runtime::v1::RunPodSandboxResponse response;
  check(cri_, runtime_of(cri_).RunPodSandbox(context().get(), request, &response), "RunPodSandbox");
  id_ = response.pod_sandbox_id();
}

CriPod::~CriPod() {
  runtime::v1::StopPodSandboxRequest stop;
  stop.set_pod_sandbox_id(id_);
  runtime::v1::StopPodSandboxResponse stopped;
  const auto stop_status = runtime_of(cri_).StopPodSandbox(context().get(), stop, &stopped);
  runtime::v1::RemovePodSandboxRequest remove;
  remove.set_pod_sandbox_id(id_);
  runtime::v1::RemovePodSandboxResponse removed;
  const auto remove_status = runtime_of(cri_).RemovePodSandbox(context().get(), remove, &removed);
  // A destructor cannot throw: what failed goes to stderr (the Containerd object kills what is
  // left by pid when the test stops it).
  for (const auto& [call, status] :
       {std::pair{"StopPodSandbox", stop_status}, std::pair{"RemovePodSandbox", remove_status}}) {
    if (!status.ok())
      std::cerr << "CRI " << call << " failed: " << status.error_message() << " (" << cri_.socket()
                << ")\n";
  }
}

std::string CriPod::start_container(const std::string& name, const std::string& image,
                                    const std::vector<std::string>& command,
                                    const v1beta1::ContainerAllocateResponse& answer) {
  runtime::v1::CreateContainerRequest request;
  request.set_pod_sandbox_id(id_);
  *request.mutable_sandbox_config() = *config_;
  auto* config = request.mutable_config();
  config->mutable_metadata()->set_name(name);
  config->mutable_image()->set_image(image);
  for (const auto& word : command) config->add_command(word);
  config->set_log_path(name + ".log");
  add_allocation(*config, answer);
  runtime::v1::CreateContainerResponse created;
  check(cri_, runtime_of(cri_).CreateContainer(context().get(), request, &created),
        "CreateContainer " + name);
  runtime::v1::StartContainerRequest start;
  start.set_container_id(created.container_id());
  runtime::v1::StartContainerResponse started;
  check(cri_, runtime_of(cri_).StartContainer(context().get(), start, &started),
        "StartContainer " + name);
  return created.container_id();
}

ProcessResult CriPod::exec(const std::string& container,
                           const std::vector<std::string>& command) const {
  runtime::v1::ExecSyncRequest request;
  request.set_container_id(container);
  for (const auto& word : command) request.add_cmd(word);
  request.set_timeout(10);
  runtime::v1::ExecSyncResponse response;
  check(cri_, runtime_of(cri_).ExecSync(context(20).get(), request, &response), "ExecSync");
  return {response.exit_code(), response.stdout(), response.stderr()};
}

}  // namespace gcr::test
