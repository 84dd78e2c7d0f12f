#include "prompt/prompt_files.h"

#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "common/fs.h"

// Baked in by CMake (src/CMakeLists.txt) so a built tree finds its prompts without any environment.
#ifndef CUTEGEN_SOURCE_ROOT
#define CUTEGEN_SOURCE_ROOT ""
#endif

namespace cutegen {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMarkerFile = "rules.md";  // present in every prompts directory

bool is_prompts_dir(const fs::path& dir) {
  std::error_code ec;
  return !dir.empty() && fs::is_regular_file(dir / kMarkerFile, ec);
}

// <bin>/../share/cutegen: where `cmake --install` puts the data files next to an installed binary.
fs::path installed_data_root() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return {};
  return exe.parent_path().parent_path() / "share" / "cutegen";
}

// Data roots in the order they are searched (the source tree first: a developer's build uses the
// files being edited).
std::vector<fs::path> data_roots() {
  std::vector<fs::path> roots;
  if (fs::path src = CUTEGEN_SOURCE_ROOT; !src.empty()) roots.push_back(src);
  if (fs::path installed = installed_data_root(); !installed.empty()) roots.push_back(installed);
  return roots;
}

Result<std::string> read_required(const fs::path& path, std::string_view what) {
  auto text = read_file(path);
  if (!text.ok()) {
    return Error{fmt::format("cannot read {} ({}): {}; set CUTEGEN_PROMPTS_DIR to a complete prompts/ directory",
                             path.string(), what, text.error().message)};
  }
  if (text->find_first_not_of(" \t\r\n") == std::string::npos)
    return Error{fmt::format("{} ({}) is empty", path.string(), what)};
  return text;
}

}  // namespace

Result<fs::path> prompts_dir() {
  if (const char* env = std::getenv("CUTEGEN_PROMPTS_DIR"); env && *env) {
    if (!is_prompts_dir(env)) {
      return Error{fmt::format("CUTEGEN_PROMPTS_DIR={} has no {}; point it at cutegen's prompts/ directory or unset it",
                               env, kMarkerFile)};
    }
    return fs::path(env);
  }
  std::string tried;
  for (const fs::path& root : data_roots()) {
    if (is_prompts_dir(root / "prompts")) return root / "prompts";
    tried += fmt::format("{}{}", tried.empty() ? "" : ", ", (root / "prompts").string());
  }
  return Error{fmt::format("cutegen's prompt files were not found (looked in: {}); set CUTEGEN_PROMPTS_DIR to the "
                           "prompts/ directory of a cutegen checkout",
                           tried.empty() ? "nowhere: no source tree was baked in and the binary's path is unknown"
                                         : tried)};
}

Result<PromptPaths> locate_prompt_paths() {
  auto dir = prompts_dir();
  if (!dir.ok()) return dir.error();
  PromptPaths paths{*dir, {}};
  // The examples sit beside prompts/ in a checkout and in an install; with a custom
  // CUTEGEN_PROMPTS_DIR they may not, and the built-in ones are the right ones then.
  std::vector<fs::path> roots{dir->parent_path()};
  for (const fs::path& r : data_roots()) roots.push_back(r);
  std::error_code ec;
  for (const fs::path& r : roots) {
    if (fs::is_directory(r / "library", ec)) {
      paths.examples = r / "library";
      break;
    }
  }
  if (paths.examples.empty())
    return Error{fmt::format("library/ was not found beside {} or in cutegen's source/install tree",
                             dir->string())};
  return paths;
}

Result<std::string> keep_marked_blocks(std::string_view guide, const std::function<Result<bool>(std::string_view)>& wants,
                                       std::string_view origin) {
  constexpr std::string_view kOpen = "<!-- for:", kClose = "-->";
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0; pos < guide.size();) {
    std::size_t nl = guide.find('\n', pos);
    std::size_t end = nl == std::string_view::npos ? guide.size() : nl + 1;
    lines.push_back(guide.substr(pos, end - pos));
    pos = end;
  }
  auto starts = [](std::string_view line, std::string_view prefix) { return line.substr(0, prefix.size()) == prefix; };
  std::string out;
  for (std::size_t i = 0; i < lines.size();) {
    std::string_view line = lines[i];
    if (!starts(line, kOpen)) {
      out.append(line);
      ++i;
      continue;
    }
    std::size_t close = line.find(kClose);
    if (close == std::string_view::npos)
      return Error{fmt::format("{}:{}: a `<!-- for: ... -->` marker must close on its own line", origin, i + 1)};
    bool wanted = false;
    std::string_view names = line.substr(kOpen.size(), close - kOpen.size());
    for (std::size_t p = 0; p < names.size();) {
      std::size_t q = names.find(' ', p);
      if (q == std::string_view::npos) q = names.size();
      if (q > p) {
        auto w = wants(names.substr(p, q - p));
        if (!w.ok()) return Error{fmt::format("{}:{}: {}", origin, i + 1, w.error().message)};
        wanted = wanted || *w;
      }
      p = q + 1;
    }
    const std::size_t first = i + 1;
    const bool section = first < lines.size() && starts(lines[first], "## ");
    if (!section && !(first < lines.size() && starts(lines[first], "- ")))
      return Error{fmt::format("{}:{}: a `<!-- for: ... -->` marker must stand right before a `## ` section or a `- ` "
                               "item",
                               origin, i + 1)};
    // The block runs to the next section (and, for an item, the next item or marker); code fences
    // inside it may hold lines that look like either.
    std::size_t j = first + 1;
    bool in_fence = false;
    for (; j < lines.size(); ++j) {
      std::string_view l = lines[j];
      if (starts(l, "```")) in_fence = !in_fence;
      if (in_fence) continue;
      if (starts(l, "## ") || (!section && (starts(l, "- ") || starts(l, kOpen)))) break;
      if (section && starts(l, kOpen) && j + 1 < lines.size() && starts(lines[j + 1], "## ")) break;
    }
    // A kept block goes on through the loop, so the markers inside a kept section still apply.
    i = wanted ? first : j;
  }
  return out;
}

Result<std::string> guide_for_class(std::string_view guide, WorkloadClass workload, std::string_view origin) {
  return keep_marked_blocks(
      guide,
      [workload](std::string_view name) -> Result<bool> {
        auto c = parse_workload_class(name);
        if (!c.ok()) return c.error();
        return *c == workload;
      },
      origin);
}

Result<std::string> rules_for_kind(std::string_view rules, PromptKind kind, std::string_view origin) {
  return keep_marked_blocks(
      rules,
      [kind](std::string_view name) -> Result<bool> {
        auto k = parse_prompt_kind(name);
        if (!k.ok()) return k.error();
        return *k == kind;
      },
      origin);
}

Result<PromptKind> parse_prompt_kind(std::string_view name) {
  for (PromptKind k : kAllPromptKinds)
    if (to_string(k) == name) return k;
  return Error{fmt::format("unknown prompt kind '{}' (expected synthesis, diagnose, repair, optimize or restart)", name)};
}

std::string_view to_string(PromptKind k) {
  switch (k) {
    case PromptKind::synthesis: return "synthesis";
    case PromptKind::diagnose: return "diagnose";
    case PromptKind::repair: return "repair";
    case PromptKind::optimize: return "optimize";
    case PromptKind::restart: return "restart";
  }
  return "?";
}

const ExampleKernel& PromptLibrary::example(std::string_view file) const {
  auto it = examples_.find(file);
  if (it == examples_.end()) throw std::out_of_range("example kernel not loaded: " + std::string(file));
  return it->second;
}

Result<PromptLibrary> PromptLibrary::load(const PromptPaths& paths) {
  PromptLibrary lib;
  lib.paths_ = paths;
  const fs::path guide_path = paths.prompts / "cute_guide.md";
  auto guide = read_required(guide_path, "the CuTe guide");
  if (!guide.ok()) return guide.error();
  auto debug = read_required(paths.prompts / "debug_guide.md", "the debugging guide");
  if (!debug.ok()) return debug.error();
  lib.debug_guide_ = std::move(*debug);
  for (WorkloadClass c : all_workload_classes()) {
    auto menu = read_required(paths.prompts / fmt::format("menu_{}.md", to_string(c)),
                              fmt::format("the {} optimisation menu", to_string(c)));
    if (!menu.ok()) return menu.error();
    lib.menus_[c] = std::move(*menu);
    auto trimmed = guide_for_class(*guide, c, guide_path.string());
    if (!trimmed.ok()) return trimmed.error();
    lib.cute_guides_[c] = std::move(*trimmed);
  }
  for (std::string_view name : example_files()) {
    std::string file(name);
    auto source = read_required(paths.examples / file, "a library kernel the prompts show");
    if (!source.ok()) return source.error();
    lib.examples_.insert_or_assign(file, ExampleKernel{file, std::move(*source)});
  }
  for (auto [into, name] : {std::pair{&lib.rules_, "rules"}, std::pair{&lib.system_, "system"},
                            std::pair{&lib.example_intro_, "example"}, std::pair{&lib.candidate_share_, "candidate"}}) {
    auto t = PromptTemplate::load(paths.prompts / fmt::format("{}.md", name));
    if (!t.ok()) return t.error();
    *into = std::move(*t);
  }
  for (PromptKind k : kAllPromptKinds) {
    auto t = PromptTemplate::load(paths.prompts / fmt::format("{}.md", to_string(k)));
    if (!t.ok()) return t.error();
    lib.templates_.emplace(k, std::move(*t));
  }
  return lib;
}

}  // namespace cutegen
