// `cutegen report RUN_DIR|SUITE_DIR [-o FILE.html]`: the run's or the bench suite's HTML page
// (docs/report.md), rendered from its directory alone, so a finished, interrupted or copied run or
// suite can be reported again at any time; written outside the directory unless -o says otherwise.
#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/fs.h"
#include "report/run_page.h"
#include "report/run_view.h"
#include "report/suite_page.h"
#include "report/suite_view.h"
#include "common/terminal_text.h"

namespace cutegen::cli {
namespace fs = std::filesystem;
namespace {

// Without -o: DIR's name and .html in the current directory, never inside DIR. A run or suite directory is
// the record of what ran (optimize and bench wrote their own report.html there when they ended), and one
// that was copied, archived or made read-only can be reported without writing into it.
fs::path page_path(const std::string& dir, const std::string& out) {
  if (!out.empty()) return out;
  std::string name = fs::absolute(dir).lexically_normal().filename().string();
  if (name.empty()) name = fs::absolute(dir).lexically_normal().parent_path().filename().string();  // "DIR/"
  return fs::path(name.empty() ? "report" : name).concat(".html");
}

int suite_report(const std::string& dir, const std::string& out) {
  const fs::path target = page_path(dir, out);
  // The run pages are linked relative to where this page goes.
  auto view = load_suite_view(dir, fs::absolute(target).parent_path());
  if (!view) return fail(view.error().message);
  for (const auto& d : view->summary.skipped) print_safe(stderr, "report: skipped {}\n", d.line());
  if (auto w = write_file_atomic(target, render_suite_page(*view)); !w) return fail(w.error().message);
  print_safe(stdout, "{}\n", target.string());
  return 0;
}

int run_report_page(const std::string& dir, const std::string& out) {
  if (is_suite_dir(dir)) return suite_report(dir, out);
  auto view = load_run_view(dir);
  if (!view) return fail(view.error().message);
  const fs::path target = page_path(dir, out);
  if (auto w = write_file_atomic(target, render_run_page(*view)); !w) return fail(w.error().message);
  if (!view->finished)
    print_safe(stderr, "note: the run has not finished (its log has no stop event); the page shows it so far\n");
  print_safe(stdout, "{}\n", target.string());
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, const GlobalOptions&, int& exit_code) {
  auto dir = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "report", "Write a run's or a bench suite's self-contained HTML page (charts, steps or tasks, diffs, cost)");
  cmd->add_option("dir", *dir,
                  "a `cutegen optimize` run directory (its --out), or a `cutegen bench` suite directory (it has "
                  "suite.json)")
      ->required();
  cmd->add_option("-o,--output", *out,
                  "the HTML file to write (default: DIR's name with .html, in the current directory; never inside "
                  "DIR)");
  cmd->callback([&exit_code, dir, out] { exit_code = run_report_page(*dir, *out); });
}

}  // namespace cutegen::cli
