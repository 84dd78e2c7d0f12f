#pragma once
// Prompt templates: Markdown files under prompts/templates/ with {{name}} placeholders that the agent
// loop fills at run time. The text lives in files so it can be read, reviewed and tuned without a
// rebuild; this loader makes the contract between the files and the code strict: a template must
// document every placeholder it uses (in a header comment), and rendering fails on a value that is
// missing or that no placeholder asks for, so a renamed placeholder can never go silently empty.
//
// File format:
//   <!--
//   One or more lines saying what the template is for.
//   {{name}}  what the loop puts there (one line per placeholder; continuation lines are indented)
//   -->
//   Body text with {{name}} placeholders ...
//
// The header comment is not part of the rendered prompt. Names are lower case: [a-z][a-z0-9_]*.
// Values are inserted verbatim and never scanned for placeholders themselves (a kernel may contain
// "{{" in an initializer).
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace cutegen {

using PromptValues = std::map<std::string, std::string, std::less<>>;

class PromptTemplate {
 public:
  // `origin` names the template in error messages (usually its path).
  static Result<PromptTemplate> parse(std::string_view text, std::string origin);
  static Result<PromptTemplate> load(const std::filesystem::path& path);

  // Distinct placeholder names in order of first use in the body.
  const std::vector<std::string>& placeholders() const { return placeholders_; }
  // name -> description, from the header.
  const std::map<std::string, std::string>& documentation() const { return documentation_; }
  const std::string& purpose() const { return purpose_; }
  const std::string& origin() const { return origin_; }

  // Every placeholder needs a value (empty is allowed); a value no placeholder uses is an error too.
  Result<std::string> render(const PromptValues& values) const;

 private:
  struct Piece {
    bool is_placeholder = false;
    std::string text;  // literal text, or the placeholder's name
  };
  std::string origin_;
  std::string purpose_;
  std::vector<Piece> pieces_;
  std::vector<std::string> placeholders_;
  std::map<std::string, std::string> documentation_;
};

// The prompts directory: $CUTEGEN_PROMPTS_DIR when set, otherwise the source tree's prompts/ (where
// this binary was configured).
std::filesystem::path prompts_dir();

// A prompt text file (rules.md, cute_guide.md, debug_guide.md, menus/gemm.md, ...) relative to `dir`.
Result<std::string> read_prompt_text(const std::filesystem::path& dir, const std::filesystem::path& relative);

// prompts/templates/<name>.md, parsed.
Result<PromptTemplate> load_prompt_template(const std::filesystem::path& dir, std::string_view name);

// The optimisation menu of a workload class: gemm, elementwise, reduction, conv, attention or other.
Result<std::string> read_optimization_menu(const std::filesystem::path& dir, std::string_view workload_class);
const std::vector<std::string>& workload_classes();

// "   12 | code" per line, the same numbering compile diagnostics use, for prompts that refer to lines.
std::string number_lines(std::string_view source);

}  // namespace cutegen
