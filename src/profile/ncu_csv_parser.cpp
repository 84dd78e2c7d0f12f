#include "profile/ncu_csv_parser.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <set>

#include <fmt/format.h>

namespace cutegen {
namespace {

// The launch-identity columns ncu puts before the metrics on the raw page.
const std::set<std::string> kIdentityColumns = {"ID",         "Process ID", "Process Name", "Host Name",
                                                "Kernel Name", "Context",    "Stream",       "Block Size",
                                                "Grid Size",   "Device",     "CC"};

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Bases a prefix may scale; the value is the canonical name (time is kept in ns, as ncu's base unit).
struct Base {
  std::string_view name;
  std::string_view canonical;
  double to_canonical;
};
constexpr std::array<Base, 17> kBases = {{
    {"byte", "byte", 1},      {"B", "byte", 1},         {"second", "ns", 1e9},    {"s", "ns", 1e9},
    {"hz", "hz", 1},          {"Hz", "hz", 1},          {"cycle", "cycle", 1},    {"inst", "inst", 1},
    {"sector", "sector", 1},  {"request", "request", 1}, {"warp", "warp", 1},     {"thread", "thread", 1},
    {"block", "block", 1},    {"wavefront", "wavefront", 1}, {"pass", "pass", 1}, {"register", "register", 1},
    {"instruction", "inst", 1},
}};

const Base* find_base(std::string_view s) {
  for (const auto& b : kBases)
    if (b.name == s) return &b;
  return nullptr;
}

double si_prefix(std::string_view p) {
  if (p == "n") return 1e-9;
  if (p == "u") return 1e-6;
  if (p == "m") return 1e-3;
  if (p == "K" || p == "k") return 1e3;
  if (p == "M") return 1e6;
  if (p == "G") return 1e9;
  if (p == "T") return 1e12;
  if (p == "P") return 1e15;
  if (p == "Ki") return 1024.0;
  if (p == "Mi") return 1024.0 * 1024;
  if (p == "Gi") return 1024.0 * 1024 * 1024;
  if (p == "Ti") return 1024.0 * 1024 * 1024 * 1024;
  return 0;
}

// "usecond" -> base "second", factor 1e-6 (relative to the base).
struct Term {
  const Base* base = nullptr;
  double prefix = 1;
};
Term parse_term(std::string_view s) {
  if (const Base* b = find_base(s)) return {b, 1};
  for (std::size_t n : {2u, 1u}) {
    if (s.size() <= n) continue;
    double p = si_prefix(s.substr(0, n));
    const Base* b = find_base(s.substr(n));
    if (p != 0 && b) return {b, p};
  }
  return {};
}

}  // namespace

CanonicalUnit canonical_unit(std::string_view unit) {
  unit = trim(unit);
  std::string_view num = unit, den;
  if (auto slash = unit.find('/'); slash != std::string_view::npos) {
    num = unit.substr(0, slash);
    den = unit.substr(slash + 1);
  }
  Term n = parse_term(num);
  if (!n.base) return {1, std::string(unit)};
  double scale = n.prefix * n.base->to_canonical;
  std::string canonical(n.base->canonical);
  if (den.empty()) return {scale, canonical};
  Term d = parse_term(den);
  if (d.base && d.base->canonical == "ns") {
    // A rate: per second, whatever the time prefix was ("byte/usecond" -> byte/second).
    if (canonical == "ns") return {1, std::string(unit)};  // time per time: leave alone
    return {scale / d.prefix, canonical + "/second"};
  }
  return {scale, canonical + "/" + std::string(den)};
}

std::vector<std::string> split_csv_record(std::string_view line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
    } else {
      field += c;
    }
  }
  fields.push_back(std::move(field));
  return fields;
}

std::optional<double> parse_ncu_number(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  // Thousands separators: a comma must be followed by exactly three digits. Anything else (a decimal
  // comma, text with commas) is not a number we can read without guessing.
  std::string clean;
  clean.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != ',') {
      clean += s[i];
      continue;
    }
    if (i == 0 || !std::isdigit(static_cast<unsigned char>(s[i - 1]))) return std::nullopt;
    std::size_t digits = 0;
    while (i + 1 + digits < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1 + digits]))) ++digits;
    if (digits != 3) return std::nullopt;
  }
  const char* first = clean.data();
  const char* last = clean.data() + clean.size();
  if (first != last && *first == '+') ++first;
  double v = 0;
  auto [ptr, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || ptr != last) return std::nullopt;
  return v;
}

std::vector<std::string> ncu_messages(std::string_view text) {
  std::vector<std::string> out;
  for (auto line : split_lines(text))
    if (line.substr(0, 2) == "==") out.emplace_back(line);
  return out;
}

Result<NcuCsv> parse_ncu_csv(std::string_view text) {
  NcuCsv csv;
  std::vector<std::string> header;          // current table's columns
  std::vector<double> scales;               // per column
  std::size_t col_id = 0, col_kernel = 0, col_block = 0, col_grid = 0, col_device = 0, col_cc = 0;
  bool expect_units = false;
  std::set<std::string> known_metrics;
  auto index_of = [&](const char* name) -> std::size_t {
    auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? header.size() : static_cast<std::size_t>(it - header.begin());
  };
  auto field = [](const std::vector<std::string>& r, std::size_t i) { return i < r.size() ? r[i] : std::string(); };

  int line_no = 0;
  for (auto line : split_lines(text)) {
    ++line_no;
    if (line.substr(0, 2) == "==") {
      csv.messages.emplace_back(line);
      continue;
    }
    if (line.empty() || line.front() != '"') continue;  // the profiled program's own output
    auto record = split_csv_record(line);
    if (!record.empty() && record[0] == "ID" && std::find(record.begin(), record.end(), "Kernel Name") != record.end()) {
      header = record;
      scales.assign(header.size(), 1.0);
      col_id = index_of("ID");
      col_kernel = index_of("Kernel Name");
      col_block = index_of("Block Size");
      col_grid = index_of("Grid Size");
      col_device = index_of("Device");
      col_cc = index_of("CC");
      for (const auto& name : header) {
        if (kIdentityColumns.count(name) || known_metrics.count(name)) continue;
        known_metrics.insert(name);
        csv.metric_columns.push_back(name);
        csv.units.emplace(name, "");
      }
      expect_units = true;
      continue;
    }
    if (header.empty()) continue;
    if (record.size() != header.size()) {
      csv.warnings.push_back(fmt::format("line {}: {} fields where the header has {} (cut short?): skipped", line_no,
                                         record.size(), header.size()));
      expect_units = false;
      continue;
    }
    if (expect_units && field(record, col_id).empty()) {
      for (std::size_t i = 0; i < header.size(); ++i) {
        if (kIdentityColumns.count(header[i])) continue;
        auto cu = canonical_unit(record[i]);
        scales[i] = cu.scale;
        csv.units[header[i]] = cu.unit;
      }
      expect_units = false;
      continue;
    }
    expect_units = false;
    NcuLaunch launch;
    auto id = parse_ncu_number(field(record, col_id));
    launch.id = id ? static_cast<int>(*id) : -1;
    launch.kernel = field(record, col_kernel);
    launch.block = field(record, col_block);
    launch.grid = field(record, col_grid);
    launch.device = field(record, col_device);
    launch.cc = field(record, col_cc);
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (kIdentityColumns.count(header[i])) continue;
      if (auto v = parse_ncu_number(record[i])) {
        launch.values[header[i]] = *v * scales[i];
      } else if (auto t = trim(record[i]); !t.empty() && t != "n/a" && t != "N/A") {
        launch.text[header[i]] = std::string(t);
      }
    }
    csv.launches.push_back(std::move(launch));
  }
  if (header.empty()) {
    std::string why = csv.messages.empty() ? "ncu printed nothing" : csv.messages.back();
    return Error{fmt::format("no ncu CSV results in the output ({})", why)};
  }
  return csv;
}

}  // namespace cutegen
