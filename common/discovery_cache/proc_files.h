// What the driver's /proc files say, kept between calls in `[runtime] state-dir`/discovery
// beside the driver files (issue 44). Reading them is a create's costliest look at the host on
// a real GPU node (a GPU's information file asks the driver about the GPU: 0.17 to 0.23 ms a
// read on an H200; /proc/devices 0.03 to 0.05 ms), checking a stamp is one lstat.
//
// A kept text is used only while the file, and each directory it is anchored to, has the stamp
// it had when the text was read (device, inode, owner, mode, size and times). procfs and sysfs
// make a new inode, dated when it is made, whenever an entry is made again, so:
// - a driver file of its own (a GPU's information, the driver's version and parameters) is
//   anchored to nothing: the driver makes it when it loads or binds the GPU, and fixes what it
//   says then; the stamp changes when the driver makes it again;
// - /proc/devices, whose inode lives from boot while modules come and go, is anchored to
//   /sys/module/<module> of the modules whose majors are asked for: a module keeps the major it
//   registered until it unloads, and a module loaded again has a new directory.
// Nothing is kept with a stamp less than 2 s old, nor while an anchor is missing.
#pragma once

#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "discovery_cache/stamped_file.h"
#include "driver/device_nodes.h"

namespace gcr {

class KeptProcFiles : public ProcFileStore {
 public:
  // Kept in `state_dir`/discovery; an empty `state_dir` keeps nothing. `now`: the real time.
  explicit KeptProcFiles(std::string state_dir, std::function<timespec()> now = realtime_now)
      : state_dir_(std::move(state_dir)), now_(std::move(now)) {}

  [[nodiscard]] Result<std::string> read(
      const std::string& path, const std::vector<std::string>& anchors,
      const std::function<Result<std::string>()>& read_live) override;

 private:
  // The directory the files are kept in, opened once for the reads of one create; nullptr
  // while it cannot be (missing: nothing kept yet).
  const Fd* kept_directory();

  std::string state_dir_;
  std::function<timespec()> now_;
  Fd kept_directory_;
};

}  // namespace gcr
