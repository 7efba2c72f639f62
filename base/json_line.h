#ifndef STRAND_BASE_JSON_LINE_H_
#define STRAND_BASE_JSON_LINE_H_

// Builds one JSON object on one line: what every strand binary prints per
// run with --json, so scripts can collect and compare runs. The same fields
// also make one CSV row (--csv): every scalar field a column, a nested
// object's fields columns named "<object>.<field>", raw JSON (arrays) left
// out.
//
//   JsonLine j;
//   j.Add("bench", "fabric").Add("threads", 2).Add("ops_per_sec", 1.5e6);
//   std::cout << j.str() << "\n";   // {"bench":"fabric","threads":2,...}
//   std::cout << j.CsvHeader() << "\n" << j.CsvRow() << "\n";

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
  // `object`'s fields as a nested object (its CSV columns prefixed "key.").
  JsonLine& AddObject(std::string_view key, const JsonLine& object);
  // `json` must already be valid JSON (an array, say); not a CSV column.
  JsonLine& AddRaw(std::string_view key, std::string_view json);

  std::string str() const { return "{" + body_ + "}"; }

  // The CSV columns' names and this object's row, comma-separated, a value
  // quoted where it holds a comma, a quote or a line break (RFC 4180).
  // Numbers and booleans are written as in str().
  std::string CsvHeader() const;
  std::string CsvRow() const;

 private:
  struct Column {
    std::string name;
    std::string value;  // as CSV text
  };
  void Key(std::string_view key);
  // Appends `json` (a scalar's JSON text) and its column, whose value is
  // `csv`.
  void Scalar(std::string_view key, std::string json, std::string csv);

  std::string body_;
  std::vector<Column> columns_;
};

// `s` as a quoted JSON string.
std::string JsonQuote(std::string_view s);

}  // namespace strand

#endif  // STRAND_BASE_JSON_LINE_H_
