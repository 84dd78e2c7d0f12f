#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/locations.h"
#include "compile/compile_cache.h"
#include "compile/host_pch.h"
#include "common/terminal_text.h"

namespace cutegen::cli {
namespace fs = std::filesystem;
namespace {

constexpr size_t kShown = 20;  // entries listed without --all

struct CacheArgs {
  bool prune = false;
  bool clear = false;
  bool all = false;
  std::uintmax_t max_mb = 0;  // 0: the config's cap
};

std::string size_text(std::uintmax_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < (1u << 20)) return fmt::format("{:.1f} KB", bytes / 1024.0);
  if (bytes < (1ull << 30)) return fmt::format("{:.1f} MB", bytes / double(1 << 20));
  return fmt::format("{:.2f} GB", bytes / double(1ull << 30));
}

std::string time_text(fs::file_time_type t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(
      std::chrono::time_point_cast<std::chrono::system_clock::duration>(std::chrono::file_clock::to_sys(t)));
  std::tm tm{};
  ::localtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

std::string plural(size_t n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

int run_cache(const GlobalOptions& global, const CacheArgs& args) {
  auto options = resolve_cache_options(global);
  if (!options) return fail(options.error().message);
  if (args.max_mb > 0) options->max_bytes = args.max_mb << 20;
  // Not CompileCache::open: looking at the cache must not prune it unless asked to.
  CompileCache cache(cache_root(), *options);
  HostPchStore host_pch(host_pch_dir(cache.dir()));

  if (args.clear) {
    auto cleared = host_pch.clear();
    if (!cleared) return fail(fmt::format("precompiled host headers: {}", cleared.error().message));
    print_safe(stdout, "cleared: {}\n", plural(*cleared, "precompiled host header", "precompiled host headers"));
  }
  if (args.prune || args.clear) {
    auto done = args.clear ? cache.clear() : cache.prune();
    if (!done) return fail(fmt::format("compile cache: {}", done.error().message));
    print_safe(stdout, "{}: {} evicted ({}), {} reaped{}\n", args.clear ? "cleared" : "pruned",
               plural(done->evicted, "entry", "entries"), size_text(done->freed_bytes),
               plural(done->staging_reaped, "staging directory", "staging directories"),
               done->skipped_in_use ? fmt::format(", {} in use left alone", done->skipped_in_use) : "");
  }

  auto contents = cache.contents();
  if (!contents) return fail(fmt::format("compile cache: {}", contents.error().message));
  print_safe(stdout, "compile cache {}\n", cache.dir().string());
  const auto& entries = contents->entries;
  if (!entries.empty()) print_safe(stdout, "  {:<16}  {:<13} {:>9}  {}\n", "last used", "verdict", "size", "key");
  size_t shown = args.all ? entries.size() : std::min(entries.size(), kShown);
  for (size_t i = 0; i < shown; ++i)
    print_safe(stdout, "  {:<16}  {:<13} {:>9}  {}\n", time_text(entries[i].last_used), entries[i].verdict,
               size_text(entries[i].bytes), entries[i].key.substr(0, 16));
  if (shown < entries.size()) print_safe(stdout, "  ... and {} older (--all lists them)\n", entries.size() - shown);
  double pct = options->max_bytes ? 100.0 * contents->total_bytes / options->max_bytes : 0;
  print_safe(stdout, "{}, {} of the {} MB cap ({:.0f}%, cache.max_mb{}); {} ({})\n", plural(entries.size(), "entry", "entries"),
             size_text(contents->total_bytes), options->max_bytes >> 20, pct, args.max_mb ? " overridden by --max-mb" : "",
             plural(contents->staging_dirs, "staging directory", "staging directories"),
             size_text(contents->staging_bytes));
  auto pch = host_pch.usage();
  if (!pch) return fail(fmt::format("precompiled host headers: {}", pch.error().message));
  print_safe(stdout, "{} ({}) in {}, the {} most recently used kept\n",
             plural(pch->entries, "precompiled host header", "precompiled host headers"), size_text(pch->bytes),
             host_pch.dir().string(), kHostPchEntries);
  return 0;
}

}  // namespace

Result<CacheOptions> resolve_cache_options(const GlobalOptions& global) {
  auto config = load_config(global);
  if (!config) return config.error();
  return config->cache;
}

Result<CompileCache> open_compile_cache(const GlobalOptions& global) {
  auto options = resolve_cache_options(global);
  if (!options) return options.error();
  return CompileCache::open(cache_root(), *options);
}

void add_cache_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto a = std::make_shared<CacheArgs>();
  auto* cmd = app.add_subcommand(
      "cache", "Show the compile cache (entries, total size, the cap) and prune it; compiles prune it themselves");
  auto* prune = cmd->add_flag("--prune", a->prune,
                              "remove staging directories of crashed compiles and the least recently used entries "
                              "until the cache fits its cap");
  cmd->add_option("--max-mb", a->max_mb, "the cap in megabytes, for this command (default: config cache.max_mb, else 5000)")
      ->check(CLI::Range(std::uintmax_t{1}, std::uintmax_t{1} << 30));
  auto* clear = cmd->add_flag("--clear", a->clear, "remove every entry and staging directory not in use by a running compile, and every "
                              "precompiled host header");
  clear->excludes(prune);
  cmd->add_flag("--all", a->all, fmt::format("list every entry (default: the {} most recently used)", kShown));
  cmd->callback([&global, &exit_code, a] { exit_code = run_cache(global, *a); });
}

}  // namespace cutegen::cli
