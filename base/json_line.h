#ifndef STRAND_BASE_JSON_LINE_H_
#define STRAND_BASE_JSON_LINE_H_

// Builds one flat JSON object on one line: what every strand binary prints
// per run with --json, so scripts can collect and compare runs.
//
//   JsonLine j;
//   j.Add("bench", "fabric").Add("threads", 2).Add("ops_per_sec", 1.5e6);
//   std::cout << j.str() << "\n";   // {"bench":"fabric","threads":2,...}

#include <cstdint>
#include <string>
#include <string_view>

namespace strand {

class JsonLine {
 public:
  JsonLine& Add(std::string_view key, std::string_view value);
  JsonLine& Add(std::string_view key, const char* value) {
    return Add(key, std::string_view(value));
  }
  JsonLine& Add(std::string_view key, bool value);
  JsonLine& Add(std::string_view key, int64_t value);
  JsonLine& Add(std::string_view key, uint64_t value);
  JsonLine& Add(std::string_view key, int value) {
    return Add(key, static_cast<int64_t>(value));
  }
  JsonLine& Add(std::string_view key, double value);
  // `json` must already be valid JSON (a nested object or array).
  JsonLine& AddRaw(std::string_view key, std::string_view json);

  std::string str() const { return "{" + body_ + "}"; }

 private:
  void Key(std::string_view key);
  std::string body_;
};

// `s` as a quoted JSON string.
std::string JsonQuote(std::string_view s);

}  // namespace strand

#endif  // STRAND_BASE_JSON_LINE_H_
