// detail/values.cuh — how every level says "keys alone": one template serves
// keys and pairs, and this is the one test of which it is.
//
// The public block-level classes take `Value = void` for keys alone (the API
// contract); code that holds values in arrays needs an object type, so it
// carries `no_value` (an empty struct: an array of them costs nothing)
// instead. has_values<Value> is false for both spellings, value_or_none maps
// void to no_value, and value_bytes_of is sizeof(Value), 0 for keys alone.
//
//   template <typename Key, typename Value>
//   void load(...) { if constexpr (detail::has_values<Value>) { /* values too */ } }
#pragma once

#include <cstddef>
#include <type_traits>

namespace tilesort::detail {

// Stand-in payload for keys-only sorts: one template serves keys and pairs,
// and an array of empty structs costs nothing.
struct no_value {};

// Whether a sort of Value carries values: false for void and no_value.
template <typename Value>
inline constexpr bool has_values = !std::is_void_v<Value> && !std::is_same_v<Value, no_value>;

// Value as an object type: no_value for void.
template <typename Value>
using value_or_none = std::conditional_t<std::is_void_v<Value>, no_value, Value>;

// Bytes a value adds to an item: sizeof(Value), 0 for keys alone.
template <typename Value>
inline constexpr std::size_t value_bytes_of = has_values<Value> ? sizeof(value_or_none<Value>) : 0;

}  // namespace tilesort::detail
