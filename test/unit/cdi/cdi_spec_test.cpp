// CDI specs: structure, versions, names, validation (reference/cdi.md §3-§5, §8, §12),
// written as our own cases.
#include <doctest/doctest.h>

#include "cdi/spec.h"
#include "cdi/yaml.h"
#include "vocabulary/cdi_name.h"

using gcr::Json;

namespace {

Json minimal() {
  return Json::parse(R"({"cdiVersion":"0.3.0","kind":"vendor.com/device",
                         "devices":[{"name":"myDevice","containerEdits":{"deviceNodes":[{"path":"/dev/card1"}]}}]})");
}

std::string problem(const Json& doc) {
  auto spec = gcr::cdi_spec_from_json(doc);
  if (!spec) return spec.error().message;
  auto s = gcr::validate_cdi_spec(*spec);
  return s ? "" : s.error().message;
}

Json with_value(Json doc, const std::string& pointer, const Json& value) {
  doc[Json::json_pointer(pointer)] = value;
  return doc;
}

}  // namespace

TEST_CASE("the minimal 0.3.0 spec is valid and round-trips") {
  CHECK(problem(minimal()) == "");
  auto spec = gcr::cdi_spec_from_json(minimal());
  REQUIRE(spec.ok());
  CHECK(gcr::cdi_spec_to_json(*spec) == minimal());
  CHECK(gcr::minimum_cdi_version(*spec) == "0.3.0");
}

TEST_CASE("the minimum version follows the fields used") {
  const std::pair<Json, std::string> cases[] = {
      {with_value(minimal(), "/devices/0/containerEdits/deviceNodes/0/hostPath", "/dev/card1"),
       "0.5.0"},
      {with_value(minimal(), "/devices/0/name", "0"), "0.5.0"},
      {with_value(minimal(), "/containerEdits/mounts",
                  Json::parse(R"([{"hostPath":"/a","containerPath":"/b","type":"bind"}])")),
       "0.4.0"},
      {with_value(minimal(), "/annotations", Json{{"owner", "a"}}), "0.6.0"},
      {with_value(minimal(), "/devices/0/annotations", Json{{"slot", "1"}}), "0.6.0"},
      {with_value(minimal(), "/kind", "vendor.com/class.sub"), "0.6.0"},
      {with_value(minimal(), "/containerEdits/intelRdt", Json{{"closID", "c1"}}), "0.7.0"},
      {with_value(minimal(), "/containerEdits/additionalGids", Json{5}), "0.7.0"},
      {with_value(minimal(), "/containerEdits/netDevices",
                  Json::parse(R"([{"hostInterfaceName":"ib0","name":"net1"}])")),
       "1.1.0"},
      {with_value(minimal(), "/containerEdits/intelRdt", Json{{"schemata", {"L2:0=ff"}}}), "1.1.0"},
      {with_value(minimal(), "/containerEdits/intelRdt", Json{{"enableMonitoring", true}}),
       "1.1.0"},
  };
  for (const auto& entry : cases) {
    const auto& doc = entry.first;  // named: doctest's CAPTURE cannot take a binding
    const auto& needed = entry.second;
    CAPTURE(doc.dump());
    CHECK(problem(doc) == "the spec version must be at least v" + needed);
    CHECK(problem(with_value(doc, "/cdiVersion", needed)) == "");
    CHECK(problem(with_value(doc, "/cdiVersion", "1.1.0")) == "");
    CHECK(gcr::minimum_cdi_version(*gcr::cdi_spec_from_json(doc)) == needed);
  }
}

TEST_CASE("versions: known ones only, a leading v is fine, 0.1/0.2 are too old") {
  CHECK(problem(with_value(minimal(), "/cdiVersion", "v0.3.0")) == "");
  CHECK(problem(with_value(minimal(), "/cdiVersion", "0.0.0")) == "invalid version `0.0.0`");
  CHECK(problem(with_value(minimal(), "/cdiVersion", "2.0.0")) == "invalid version `2.0.0`");
  CHECK(problem(with_value(minimal(), "/cdiVersion", "0.2.0")) ==
        "the spec version must be at least v0.3.0");
}

TEST_CASE("structure: required fields, unknown fields, types") {
  Json no_kind = minimal();
  no_kind.erase("kind");
  CHECK(problem(no_kind) == "`kind` is required");
  CHECK(problem(with_value(minimal(), "/extra", 1)) == "unknown field `extra`");
  CHECK(problem(with_value(minimal(), "/containerEdits/additionalGIDs", Json{1})) ==
        "unknown field `containerEdits.additionalGIDs`");
  CHECK(problem(with_value(minimal(), "/containerEdits/intelRdt", Json{{"enableCMT", true}})) ==
        "unknown field `containerEdits.intelRdt.enableCMT`");
  CHECK(problem(with_value(minimal(), "/devices/0/containerEdits/deviceNodes/0/major", "195"))
            .find("must be an integer") != std::string::npos);
  CHECK(problem(with_value(minimal(), "/containerEdits/env", "A=1")) ==
        "`containerEdits.env` must be a list of strings");
  CHECK(problem(with_value(minimal(), "/devices", Json::array())) == "invalid spec, no devices");
  CHECK(problem(with_value(minimal(), "/devices/0/containerEdits", Json::object())) ==
        "invalid device `myDevice`, empty device edits");
  Json dup = minimal();
  dup["devices"].push_back(dup["devices"][0]);
  CHECK(problem(dup) == "duplicate device name `myDevice`");
}

TEST_CASE("kinds and names follow the reference rules") {
  CHECK(problem(with_value(minimal(), "/kind", "vendor.com-/device")).find("invalid vendor") == 0);
  CHECK(problem(with_value(minimal(), "/kind", "vendor.com/device=")).find("invalid class") == 0);
  CHECK(problem(with_value(minimal(), "/devices/0/name", "-dev")).find("invalid device name") == 0);
  for (const char* ok : {"vendor.com/class=dev", "a/b=c", "vendor.com/class=0",
                         "vendor1.com/class.subclass=dev1", "other-vendor1.com/class_1=dev_1",
                         "yet_another-vendor2.com/c-lass_2=dev_1:2.3", "nvidia.com/gpu=0:1"}) {
    CAPTURE(ok);
    CHECK(gcr::parse_qualified_name(ok));
  }
  for (const char* bad : {"_invalid.com/class=dev", "invalid2.com-/class=dev", "x.com/_class=dev",
                          "x.com/class_=dev", "x.com/class=-dev", "x.com/class=dev:",
                          "*.com/*dev=*gpu*", "/dev/nvidia0", "0", "GPU-1", "a/b="}) {
    CAPTURE(bad);
    CHECK_FALSE(gcr::parse_qualified_name(bad));
  }
}

TEST_CASE("edits that would be unsafe to apply are refused") {
  const auto node = [](const std::string& path) {
    return with_value(minimal(), "/devices/0/containerEdits/deviceNodes/0/path", path);
  };
  CHECK(problem(node("/etc/passwd")).find("must be a clean path under /dev") != std::string::npos);
  CHECK(problem(node("/dev/../etc/shadow")).find("must be a clean path under /dev") !=
        std::string::npos);
  CHECK(problem(node("dev/card1")).find("must be a clean path under /dev") != std::string::npos);
  CHECK(problem(with_value(minimal(), "/devices/0/containerEdits/deviceNodes/0/type", "x"))
            .find("is not one of b, c, u, p") != std::string::npos);
  CHECK(problem(with_value(minimal(), "/devices/0/containerEdits/deviceNodes/0/permissions", "rwx"))
            .find("must be made of r, w, m") != std::string::npos);
  const Json hook = Json::parse(R"([{"hookName":"createContainer","path":"bin/hook"}])");
  CHECK(problem(with_value(minimal(), "/containerEdits/hooks", hook))
            .find("must be a clean absolute path") != std::string::npos);
  CHECK(problem(with_value(minimal(), "/containerEdits/hooks",
                           Json::parse(R"([{"hookName":"onBoot","path":"/bin/h"}])")))
            .find("is not a hook name") != std::string::npos);
  CHECK(problem(
            with_value(minimal(), "/containerEdits/hooks",
                       Json::parse(R"([{"hookName":"prestart","path":"/bin/h","env":["NOEQ"]}])")))
            .find("is not NAME=value") != std::string::npos);
  CHECK(problem(with_value(minimal(), "/containerEdits/mounts",
                           Json::parse(R"([{"hostPath":"/a","containerPath":"relative"}])")))
            .find("must be a clean absolute path") != std::string::npos);
  CHECK(
      problem(with_value(minimal(), "/containerEdits/env", Json{"=x"})).find("is not NAME=value") !=
      std::string::npos);
  CHECK(problem(with_value(with_value(minimal(), "/cdiVersion", "0.7.0"),
                           "/containerEdits/intelRdt", Json{{"closID", "../x"}}))
            .find("is not a valid name") != std::string::npos);
  CHECK(
      problem(
          with_value(
              with_value(minimal(), "/cdiVersion", "1.1.0"), "/containerEdits/netDevices",
              Json::parse(
                  R"([{"hostInterfaceName":"ib0","name":"n"},{"hostInterfaceName":"ib0","name":"m"}])")))
          .find("must be unique") != std::string::npos);
}

TEST_CASE("YAML specs: every 1.1.0 field, quoted vs plain scalars") {
  const std::string yaml = R"(---
cdiVersion: "1.1.0"
kind: "example.com/gpu"
annotations: {owner: "team-a"}
devices:
  - name: "0"
    annotations: {slot: "pci-0000:3b"}
    containerEdits:
      deviceNodes:
        - path: /dev/gpu0
          hostPath: /dev/gpu0
          type: c
          major: 195
          minor: 0
          fileMode: 438
          permissions: rw
          uid: 0
          gid: 44
      netDevices:
        - {hostInterfaceName: ib0, name: net1}
containerEdits:
  env: ["EXAMPLE_VISIBLE=1"]
  mounts:
    - hostPath: /usr/lib/x86_64-linux-gnu/libexample.so.1.2
      containerPath: /usr/lib/x86_64-linux-gnu/libexample.so.1.2
      type: bind
      options: [ro, nosuid, nodev, bind]
  hooks:
    - hookName: createContainer
      path: /usr/bin/example-hook
      args: [example-hook, update-ldcache, --folder, /usr/lib/x86_64-linux-gnu]
      env: ["DEBUG=0"]
      timeout: 10
  additionalGids: [44]
  intelRdt: {closID: "clos-1", l3CacheSchema: "L3:0=ff", memBwSchema: "MB:0=50", schemata: ["L2:0=ffff"], enableMonitoring: true}
)";
  auto doc = gcr::yaml_to_json(yaml);
  REQUIRE(doc.ok());
  CHECK(problem(*doc) == "");
  auto spec = gcr::cdi_spec_from_json(*doc);
  REQUIRE(spec.ok());
  CHECK(spec->devices[0].name == "0");
  CHECK(spec->devices[0].edits.device_nodes[0].major == 195);
  CHECK(spec->devices[0].edits.device_nodes[0].gid == 44u);
  CHECK(spec->edits.hooks[0].timeout == 10);
  CHECK(spec->edits.intel_rdt->at("enableMonitoring") == true);
  auto back = gcr::yaml_to_json(gcr::json_to_yaml(gcr::cdi_spec_to_json(*spec)));
  REQUIRE(back.ok());
  CHECK(*back == gcr::cdi_spec_to_json(*spec));
  // Integers as the CDI library's YAML 1.1 reader reads them: a fileMode written `0666` is
  // octal (it was read as decimal 666, which is 01232: the sticky bit, no read for the owner).
  const auto modes = gcr::yaml_to_json("a: 0666\nb: 0x1F\nc: 0o17\nd: -010\ne: 09\nf: 1e3\n");
  REQUIRE(modes.ok());
  CHECK(*modes == gcr::Json{{"a", 438}, {"b", 31}, {"c", 15}, {"d", -8}, {"e", 9}, {"f", 1000.0}});
}

TEST_CASE(
    "A plain integer or boolean where a string goes is its text, as the CDI library reads it") {
  // sigs.k8s.io/yaml types a scalar by the field it fills, in YAML and JSON files alike: a
  // hand-written `name: 0` is the device "0" (it was refused, so the engines saw a device the
  // shim did not).
  auto unquoted = gcr::yaml_to_json(
      "cdiVersion: 0.6.0\nkind: a/b\nannotations: {a: 1}\n"
      "devices: [{name: 0, containerEdits: {env: [A=1], hooks: [{hookName: createContainer,"
      " path: /bin/h, args: [h, --mode, 0755, true]}]}}]\n");
  REQUIRE(unquoted.ok());
  CHECK(problem(*unquoted) == "");
  auto spec = gcr::cdi_spec_from_json(*unquoted);
  REQUIRE(spec.ok());
  CHECK(spec->devices[0].name == "0");
  CHECK(spec->annotations.at("a") == "1");
  CHECK(spec->devices[0].edits.hooks[0].args ==
        std::vector<std::string>{"h", "--mode", "493", "true"});  // YAML 1.1: 0755 is octal
  auto json = gcr::cdi_spec_from_json(Json::parse(
      R"({"cdiVersion": "0.5.0", "kind": "a/b", "devices": [{"name": 1, "containerEdits":)"
      R"( {"deviceNodes": [{"path": "/dev/x", "major": 195, "minor": 1}]}}]})"));
  REQUIRE(json.ok());
  CHECK(json->devices[0].name == "1");
  CHECK(json->devices[0].edits.device_nodes[0].major == 195);
  // Numbers stay numbers where numbers go; a float or a list is still not a string.
  CHECK(problem(Json::parse(R"({"cdiVersion": "0.5.0", "kind": "a/b", "devices":)"
                            R"( [{"name": 1.5, "containerEdits": {"env": ["A=1"]}}]})")) ==
        "`devices[0].name` must be a string");
  CHECK(problem(Json::parse(R"({"cdiVersion": "0.5.0", "kind": "a/b", "devices":)"
                            R"( [{"name": "x", "containerEdits": {"env": [["A=1"]]}}]})")) ==
        "`devices[0].containerEdits.env` must be a list of strings");
}

TEST_CASE("YAML refusals: duplicate keys, bombs, depth") {
  CHECK(gcr::yaml_to_json("a: 1\na: 2\n").error().message.find("duplicate key `a`") == 0);
  std::string bomb = "a: &a [x,x,x,x,x,x,x,x,x,x]\n";
  for (char c = 'b'; c <= 'h'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [*" + static_cast<char>(c - 1);
    for (int i = 0; i < 9; ++i) bomb += ",*" + std::string(1, static_cast<char>(c - 1));
    bomb += "]\n";
  }
  CHECK(gcr::yaml_to_json(bomb).error().message == "aliases are not accepted (line 2)");
  CHECK(gcr::yaml_to_json("a: &x 1\nb: 2\n").ok());  // an anchor alone is harmless
  CHECK(gcr::yaml_to_json("a: \"\xff\"\n").error().message == "invalid UTF-8 in a scalar (line 1)");
  CHECK(gcr::yaml_to_json("a: \"x\\0y\"\n").error().message ==
        "a NUL character in a scalar (line 1)");
  CHECK(gcr::yaml_to_json("a: 1\n---\nb: 2\n").error().message == "more than one YAML document");
  CHECK(gcr::yaml_to_json("? [a]\n: 1\n").error().message.find("a map key is not a scalar") == 0);
  CHECK_FALSE(gcr::yaml_to_json(std::string(5000, '[') + std::string(5000, ']')).ok());
  CHECK(gcr::yaml_to_json("a: [1, 2").error().message.find("invalid YAML at line") == 0);
}
