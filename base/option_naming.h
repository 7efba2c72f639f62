#ifndef STRAND_BASE_OPTION_NAMING_H_
#define STRAND_BASE_OPTION_NAMING_H_

// How an options check names the setting it rejects, so that its message
// speaks the words of whoever made the mistake. A program that set a field
// reads
//
//   EngineOptions::fabric.compute_nodes=0 is out of range: use 1 to 58
//
// and a user who typed a flag of a strand binary reads
//
//   --compute_nodes=0 is out of range: use 1 to 58
//
// Each setting is described once (OptionSetting: its field, its flag in the
// binaries' shared vocabulary (README.md, "Flags every binary shares"),
// and the flag's unit when it
// differs, as --pool_mb counts MiB of pool_bytes); a Validate takes an
// OptionNaming and builds its messages with Name/Setting/Amount. Options
// structs name their fields by default; binaries that filled them from
// flags validate with OptionNaming::Flags before using them.

#include <cstdint>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace strand {

struct OptionSetting {
  absl::string_view field;  // within its struct: "pool_bytes"
  absl::string_view flag;   // the binaries' flag, "pool_mb"; empty: none
  uint64_t flag_unit = 1;   // one unit of the flag is this many of the field
};

class OptionNaming {
 public:
  // Names settings as the fields of the struct at `path`, e.g.
  // "EngineOptions::" or "FabricOptions::".
  static OptionNaming Fields(std::string path) {
    return OptionNaming(/*flags=*/false, std::move(path));
  }
  // Names settings by their flag; one without a flag by its field under
  // `path` (the user cannot set it, so a program did).
  static OptionNaming Flags(std::string path) {
    return OptionNaming(/*flags=*/true, std::move(path));
  }

  // The naming of member struct `name`: Fields("EngineOptions::")
  // .Member("fabric") names fabric's fields "EngineOptions::fabric.x".
  OptionNaming Member(absl::string_view name) const {
    return OptionNaming(flags_, absl::StrCat(path_, name, "."));
  }

  bool uses_flags() const { return flags_; }

  // "--pool_mb" or "EngineOptions::fabric.pool_bytes".
  std::string Name(const OptionSetting& setting) const {
    if (UsesFlag(setting)) return absl::StrCat("--", setting.flag);
    return absl::StrCat(path_, setting.field);
  }

  // `value`, an amount in the field's unit, in the reader's unit: for
  // --pool_mb, 268435456 reads "256".
  template <typename Int>
  requires std::is_integral_v<Int> &&(!std::is_same_v<Int, bool>)std::string
      Amount(const OptionSetting& setting, Int value) const {
    if (!UsesFlag(setting) || setting.flag_unit == 1) {
      return absl::StrCat(value);
    }
    if constexpr (std::is_signed_v<Int>) {
      return absl::StrCat(static_cast<int64_t>(value) /
                          static_cast<int64_t>(setting.flag_unit));
    } else {
      return absl::StrCat(static_cast<uint64_t>(value) / setting.flag_unit);
    }
  }

  // The setting with its value, "--pool_mb=256" or
  // "EngineOptions::fabric.pool_bytes=268435456". Integers are amounts
  // (converted as Amount does); other values print as they are.
  template <typename T>
  std::string Setting(const OptionSetting& setting, const T& value) const {
    if constexpr (std::is_same_v<T, bool>) {
      return absl::StrCat(Name(setting), "=", value ? "true" : "false");
    } else if constexpr (std::is_integral_v<T>) {
      return absl::StrCat(Name(setting), "=", Amount(setting, value));
    } else {
      return absl::StrCat(Name(setting), "=", value);
    }
  }

 private:
  OptionNaming(bool flags, std::string path)
      : flags_(flags), path_(std::move(path)) {}
  bool UsesFlag(const OptionSetting& setting) const {
    return flags_ && !setting.flag.empty();
  }

  bool flags_;
  std::string path_;
};

}  // namespace strand

#endif  // STRAND_BASE_OPTION_NAMING_H_
