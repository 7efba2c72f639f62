#include "base/type_name.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace strand {

std::string DemangledTypeName(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  if (status != 0 || demangled == nullptr) return type.name();
  return demangled.get();
}

}  // namespace strand
