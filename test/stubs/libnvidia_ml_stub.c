/* A stand-in for NVML with what gpu-ctk info and gpu-device-plugin ask. Answers follow the
 * simulated host's convention, with the figures NVML gives on real cards: GPUs on PCI buses
 * below 0x80 are A100-SXM4-40GB (compute capability 8.0, 40960 MiB, MIG), the others
 * V100-SXM2-16GB (7.0, 16160 MiB, no MIG); the GPU on bus 0xaf is
 * a GeForce, every other one a Tesla; the driver supports CUDA GCR_STUB_CUDA_VERSION. The GPU on
 * bus 0x3b is in MIG mode with two MIG devices (1g.5gb): GPU instance 1 / compute instance 0
 * and GPU instance 2 / compute instance 0.
 *
 * A description file named by $GCR_STUB_NVML changes that, one fact per line (buses in hex):
 *   nvlink A B N              N NVLinks between the GPUs on buses A and B
 *   nvswitch A N              N of A's NVLinks go to NVSwitches
 *   pcie A B LEVEL            NVML's common-ancestor level of A and B (0, 10, 20, 30, 40, 50);
 *                             unlisted pairs are 50 (across the system)
 *   mig A GI CI SLICES MEMMB [SMS CE DEC ENC JPEG OFA]
 *                             a MIG device on A (its index is its order among A's lines), with
 *                             its SMs and engines (else an A100's for its slices: 1g.5gb has 14
 *                             SMs and one copy engine); any mig line replaces the built-in ones
 *   migmode A 0|1             A's MIG mode, whatever MIG devices are listed for it (1 with none:
 *                             in MIG mode, no instance made yet)
 *   cislices A GI N           the compute instance of GPU instance GI on A has N slices (fewer
 *                             than its GPU instance's: NVIDIA's 1c.3g.20gb); else all of them
 *   giprofile A GI P          the GPU instance GI on A has NVML's instance profile P
 *                             (NVML_GPU_INSTANCE_PROFILE_*: 7 is 1_SLICE_REV1, a "+me" profile);
 *                             else the plain profile of its slices
 *   memory A MB               A's memory as NVML reports it (81559 for an H100 80GB HBM3,
 *                             143771 for an H200)
 *   noevents A                A's events cannot be watched (NOT_SUPPORTED, as on some boards)
 *   computemode A N           A's compute mode (NVML_COMPUTEMODE_*: 3 is Exclusive_Process);
 *                             read again whenever it is asked
 *   fabric A UUID CLIQUE [STATE [STATUS]]
 *                             A's GPU fabric info (a GB200 NVL72's multi-node NVLink): cluster
 *                             UUID (32 hex digits, dashes allowed), clique ID, registration
 *                             state (NVML_GPU_FABRIC_STATE_*, 3 = completed by default) and
 *                             status (0); a GPU without a line has none (NOT_SUPPORTED)
 * The file is read again whenever MIG devices are counted (a MIG reconfiguration) or a GPU's
 * fabric asked (a registration completing), and
 * $GCR_STUB_NVML_EVENTS names a file a test appends to while NVML runs:
 *   xid A N [GI CI]           a critical-Xid event N on A (its MIG instance with GI CI)
 *   lost A / back A           A stops answering (being reset) / answers again */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_MIGS 8

typedef struct gcr_stub_device {
  unsigned bus;
  int mig_index; /* -1 for a GPU, else the MIG device's index on its GPU */
  unsigned gi, ci, slices, compute_slices;
  unsigned long long memory_mb;
  unsigned sms, copy_engines, decoders, encoders, jpegs, ofas;
  unsigned profile; /* NVML_GPU_INSTANCE_PROFILE_* of its GPU instance */
} gcr_stub_device;

typedef struct {
  unsigned long long event_type;
  unsigned long long data;
  unsigned gi, ci;
} gcr_stub_event;

static gcr_stub_device devices[256];
static gcr_stub_device migs[256][MAX_MIGS];
static int mig_count[256];
static int mig_mode[256]; /* -1: on when it has MIG devices */
static int nvlinks[256][256];
static int switch_links[256];
static int pcie[256][256];
static int lost[256];
static unsigned long long own_memory_mb[256]; /* 0: the convention's */
static int no_events[256];
static int compute_mode[256];

typedef struct {
  unsigned char cluster_uuid[16];
  int status;
  unsigned clique_id;
  unsigned char state;
} gcr_stub_fabric; /* nvmlGpuFabricInfo_t */
static gcr_stub_fabric fabric[256];
static int has_fabric[256];

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* "fabric A UUID CLIQUE [STATE [STATUS]]" into fabric[A]; 0 when the line is not one. */
static int read_fabric(const char* line) {
  unsigned a = 0, clique = 0, state = 3;
  int status = 0;
  char uuid[64] = "";
  if (sscanf(line, "fabric %x %63s %u %u %d", &a, uuid, &clique, &state, &status) < 3 || a > 255)
    return 0;
  memset(&fabric[a], 0, sizeof fabric[a]);
  for (int i = 0, n = 0; uuid[i] && n < 32; ++i) {
    const int digit = hex_digit(uuid[i]);
    if (digit < 0) continue;
    fabric[a].cluster_uuid[n / 2] |= (unsigned char)(n % 2 ? digit : digit << 4);
    ++n;
  }
  fabric[a].clique_id = clique;
  fabric[a].state = (unsigned char)state;
  fabric[a].status = status;
  has_fabric[a] = 1;
  return 1;
}
static int initialized;
static long events_read;

/* An A100's MIG profiles by GPU slices (nvidia-smi mig -lgip): SMs, copy engines, decoders,
 * encoders, JPEG decoders, optical-flow accelerators. */
static const unsigned a100_profiles[8][6] = {
    {0, 0, 0, 0, 0, 0},  {14, 1, 0, 0, 0, 0}, {28, 2, 1, 0, 0, 0}, {42, 3, 2, 0, 0, 0},
    {56, 4, 2, 0, 0, 0}, {0, 0, 0, 0, 0, 0},  {0, 0, 0, 0, 0, 0},  {98, 7, 5, 0, 1, 1}};

static void add_mig(unsigned bus, unsigned gi, unsigned ci, unsigned slices, unsigned long long mb,
                    const unsigned* engines) {
  if (bus > 255 || mig_count[bus] >= MAX_MIGS) return;
  gcr_stub_device* m = &migs[bus][mig_count[bus]];
  if (!engines) engines = a100_profiles[slices < 8 ? slices : 0];
  m->bus = bus;
  m->mig_index = mig_count[bus]++;
  m->gi = gi;
  m->ci = ci;
  m->slices = slices;
  m->compute_slices = slices;
  m->memory_mb = mb;
  m->sms = engines[0];
  m->copy_engines = engines[1];
  m->decoders = engines[2];
  m->encoders = engines[3];
  m->jpegs = engines[4];
  m->ofas = engines[5];
  m->profile = slices == 7 ? 4 : slices == 8 ? 5 : slices == 6 ? 6 : slices > 0 ? slices - 1 : 0;
}

static void set_profile(unsigned bus, unsigned gi, unsigned profile) {
  for (int i = 0; bus < 256 && i < mig_count[bus]; ++i)
    if (migs[bus][i].gi == gi) migs[bus][i].profile = profile;
}

static void set_compute_slices(unsigned bus, unsigned gi, unsigned slices) {
  for (int i = 0; bus < 256 && i < mig_count[bus]; ++i)
    if (migs[bus][i].gi == gi) migs[bus][i].compute_slices = slices;
}

static int in_mig_mode(unsigned bus) {
  return mig_mode[bus] < 0 ? mig_count[bus] > 0 : mig_mode[bus];
}

static void load_description(void) {
  const char* path = getenv("GCR_STUB_NVML");
  FILE* f = path ? fopen(path, "r") : NULL;
  int own_migs = 0;
  char line[256];
  memset(mig_count, 0, sizeof mig_count);
  memset(nvlinks, 0, sizeof nvlinks);
  memset(switch_links, 0, sizeof switch_links);
  memset(own_memory_mb, 0, sizeof own_memory_mb);
  memset(no_events, 0, sizeof no_events);
  memset(compute_mode, 0, sizeof compute_mode);
  memset(has_fabric, 0, sizeof has_fabric);
  memset(mig_mode, -1, sizeof mig_mode);
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; ++b) pcie[a][b] = 50;
  if (!f) {
    add_mig(0x3b, 1, 0, 1, 4864, NULL);
    add_mig(0x3b, 2, 0, 1, 4864, NULL);
    return;
  }
  while (fgets(line, sizeof line, f)) {
    unsigned a = 0, b = 0, n = 0, gi = 0, ci = 0, slices = 0;
    unsigned long long mb = 0;
    unsigned engines[6] = {0};
    if (sscanf(line, "nvlink %x %x %u", &a, &b, &n) == 3 && a < 256 && b < 256) {
      nvlinks[a][b] = nvlinks[b][a] = (int)n;
    } else if (sscanf(line, "nvswitch %x %u", &a, &n) == 2 && a < 256) {
      switch_links[a] = (int)n;
    } else if (sscanf(line, "pcie %x %x %u", &a, &b, &n) == 3 && a < 256 && b < 256) {
      pcie[a][b] = pcie[b][a] = (int)n;
    } else if (sscanf(line, "noevents %x", &a) == 1 && a < 256) {
      no_events[a] = 1;
    } else if (sscanf(line, "computemode %x %u", &a, &n) == 2 && a < 256) {
      compute_mode[a] = (int)n;
    } else if (read_fabric(line)) {
      continue;
    } else if (sscanf(line, "memory %x %llu", &a, &mb) == 2 && a < 256) {
      own_memory_mb[a] = mb;
    } else if (sscanf(line, "giprofile %x %u %u", &a, &gi, &n) == 3) {
      set_profile(a, gi, n);
    } else if (sscanf(line, "cislices %x %u %u", &a, &gi, &n) == 3) {
      set_compute_slices(a, gi, n);
    } else if (sscanf(line, "migmode %x %u", &a, &n) == 2 && a < 256) {
      mig_mode[a] = n != 0;
    } else if (sscanf(line, "mig %x %u %u %u %llu", &a, &gi, &ci, &slices, &mb) == 5) {
      const int given = sscanf(line, "mig %*x %*u %*u %*u %*u %u %u %u %u %u %u", &engines[0],
                               &engines[1], &engines[2], &engines[3], &engines[4], &engines[5]);
      own_migs = 1;
      add_mig(a, gi, ci, slices, mb, given == 6 ? engines : NULL);
    }
  }
  fclose(f);
  if (!own_migs) {
    add_mig(0x3b, 1, 0, 1, 4864, NULL);
    add_mig(0x3b, 2, 0, 1, 4864, NULL);
  }
}

/* The next event in $GCR_STUB_NVML_EVENTS past what was read; lost/back lines apply on the way. */
/* The error every event wait returns from a "waitfail <code>" line to a "waitok" line. */
static int wait_error;
/* The GPUs whose events are registered: an Xid of another is not delivered. */
static int registered[256];

static int next_event(gcr_stub_event* out, unsigned* bus) {
  const char* path = getenv("GCR_STUB_NVML_EVENTS");
  FILE* f = path ? fopen(path, "r") : NULL;
  char line[256];
  int found = 0;
  if (!f) return 0;
  if (fseek(f, events_read, SEEK_SET) != 0) {
    fclose(f);
    return 0;
  }
  while (!found && fgets(line, sizeof line, f)) {
    unsigned a = 0, xid = 0, gi = 0xffffffffu, ci = 0xffffffffu;
    if (line[strlen(line) - 1] != '\n') break; /* a line still being written */
    events_read = ftell(f);
    if (sscanf(line, "waitfail %u", &a) == 1) {
      wait_error = (int)a;
    } else if (strncmp(line, "waitok", 6) == 0) {
      wait_error = 0;
    } else if (sscanf(line, "lost %x", &a) == 1 && a < 256) {
      lost[a] = 1;
      registered[a] = 0; /* a reset drops the GPU's event registration, as the driver's */
    } else if (sscanf(line, "back %x", &a) == 1 && a < 256) {
      lost[a] = 0;
    } else if (sscanf(line, "xid %x %u %u %u", &a, &xid, &gi, &ci) >= 2 && a < 256 &&
               registered[a]) {
      out->event_type = 0x8; /* nvmlEventTypeXidCriticalError */
      out->data = xid;
      out->gi = gi;
      out->ci = ci;
      *bus = a;
      found = 1;
    }
  }
  fclose(f);
  return found;
}

/* The real library opens the driver's control node in the caller's /dev: with
 * GCR_STUB_NVML_CONTROL naming it (/dev/nvidiactl), a caller without it gets what NVML answers. */
int nvmlInit_v2(void) {
  const char* control = getenv("GCR_STUB_NVML_CONTROL");
  if (control && access(control, F_OK) != 0) return 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
  if (!initialized) load_description();
  initialized = 1;
  return 0;
}

int nvmlShutdown(void) {
  return 0;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, gcr_stub_device** device) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (!initialized) return 1; /* NVML_ERROR_UNINITIALIZED */
  if (sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4 || bus > 255) return 2;
  if (lost[bus]) return 15; /* NVML_ERROR_GPU_IS_LOST */
  devices[bus].bus = bus;
  devices[bus].mig_index = -1;
  *device = &devices[bus];
  return 0;
}

int nvmlDeviceGetCudaComputeCapability(gcr_stub_device* device, int* major, int* minor) {
  *major = device->bus < 0x80 ? 8 : 7;
  *minor = 0;
  return 0;
}

int nvmlDeviceGetBrand(gcr_stub_device* device, int* brand) {
  *brand = device->bus == 0xaf ? 5 /* GeForce */ : 2 /* Tesla */;
  return 0;
}

typedef struct {
  unsigned long long total, free, used;
} gcr_stub_memory;

int nvmlDeviceGetMemoryInfo(gcr_stub_device* device, gcr_stub_memory* memory) {
  const unsigned long long mb = own_memory_mb[device->bus & 0xff];
  memory->total = (mb ? mb : device->bus < 0x80 ? 40960ull : 16160ull) * 1024 * 1024;
  memory->used = 0;
  memory->free = memory->total;
  return 0;
}

int nvmlDeviceGetComputeMode(gcr_stub_device* device, int* mode) {
  if (lost[device->bus]) return 15; /* NVML_ERROR_GPU_IS_LOST */
  load_description();               /* read again: an administrator changes it */
  *mode = compute_mode[device->bus];
  return 0;
}

int nvmlDeviceGetMigMode(gcr_stub_device* device, unsigned* current, unsigned* pending) {
  if (device->bus >= 0x80) return 3; /* NVML_ERROR_NOT_SUPPORTED */
  if (lost[device->bus]) return 15;  /* NVML_ERROR_GPU_IS_LOST */
  load_description();
  *current = *pending = (unsigned)in_mig_mode(device->bus);
  return 0;
}

int nvmlDeviceGetGpuFabricInfo(gcr_stub_device* device, gcr_stub_fabric* info) {
  if (lost[device->bus]) return 15; /* NVML_ERROR_GPU_IS_LOST */
  load_description();               /* read again: a registration completes while NVML runs */
  if (device->mig_index >= 0 || !has_fabric[device->bus]) return 3; /* NOT_SUPPORTED */
  *info = fabric[device->bus];
  return 0;
}

int nvmlSystemGetCudaDriverVersion_v2(int* version) {
  *version = GCR_STUB_CUDA_VERSION;
  return 0;
}

int nvmlDeviceGetMaxMigDeviceCount(gcr_stub_device* device, unsigned* count) {
  load_description();
  *count = in_mig_mode(device->bus) ? 7 : 0;
  return 0;
}

int nvmlDeviceGetMigDeviceHandleByIndex(gcr_stub_device* device, unsigned index,
                                        gcr_stub_device** mig) {
  if (!in_mig_mode(device->bus) || index >= (unsigned)mig_count[device->bus])
    return 6; /* NVML_ERROR_NOT_FOUND */
  *mig = &migs[device->bus][index];
  return 0;
}

int nvmlDeviceGetUUID(gcr_stub_device* device, char* uuid, unsigned length) {
  if (lost[device->bus]) return 15;
  if (device->mig_index < 0) return 3; /* NVML_ERROR_NOT_SUPPORTED for this stub */
  snprintf(uuid, length, "MIG-5eed%04x-0000-4000-8000-00000000000%d", device->bus,
           device->mig_index);
  return 0;
}

int nvmlDeviceGetGpuInstanceId(gcr_stub_device* device, unsigned* id) {
  *id = device->gi;
  return 0;
}

int nvmlDeviceGetComputeInstanceId(gcr_stub_device* device, unsigned* id) {
  *id = device->ci;
  return 0;
}

typedef struct {
  unsigned multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount, sharedEncoderCount;
  unsigned sharedJpegCount, sharedOfaCount, gpuInstanceSliceCount, computeInstanceSliceCount;
  unsigned long long memorySizeMB;
} gcr_stub_attributes;

int nvmlDeviceGetAttributes_v2(gcr_stub_device* device, gcr_stub_attributes* attributes) {
  memset(attributes, 0, sizeof *attributes);
  if (device->mig_index < 0) return 3;
  attributes->multiprocessorCount = device->sms;
  attributes->sharedCopyEngineCount = device->copy_engines;
  attributes->sharedDecoderCount = device->decoders;
  attributes->sharedEncoderCount = device->encoders;
  attributes->sharedJpegCount = device->jpegs;
  attributes->sharedOfaCount = device->ofas;
  attributes->gpuInstanceSliceCount = device->slices;
  attributes->computeInstanceSliceCount = device->compute_slices;
  attributes->memorySizeMB = device->memory_mb;
  return 0;
}

int nvmlDeviceGetNvLinkState(gcr_stub_device* device, unsigned link, int* active) {
  int total = switch_links[device->bus];
  for (int b = 0; b < 256; ++b) total += nvlinks[device->bus][b];
  if (link >= 18) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
  *active = (int)link < total ? 1 : 0;
  return 0;
}

/* The remote end of a link: links are numbered GPU peers first (by bus), then switches. */
static int remote_of(unsigned bus, unsigned link, int* remote_bus) {
  unsigned at = 0;
  for (int b = 0; b < 256; ++b) {
    if (link < at + (unsigned)nvlinks[bus][b]) {
      *remote_bus = b;
      return 1;
    }
    at += (unsigned)nvlinks[bus][b];
  }
  if (link < at + (unsigned)switch_links[bus]) {
    *remote_bus = -1;
    return 1;
  }
  return 0;
}

int nvmlDeviceGetNvLinkRemoteDeviceType(gcr_stub_device* device, unsigned link, int* type) {
  int remote = 0;
  if (!remote_of(device->bus, link, &remote)) return 6;
  *type = remote < 0 ? 2 /* NVML_NVLINK_DEVICE_TYPE_SWITCH */ : 0 /* GPU */;
  return 0;
}

typedef struct {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} gcr_stub_pci_info;

int nvmlDeviceGetNvLinkRemotePciInfo_v2(gcr_stub_device* device, unsigned link,
                                        gcr_stub_pci_info* pci) {
  int remote = 0;
  if (!remote_of(device->bus, link, &remote)) return 6;
  memset(pci, 0, sizeof *pci);
  pci->bus = remote < 0 ? 0xff : (unsigned)remote;
  snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
  return 0;
}

int nvmlDeviceGetTopologyCommonAncestor(gcr_stub_device* a, gcr_stub_device* b, int* level) {
  *level = pcie[a->bus][b->bus];
  return 0;
}

/* Events: one set, every GPU registered, waited on by polling the events file. */
typedef struct {
  gcr_stub_device* device;
  unsigned long long eventType;
  unsigned long long eventData;
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
} gcr_stub_event_data;

static int event_set;

int nvmlEventSetCreate(void** set) {
  *set = &event_set;
  return 0;
}

int nvmlDeviceRegisterEvents(gcr_stub_device* device, unsigned long long types, void* set) {
  (void)types, (void)set;
  if (no_events[device->bus]) return 3; /* NVML_ERROR_NOT_SUPPORTED */
  registered[device->bus] = 1;
  return 0;
}

int nvmlEventSetWait_v2(void* set, gcr_stub_event_data* data, unsigned timeout_ms) {
  const struct timespec step = {0, 20 * 1000 * 1000};
  (void)set;
  for (unsigned waited = 0;; waited += 20) {
    gcr_stub_event e;
    unsigned bus = 0;
    const int found = next_event(&e, &bus);
    if (wait_error != 0) return wait_error;
    if (found) {
      devices[bus].bus = bus;
      devices[bus].mig_index = -1;
      data->device = &devices[bus];
      data->eventType = e.event_type;
      data->eventData = e.data;
      data->gpuInstanceId = e.gi;
      data->computeInstanceId = e.ci;
      return 0;
    }
    if (waited >= timeout_ms) return 10; /* NVML_ERROR_TIMEOUT */
    nanosleep(&step, NULL);
  }
}

int nvmlEventSetFree(void* set) {
  (void)set;
  return 0;
}

/* Instance profiles: NVML's profile IDs are not their NVML_GPU_INSTANCE_PROFILE_* numbers (an
 * A100's 1g.5gb is ID 19, 1g.5gb+me 20, 7g.40gb 0); other profiles here are 100 + the number. */
typedef struct {
  unsigned id, isP2pSupported, sliceCount, instanceCount, multiprocessorCount, copyEngineCount;
  unsigned decoderCount, encoderCount, jpegCount, ofaCount;
  unsigned long long memorySizeMB;
} gcr_stub_profile_info;

typedef struct {
  void* device;
  unsigned id, profileId, start, size;
} gcr_stub_instance_info;

static unsigned profile_id(unsigned profile) {
  static const unsigned a100[10] = {19, 14, 9, 5, 0, 100, 106, 20, 108, 15};
  return profile < 10 ? a100[profile] : 100 + profile;
}

int nvmlDeviceGetGpuInstanceProfileInfo(gcr_stub_device* device, unsigned profile,
                                        gcr_stub_profile_info* info) {
  if (device->bus >= 0x80) return 3; /* NVML_ERROR_NOT_SUPPORTED */
  if (profile >= 17) return 2;       /* NVML_ERROR_INVALID_ARGUMENT */
  memset(info, 0, sizeof *info);
  info->id = profile_id(profile);
  return 0;
}

int nvmlDeviceGetGpuInstanceById(gcr_stub_device* device, unsigned id, gcr_stub_device** instance) {
  for (int i = 0; i < mig_count[device->bus]; ++i) {
    if (migs[device->bus][i].gi == id) {
      *instance = &migs[device->bus][i];
      return 0;
    }
  }
  return 6; /* NVML_ERROR_NOT_FOUND */
}

int nvmlGpuInstanceGetInfo(gcr_stub_device* instance, gcr_stub_instance_info* info) {
  memset(info, 0, sizeof *info);
  info->id = instance->gi;
  info->profileId = profile_id(instance->profile);
  return 0;
}
