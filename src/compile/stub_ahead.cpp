#include "compile/stub_ahead.h"

#include <regex>
#include <vector>

#include <fmt/format.h>

namespace cutegen {
namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      if (pos < text.size()) lines.push_back(text.substr(pos));
      break;
    }
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

// fatbinary writes each data line as a C string: ".quad 0x...,0x...\n"
bool is_data_line(std::string_view line) { return line.starts_with("\".quad ") && line.ends_with("\\n\""); }

}  // namespace

const std::string& fatbin_placeholder() {
  static const std::string text = fmt::format(
      "#ifndef __SKIP_INTERNAL_FATBINARY_HEADERS\n"
      "#include \"fatbinary_section.h\"\n"
      "#endif\n"
      "#define __CUDAFATBINSECTION  \".nvFatBinSegment\"\n"
      "#define __CUDAFATBINDATASECTION  \".nv_fatbin\"\n"
      "asm(\n"
      "\".section .nv_fatbin, \\\"a\\\"\\n\"\n"
      "\".align 8\\n\"\n"
      "\"fatbinData:\\n\"\n"
      "\"{}\\n\"\n"
      "\".text\\n\");\n"
      "#ifdef __cplusplus\n"
      "extern \"C\" {{\n"
      "#endif\n"
      "extern const unsigned long long fatbinData[];\n"
      "#ifdef __cplusplus\n"
      "}}\n"
      "#endif\n"
      "#ifdef __cplusplus\n"
      "extern \"C\" {{\n"
      "#endif\n"
      "static const __fatBinC_Wrapper_t __fatDeviceText __attribute__ ((aligned (8))) __attribute__ ((section "
      "(__CUDAFATBINSECTION)))= \n"
      "\t{{ 0x466243b1, 1, fatbinData, 0 }};\n"
      "#ifdef __cplusplus\n"
      "}}\n"
      "#endif\n",
      kFatbinDataMarker);
  return text;
}

Result<std::string> placeholder_of(std::string_view embedded_fatbin_c) {
  std::string out;
  int runs = 0;
  bool in_data = false;
  for (std::string_view line : lines_of(embedded_fatbin_c)) {
    if (is_data_line(line)) {
      if (!in_data) out += fmt::format("\"{}\\n\"\n", kFatbinDataMarker), ++runs;
      in_data = true;
      continue;
    }
    in_data = false;
    out.append(line);
    out += '\n';
  }
  if (runs != 1) return Error{fmt::format("the fatbinary's C form has {} runs of data lines, not one", runs)};
  static const std::regex sized(R"(fatbinData\[[0-9]+\])");
  return std::regex_replace(out, sized, "fatbinData[]");
}

Result<std::string> splice_fatbin(std::string_view assembly, std::string_view embedded_fatbin_c) {
  std::string data;
  for (std::string_view line : lines_of(embedded_fatbin_c))
    if (is_data_line(line)) data.append(line.substr(1, line.size() - 4)) += '\n';  // less the quotes and "\n"
  if (data.empty()) return Error{"the fatbinary's C form has no data lines"};
  std::string out;
  int markers = 0;
  for (std::string_view line : lines_of(assembly)) {
    if (line == kFatbinDataMarker) {
      ++markers;
      out += data;
      continue;
    }
    out.append(line);
    out += '\n';
  }
  if (markers != 1)
    return Error{fmt::format("the host assembly has {} lines '{}', not the one the placeholder put there", markers,
                             kFatbinDataMarker)};
  if (!assembly.empty() && assembly.back() != '\n') out.pop_back();
  return out;
}

}  // namespace cutegen
