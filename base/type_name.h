#ifndef STRAND_BASE_TYPE_NAME_H_
#define STRAND_BASE_TYPE_NAME_H_

// Readable C++ type names for error messages: "int64_t" rather than "l" or
// "long", "std::string" rather than
// "std::__cxx11::basic_string<char, std::char_traits<char>, ...>".
//
//   TypeName<int64_t>()                  // "int64_t"
//   TypeListName<int, std::string>()     // "(int, std::string)"
//
// The fixed-width integers, bool, char, the floating types and the
// standard strings have table names; every other type is demangled from
// typeid (so it reads as the compiler spells it). Costs a string build per
// call: for error paths, not hot paths.

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>

#include "absl/strings/str_join.h"

namespace strand {

// The demangled name of `type` (the mangled one if demangling fails).
std::string DemangledTypeName(const std::type_info& type);

template <typename T>
std::string TypeName() {
  using U = std::remove_cvref_t<T>;
  std::string name;
  if constexpr (std::is_same_v<U, bool>) {
    name = "bool";
  } else if constexpr (std::is_same_v<U, char>) {
    name = "char";
  } else if constexpr (std::is_same_v<U, int8_t>) {
    name = "int8_t";
  } else if constexpr (std::is_same_v<U, int16_t>) {
    name = "int16_t";
  } else if constexpr (std::is_same_v<U, int32_t>) {
    name = "int32_t";
  } else if constexpr (std::is_same_v<U, int64_t>) {
    name = "int64_t";
  } else if constexpr (std::is_same_v<U, uint8_t>) {
    name = "uint8_t";
  } else if constexpr (std::is_same_v<U, uint16_t>) {
    name = "uint16_t";
  } else if constexpr (std::is_same_v<U, uint32_t>) {
    name = "uint32_t";
  } else if constexpr (std::is_same_v<U, uint64_t>) {
    name = "uint64_t";
  } else if constexpr (std::is_same_v<U, float>) {
    name = "float";
  } else if constexpr (std::is_same_v<U, double>) {
    name = "double";
  } else if constexpr (std::is_same_v<U, std::string>) {
    name = "std::string";
  } else if constexpr (std::is_same_v<U, std::string_view>) {
    name = "std::string_view";
  } else {
    name = DemangledTypeName(typeid(U));
  }
  if constexpr (std::is_const_v<std::remove_reference_t<T>>) {
    name = "const " + name;
  }
  if constexpr (std::is_lvalue_reference_v<T>) name += "&";
  if constexpr (std::is_rvalue_reference_v<T>) name += "&&";
  return name;
}

// "(A, B, C)"; "()" for none.
template <typename... Ts>
std::string TypeListName() {
  return "(" + absl::StrJoin({TypeName<Ts>()...}, ", ") + ")";
}
template <>
inline std::string TypeListName<>() {
  return "()";
}

}  // namespace strand

#endif  // STRAND_BASE_TYPE_NAME_H_
