# shellcheck shell=sh
# Sourced by the scripts that fetch Debian packages for the tests (real-driver.sh,
# newer-engines.sh): a private apt setup, so that the machine's apt sources, preferences, lists,
# cache and package status are neither used nor changed.

# private_apt DIR SOURCES_LINE ARCH...: makes DIR's sources.list (that one line), lists and
# cache, and sets APT to the apt-get / apt-cache options that use them alone, for the
# architectures named.
private_apt() {
  apt_dir=$1 sources=$2
  shift 2
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  echo "$sources" >"$apt_dir/sources.list"
  APT="-o Dir::Etc::SourceList=$apt_dir/sources.list -o Dir::Etc::SourceParts=/dev/null
    -o Dir::State::Lists=$apt_dir/lists -o Dir::Cache=$apt_dir/cache
    -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
    -o Dir::State::status=/dev/null -o Debug::NoLocking=1 -o APT::Sandbox::User=root"
  for arch; do APT="$APT -o APT::Architectures::=$arch"; done
}
