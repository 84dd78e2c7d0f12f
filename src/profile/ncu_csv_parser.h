#pragma once
// Reads what `ncu --csv --page raw --print-units base` prints: ncu's own `==PROF==`/`==WARNING==`/
// `==ERROR==` lines, then a header row of metric names (after 11 identity columns: "ID", "Process ID",
// ..., "CC"), a units row, and one row per profiled kernel launch. Values carry thousands separators
// ("1,234.5"), may be "n/a" or text ("NVIDIA H200"), and units may be scaled ("usecond", "Mbyte")
// when a capture used --print-units auto; every number is converted to one canonical unit per
// dimension (ns, byte, byte/second) so the real capture and hand-made fixtures read the same way.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace cutegen {

struct NcuLaunch {
  int id = -1;                 // ncu's launch index
  std::string kernel;          // demangled name, as printed
  std::string block, grid;     // "(256, 1, 1)"
  std::string device, cc;
  std::map<std::string, double> values;      // numeric metrics, canonical units
  std::map<std::string, std::string> text;   // non-numeric metrics ("NVIDIA H200", "PolicySpread")
};

struct NcuCsv {
  std::vector<std::string> metric_columns;     // header order, identity columns excluded
  std::map<std::string, std::string> units;    // canonical unit per metric ("" when none)
  std::vector<NcuLaunch> launches;
  std::vector<std::string> messages;           // ncu's ==PROF==/==WARNING==/==ERROR== lines
  std::vector<std::string> warnings;           // what the parser skipped, and why
};

// Error: no CSV header at all (ncu printed only messages: see `ncu_messages`). Malformed rows are
// skipped with a warning instead, so a run cut short still yields the launches it completed.
Result<NcuCsv> parse_ncu_csv(std::string_view text);

// ncu's lines that start with "==" (so a failed run can be explained without a CSV).
std::vector<std::string> ncu_messages(std::string_view text);

// One CSV record (RFC 4180 quoting, as ncu writes it).
std::vector<std::string> split_csv_record(std::string_view line);

// "1,234.5" -> 1234.5; "n/a", "", text -> nullopt.
std::optional<double> parse_ncu_number(std::string_view s);

// Scale factor and canonical unit: ("usecond") -> {1000, "ns"}; ("Mbyte") -> {1e6, "byte"};
// ("Gbyte/second") -> {1e9, "byte/second"}; ("Kbyte/block") -> {1000, "byte/block"}; units without a
// recognised SI prefix ("%", "SM", "register/thread") -> {1, unchanged}.
struct CanonicalUnit {
  double scale = 1;
  std::string unit;
};
CanonicalUnit canonical_unit(std::string_view unit);

}  // namespace cutegen
