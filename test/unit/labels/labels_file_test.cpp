// The labels file: atomic, rewritten only when its content changes (same inode and mtime
// otherwise, across a restart too), and the keeper that writes it for the device plugin.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include "labels/labels_file.h"
#include "labels/labels_keeper.h"
#include "sim_host.h"
#include "test_support.h"
#include "topology_fixtures.h"

using gcr::test::read_file;
using gcr::test::TempDir;

namespace {

struct stat stat_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st;
}

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_ino == b.st_ino && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
         a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

}  // namespace

TEST_CASE("the labels file is written once per content, its directories made") {
  TempDir dir;
  const std::string path = dir / "features.d/gpu-container-runtime";
  gcr::LabelsFile file(path);
  auto written = file.keep("a/b=1\n");
  REQUIRE(written.ok());
  CHECK(*written);
  CHECK(read_file(path) == "a/b=1\n");
  CHECK((stat_of(path).st_mode & 0777) == 0644);
  const auto first = stat_of(path);
  written = file.keep("a/b=1\n");
  REQUIRE(written.ok());
  CHECK_FALSE(*written);
  CHECK(same_file(first, stat_of(path)));

  // A restart: a new writer finds the file current and leaves it alone.
  gcr::LabelsFile again(path);
  written = again.keep("a/b=1\n");
  REQUIRE(written.ok());
  CHECK_FALSE(*written);
  CHECK(same_file(first, stat_of(path)));

  written = again.keep("a/b=2\n");
  REQUIRE(written.ok());
  CHECK(*written);
  CHECK(read_file(path) == "a/b=2\n");
  CHECK(stat_of(path).st_ino != first.st_ino);  // a new file renamed over the old one
}

TEST_CASE("a labels file that cannot be written is an error naming it") {
  TempDir dir;
  gcr::test::write_file(dir / "plain", "");
  gcr::LabelsFile file(dir / "plain/labels");
  const auto written = file.keep("a/b=1\n");
  REQUIRE_FALSE(written.ok());
  CHECK(written.error().message.find("cannot write the labels file " + dir / "plain/labels") == 0);
}

TEST_CASE("the keeper: nothing before a GPU, then written once, rewritten with what changed") {
  TempDir dir;
  gcr::test::SimHostOptions options;
  options.device_nodes = false;
  const gcr::test::SimHost host(dir / "host", options);
  gcr::Config config;
  config.driver = {host.driver_root(), host.dev_root()};
  config.device_plugin.labels_file = dir / "features.d/gpu-container-runtime";
  gcr::LabelsKeeper keeper(config);
  const std::map<std::string, std::vector<gcr::MigDevice>> migs;
  std::set<std::string> unhealthy;
  std::vector<gcr::Gpu> gpus;
  const gcr::Topology none;
  const auto t0 = gcr::LabelsKeeper::Clock::now();
  auto news = keeper.update(gcr::LabelSources{gpus, migs, none, unhealthy, nullptr}, t0);
  CHECK(news.info.empty());
  CHECK_FALSE(gcr::test::exists(config.device_plugin.labels_file));

  for (const auto& g : host.gpus())
    gpus.push_back(gcr::Gpu{g.index, g.model, g.uuid, *gcr::parse_pci_address(g.bus), g.minor});
  const auto sysfs = gcr::topology_from_sysfs(gpus, config.driver);
  news = keeper.update(gcr::LabelSources{gpus, migs, sysfs, unhealthy, nullptr}, t0);
  REQUIRE(news.info.size() == 1);
  CHECK(news.info[0] == "labels written to " + config.device_plugin.labels_file + " (16 labels)");
  const std::string text = read_file(config.device_plugin.labels_file);
  CHECK(text.find("nvidia.com/gpu.count=4\n") != std::string::npos);
  CHECK(text.find("nvidia.com/cuda.driver-version.full=550.54.15\n") != std::string::npos);
  CHECK(text.find("nvlink") == std::string::npos);  // sysfs knows no NVLinks

  news = keeper.update(gcr::LabelSources{gpus, migs, sysfs, unhealthy, nullptr}, t0);
  CHECK(news.info.empty());
  unhealthy.insert(gpus[1].uuid);
  news = keeper.update(gcr::LabelSources{gpus, migs, sysfs, unhealthy, nullptr}, t0);
  REQUIRE(news.info.size() == 1);
  CHECK(news.info[0] == "labels rewritten in " + config.device_plugin.labels_file +
                            ": nvidia.com/gpu.healthy=3 (was 4)");

  // The GPUs gone (the driver removed, the plugin restarted without it): the file stays for
  // kNoGpuGrace, as while a driver reloads, then goes; GPUs back, it is written again.
  const std::vector<gcr::Gpu> no_gpus;
  const std::string& path = config.device_plugin.labels_file;
  CHECK(keeper.update(gcr::LabelSources{no_gpus, migs, none, unhealthy, nullptr}, t0).info.empty());
  CHECK(keeper
            .update(gcr::LabelSources{no_gpus, migs, none, unhealthy, nullptr},
                    t0 + gcr::kNoGpuGrace - std::chrono::seconds(1))
            .info.empty());
  CHECK(gcr::test::exists(path));
  news = keeper.update(gcr::LabelSources{no_gpus, migs, none, unhealthy, nullptr},
                       t0 + gcr::kNoGpuGrace);
  REQUIRE(news.info.size() == 1);
  CHECK(news.info[0] == "labels file " + path + " removed: no GPU for 60 s");
  CHECK_FALSE(gcr::test::exists(path));
  news = keeper.update(gcr::LabelSources{gpus, migs, sysfs, unhealthy, nullptr},
                       t0 + 2 * gcr::kNoGpuGrace);
  REQUIRE(news.info.size() == 1);
  CHECK(news.info[0] == "labels written to " + path + " (16 labels)");
  // A new spell without GPUs counts from its own start.
  CHECK(keeper
            .update(gcr::LabelSources{no_gpus, migs, none, unhealthy, nullptr},
                    t0 + 3 * gcr::kNoGpuGrace - std::chrono::seconds(1))
            .info.empty());
  CHECK(gcr::test::exists(path));

  config.device_plugin.labels_file.clear();
  gcr::LabelsKeeper off(config);
  CHECK(off.update(gcr::LabelSources{gpus, migs, sysfs, unhealthy, nullptr}, t0).info.empty());
}

TEST_CASE("what changed, for the log") {
  CHECK(gcr::labels_change({{"a", "1"}, {"b", "2"}, {"c", "3"}},
                           {{"a", "1"}, {"b", "5"}, {"d", "4"}}) ==
        "b=5 (was 2), d=4 (new), c (gone)");
}
