#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace cutegen {

// JSON text for files and the wire. Much of what cutegen writes quotes text it does not control
// (compiler logs, what a kernel printed, LLM answers), which need not be UTF-8; plain
// nlohmann::json::dump throws on such bytes, so they become U+FFFD instead.
std::string dump_json(const nlohmann::json& j, int indent = -1);

// At most max_bytes of text, cut back to a UTF-8 character boundary so a multi-byte character is
// never split (a split one is invalid UTF-8 downstream). Appends "..." when it cut.
std::string clip_utf8(std::string_view text, std::size_t max_bytes);

// The text up to its first newline, clipped like clip_utf8: one line of a message for a progress line
// or a report, where the rest would break the layout.
std::string first_line(std::string_view text, std::size_t max_bytes = std::string_view::npos);

// The value, or JSON null where there is none: how records write a figure that was not measured.
template <class T>
nlohmann::json value_or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace cutegen
