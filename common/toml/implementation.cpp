// toml++'s compiled part, built once, with the checks toml/toml.h sets up.
#define TOML_IMPLEMENTATION
#include "toml/toml.h"
