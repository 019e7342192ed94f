#include "test_support.h"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/filesystem.hpp>
#include <boost/process.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace bp = boost::process;
namespace fs = boost::filesystem;

namespace gcr::test {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/gcr-test-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
  ::chmod(path_.c_str(), 0755);
}

TempDir::~TempDir() {
  boost::system::error_code ec;
  fs::remove_all(path_, ec);
}

void write_file(const std::string& path, const std::string& content, mode_t mode) {
  make_dirs(fs::path(path).parent_path().string());
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + path);
    out << content;
  }
  ::chmod(path.c_str(), mode);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

void make_dirs(const std::string& path) {
  if (!path.empty()) fs::create_directories(path);
}

void make_symlink(const std::string& target, const std::string& link) {
  make_dirs(fs::path(link).parent_path().string());
  if (::symlink(target.c_str(), link.c_str()) != 0) throw std::runtime_error("symlink " + link);
}

ProcessResult run(const std::vector<std::string>& argv, const RunOptions& options) {
  TempDir io;
  const std::string out_path = io / "out";
  const std::string err_path = io / "err";
  const std::string in_path = io / "in";
  write_file(in_path, options.stdin_text.value_or(""));
  bp::environment env = boost::this_process::environment();
  for (const auto& name : options.unset_env) env.erase(name);
  for (const auto& [k, v] : options.env) env[k] = v;
  const std::vector<std::string> args(argv.begin() + 1, argv.end());
  bp::child child(argv.front(), bp::args(args), env, bp::std_out > out_path, bp::std_err > err_path,
                  bp::std_in < options.stdin_path.value_or(in_path),
                  bp::start_dir(options.cwd.value_or(fs::current_path().string())));
  child.wait();
  return ProcessResult{child.exit_code(), read_file(out_path), read_file(err_path)};
}

std::string built(const std::string& name) {
  for (const char* dir : {"/", "/test/"}) {
    const std::string path = std::string(GCR_TEST_BINARY_DIR) + dir + name;
    if (exists(path)) return path;
  }
  throw std::runtime_error("not built: " + name);
}

std::string test_source(const std::string& rel) {
  return std::string(GCR_TEST_SOURCE_DIR) + "/test/" + rel;
}

bool is_root() {
  return ::geteuid() == 0;
}

}  // namespace gcr::test
