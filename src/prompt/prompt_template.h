#pragma once
// Prompt templates: Markdown files in prompts/ with {{name}} placeholders that the agent
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

}  // namespace cutegen
