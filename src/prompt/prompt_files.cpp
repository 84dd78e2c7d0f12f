#include "prompt/prompt_files.h"

#include <cstdlib>
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
  PromptPaths paths{*dir, {}, {}};
  // The contract and the examples sit beside prompts/ in a checkout and in an install; with a custom
  // CUTEGEN_PROMPTS_DIR they may not, and the built-in ones are the right ones then.
  std::vector<fs::path> roots{dir->parent_path()};
  for (const fs::path& r : data_roots()) roots.push_back(r);
  std::error_code ec;
  for (const fs::path& r : roots) {
    if (paths.contract_doc.empty() && fs::is_regular_file(r / "docs" / "kernel-contract.md", ec))
      paths.contract_doc = r / "docs" / "kernel-contract.md";
    if (paths.examples.empty() && fs::is_directory(r / "examples" / "kernels", ec))
      paths.examples = r / "examples" / "kernels";
  }
  if (paths.contract_doc.empty())
    return Error{fmt::format("docs/kernel-contract.md was not found beside {} or in cutegen's source/install tree",
                             dir->string())};
  if (paths.examples.empty())
    return Error{fmt::format("examples/kernels/ was not found beside {} or in cutegen's source/install tree",
                             dir->string())};
  return paths;
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
  struct Text {
    std::string* into;
    fs::path path;
    std::string_view what;
  };
  for (const Text& t : {Text{&lib.rules_, paths.prompts / "rules.md", "the rules every prompt quotes"},
                        Text{&lib.cute_guide_, paths.prompts / "cute_guide.md", "the CuTe guide"},
                        Text{&lib.debug_guide_, paths.prompts / "debug_guide.md", "the debugging guide"},
                        Text{&lib.contract_, paths.contract_doc, "the kernel contract"}}) {
    auto text = read_required(t.path, t.what);
    if (!text.ok()) return text.error();
    *t.into = std::move(*text);
  }
  for (WorkloadClass c : all_workload_classes()) {
    auto menu = read_required(paths.prompts / fmt::format("menu_{}.md", to_string(c)),
                              fmt::format("the {} optimisation menu", to_string(c)));
    if (!menu.ok()) return menu.error();
    lib.menus_[c] = std::move(*menu);
  }
  for (std::string_view name : example_files()) {
    std::string file(name);
    auto source = read_required(paths.examples / file, "a library kernel the prompts show");
    if (!source.ok()) return source.error();
    lib.examples_.insert_or_assign(file, ExampleKernel{file, std::move(*source)});
  }
  for (PromptKind k : kAllPromptKinds) {
    auto t = PromptTemplate::load(paths.prompts / fmt::format("{}.md", to_string(k)));
    if (!t.ok()) return t.error();
    lib.templates_.emplace(k, std::move(*t));
  }
  return lib;
}

}  // namespace cutegen
