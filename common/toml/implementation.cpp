// toml++'s compiled part, built once for every target that includes toml/toml.h.
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
