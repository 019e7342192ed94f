// Linked into the executables of a GCR_SANITIZE build only. gpu-ctk runs as a hook inside
// container namespaces with an explicit minimal environment, where LeakSanitizer cannot
// inspect the process; leaks are still checked in the test programs themselves.
extern "C" const char* __asan_default_options() {
  return "detect_leaks=0";
}
