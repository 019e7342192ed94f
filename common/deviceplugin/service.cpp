#include "deviceplugin/service.h"

#include <utility>

#include "base/text.h"
#include "deviceplugin/allocate.h"
#include "deviceplugin/imex.h"
#include "deviceplugin/preferred.h"

namespace gcr {
namespace {

constexpr auto kStreamCheck = std::chrono::milliseconds(500);
constexpr auto kAskedFor = std::chrono::seconds(5);

void fill(const ContainerAllocation& from, v1beta1::ContainerAllocateResponse& to) {
  for (const auto& [name, value] : from.envs) (*to.mutable_envs())[name] = value;
  for (const auto& m : from.mounts) {
    auto* mount = to.add_mounts();
    mount->set_host_path(m.host);
    mount->set_container_path(m.container);
    mount->set_read_only(m.read_only);
  }
  for (const auto& [key, value] : from.annotations) (*to.mutable_annotations())[key] = value;
  for (const auto& name : from.cdi_devices) to.add_cdi_devices()->set_name(name);
}

std::vector<std::string> strings(const google::protobuf::RepeatedPtrField<std::string>& field) {
  return std::vector<std::string>(field.begin(), field.end());
}

}  // namespace

v1beta1::DevicePluginOptions plugin_options() {
  v1beta1::DevicePluginOptions options;
  options.set_pre_start_required(false);
  options.set_get_preferred_allocation_available(true);
  return options;
}

v1beta1::ListAndWatchResponse device_list_message(const std::vector<PluginDevice>& devices) {
  v1beta1::ListAndWatchResponse message;
  for (const auto& d : devices) {
    auto* device = message.add_devices();
    device->set_id(d.id);
    device->set_health(d.healthy ? "Healthy" : "Unhealthy");
    if (d.numa) device->mutable_topology()->add_nodes()->set_id(*d.numa);
  }
  return message;
}

void PluginService::stop() {
  stopping_ = true;
  state_.wake();
}

grpc::Status PluginService::GetDevicePluginOptions(grpc::ServerContext*, const v1beta1::Empty*,
                                                   v1beta1::DevicePluginOptions* response) {
  *response = plugin_options();
  return grpc::Status::OK;
}

grpc::Status PluginService::ListAndWatch(
    grpc::ServerContext* context, const v1beta1::Empty*,
    grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) {
  auto snapshot = state_.snapshot();
  if (!writer->Write(device_list_message(snapshot.devices))) return grpc::Status::OK;
  logger_.info("the kubelet is watching: sent " + std::to_string(snapshot.devices.size()) +
               " devices");
  std::uint64_t seen = snapshot.generation;
  while (!stopping_ && !context->IsCancelled()) {
    state_.wait_for_change(seen, stopping_, kStreamCheck);
    snapshot = state_.snapshot();
    if (snapshot.generation == seen || stopping_) continue;
    seen = snapshot.generation;
    if (!writer->Write(device_list_message(snapshot.devices))) break;
  }
  return grpc::Status::OK;
}

grpc::Status PluginService::GetPreferredAllocation(
    grpc::ServerContext*, const v1beta1::PreferredAllocationRequest* request,
    v1beta1::PreferredAllocationResponse* response) {
  const auto snapshot = state_.snapshot();
  for (const auto& container : request->container_requests()) {
    const PreferredRequest wanted{strings(container.available_deviceids()),
                                  strings(container.must_include_deviceids()),
                                  container.allocation_size()};
    if (config_.mps()) remember_free(wanted.available);
    auto* answer = response->add_container_responses();
    const auto preferred =
        preferred_allocation(wanted, snapshot.devices, *snapshot.topology, config_);
    for (const auto& id : preferred) answer->add_deviceids(id);
    logger_.info("preferred " + (preferred.empty() ? "nothing" : join(preferred, ",")) + " for " +
                 std::to_string(container.allocation_size()) + " of " +
                 std::to_string(container.available_deviceids_size()) + " available");
  }
  return grpc::Status::OK;
}

grpc::Status PluginService::Allocate(grpc::ServerContext*, const v1beta1::AllocateRequest* request,
                                     v1beta1::AllocateResponse* response) {
  const auto snapshot = state_.snapshot();
  // Taken even when refused: what GetPreferredAllocation saw free was this request's.
  auto free_when_asked = take_free_when_asked();
  auto channels = imex_channels_to_give(config_);
  if (!channels) {
    logger_.warning("Allocate refused: " + channels.error().message);
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, channels.error().message);
  }
  const AllocationExtras extras{std::move(free_when_asked), std::move(*channels)};
  for (const auto& container : request->container_requests()) {
    const auto ids = strings(container.devices_ids());
    auto allocation = allocate_container(ids, snapshot.devices, config_, extras);
    if (!allocation) {
      logger_.warning("Allocate refused: " + allocation.error().message);
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, allocation.error().message);
    }
    fill(*allocation, *response->add_container_responses());
    logger_.info("allocated " + join(ids, ",") +
                 (extras.imex_channels.empty() || ids.empty()
                      ? ""
                      : " and IMEX channel " + imex_channel_list(extras.imex_channels)));
  }
  return grpc::Status::OK;
}

void PluginService::remember_free(std::vector<std::string> available) {
  const std::lock_guard lock(asked_mutex_);
  free_when_asked_ = std::move(available);
  asked_at_ = std::chrono::steady_clock::now();
}

std::vector<std::string> PluginService::take_free_when_asked() {
  const std::lock_guard lock(asked_mutex_);
  std::vector<std::string> taken;
  if (std::chrono::steady_clock::now() - asked_at_ < kAskedFor) taken = std::move(free_when_asked_);
  free_when_asked_.clear();
  return taken;
}

grpc::Status PluginService::PreStartContainer(grpc::ServerContext*,
                                              const v1beta1::PreStartContainerRequest*,
                                              v1beta1::PreStartContainerResponse*) {
  return grpc::Status::OK;
}

}  // namespace gcr
