#include "common/json_text.h"

namespace cutegen {

std::string dump_json(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string clip_utf8(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t end = max_bytes >= 3 ? max_bytes - 3 : 0;
  // Back up over continuation bytes (10xxxxxx) to the start of the character that would be split.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end)) + "...";
}

std::string first_line(std::string_view text, std::size_t max_bytes) {
  return clip_utf8(text.substr(0, text.find('\n')), max_bytes);
}

}  // namespace cutegen
