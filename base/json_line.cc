#include "base/json_line.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace strand {

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

namespace {

// `s` as a CSV field: quoted, its quotes doubled, if it holds a separator.
std::string CsvField(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
    return std::string(s);
  }
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

void JsonLine::Key(std::string_view key) {
  if (!body_.empty()) body_ += ",";
  absl::StrAppend(&body_, JsonQuote(key), ":");
}

void JsonLine::Scalar(std::string_view key, std::string json, std::string csv) {
  Key(key);
  body_ += json;
  columns_.push_back({std::string(key), std::move(csv)});
}

JsonLine& JsonLine::Add(std::string_view key, std::string_view value) {
  Scalar(key, JsonQuote(value), CsvField(value));
  return *this;
}

JsonLine& JsonLine::Add(std::string_view key, bool value) {
  const char* text = value ? "true" : "false";
  Scalar(key, text, text);
  return *this;
}

JsonLine& JsonLine::Add(std::string_view key, int64_t value) {
  Scalar(key, absl::StrCat(value), absl::StrCat(value));
  return *this;
}

JsonLine& JsonLine::Add(std::string_view key, uint64_t value) {
  Scalar(key, absl::StrCat(value), absl::StrCat(value));
  return *this;
}

JsonLine& JsonLine::Add(std::string_view key, double value) {
  // JSON has no NaN or infinity; CSV leaves the field empty.
  if (!std::isfinite(value)) {
    Scalar(key, "null", "");
  } else {
    const std::string text = absl::StrFormat("%.6g", value);
    Scalar(key, text, text);
  }
  return *this;
}

JsonLine& JsonLine::AddObject(std::string_view key, const JsonLine& object) {
  Key(key);
  body_ += object.str();
  for (const Column& c : object.columns_) {
    columns_.push_back({std::string(key) + "." + c.name, c.value});
  }
  return *this;
}

JsonLine& JsonLine::AddRaw(std::string_view key, std::string_view json) {
  Key(key);
  body_ += json;
  return *this;
}

std::string JsonLine::CsvHeader() const {
  std::string out;
  for (size_t i = 0; i < columns_.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : ",", CsvField(columns_[i].name));
  }
  return out;
}

std::string JsonLine::CsvRow() const {
  std::string out;
  for (size_t i = 0; i < columns_.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : ",", columns_[i].value);
  }
  return out;
}

}  // namespace strand
