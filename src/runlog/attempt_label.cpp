#include "runlog/attempt_label.h"

#include <charconv>

#include <fmt/format.h>

namespace cutegen {
namespace {

// A whole non-negative number that is all of `s`.
std::optional<int> whole_number(std::string_view s) {
  int n = 0;
  if (s.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n < 0) return std::nullopt;
  return n;
}

// Takes `prefix` and the number after it off the front of `s` ("step12-repair1" -> 12, "-repair1").
std::optional<int> take_numbered(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::size_t end = prefix.size();
  while (end < s.size() && s[end] >= '0' && s[end] <= '9') ++end;
  auto n = whole_number(s.substr(prefix.size(), end - prefix.size()));
  if (n) s.remove_prefix(end);
  return n;
}

}  // namespace

std::string_view to_string(AttemptStage s) {
  switch (s) {
    case AttemptStage::seed: return "seed";
    case AttemptStage::synthesis: return "synthesis";
    case AttemptStage::restart: return "restart";
    case AttemptStage::step: return "step";
    case AttemptStage::tune: return "tune";
  }
  return "?";
}

std::optional<AttemptStage> parse_attempt_stage(std::string_view word) {
  for (AttemptStage s : {AttemptStage::seed, AttemptStage::synthesis, AttemptStage::restart, AttemptStage::step,
                         AttemptStage::tune})
    if (to_string(s) == word) return s;
  return std::nullopt;
}

std::string AttemptLabel::text() const {
  std::string s(to_string(stage));
  if (stage == AttemptStage::step || stage == AttemptStage::tune) s += std::to_string(step);
  if (candidate > 0) s += fmt::format("-c{}", candidate);
  if (repair > 0) s += fmt::format("-repair{}", repair);
  return s;
}

std::optional<AttemptLabel> AttemptLabel::parse(std::string_view text) {
  AttemptLabel l;
  std::string_view rest = text;
  if (auto n = take_numbered(rest, "step")) {
    l.stage = AttemptStage::step;
    l.step = *n;
    if (auto c = take_numbered(rest, "-c")) l.candidate = *c;
  } else if (auto t = take_numbered(rest, "tune")) {
    l.stage = AttemptStage::tune;
    l.step = *t;
    return rest.empty() ? std::optional<AttemptLabel>(l) : std::nullopt;  // a tuning has no repairs
  } else {
    std::string_view word = rest.substr(0, rest.find('-'));
    auto stage = parse_attempt_stage(word);
    if (!stage || *stage == AttemptStage::step || *stage == AttemptStage::tune) return std::nullopt;
    l.stage = *stage;
    rest.remove_prefix(word.size());
  }
  if (auto r = take_numbered(rest, "-repair")) l.repair = *r;
  if (!rest.empty()) return std::nullopt;
  if (l.stage == AttemptStage::seed && l.repair > 0) return std::nullopt;  // the seed is judged once, as it is
  return l;
}

}  // namespace cutegen
