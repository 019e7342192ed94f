// How runc's Go decoder (encoding/json) matches an object key to a spec field: without regard
// to case, with Unicode simple case folding, so besides ASCII case `ſ` (U+017F) reads as `s`
// and the Kelvin sign `K` (U+212A) as `k`. A key that matches a field this way but is not the
// field's exact name is merged into that field by runc.
#pragma once

#include <string_view>

namespace gcr {

// True when Go would decode `key` into the field named `field` (ASCII, as every OCI field is).
[[nodiscard]] bool go_field_matches(std::string_view key, std::string_view field);

}  // namespace gcr
