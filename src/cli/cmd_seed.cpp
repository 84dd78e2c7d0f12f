// `cutegen seed`: the kernel cutegen writes for a problem without an LLM, or why it has none
// (docs/seed.md). Needs no GPU: the worker traces the problem on meta tensors.
#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/seed_trace.h"
#include "common/exit_codes.h"
#include "common/fs.h"
#include "common/terminal_text.h"

namespace cutegen::cli {
namespace fs = std::filesystem;
namespace {

struct SeedArgs {
  std::string problem;
  std::string out;
  std::string list;
  std::string precision = to_string(kDefaultPrecision);
};

// KernelBench names start with their number: 2_ before 10_.
bool natural_less(const fs::path& a, const fs::path& b) {
  auto lead = [](const std::string& s) {
    std::size_t i = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i == 0 ? -1L : std::stol(s.substr(0, std::min<std::size_t>(i, 12)));
  };
  const std::string sa = a.filename().string(), sb = b.filename().string();
  long na = lead(sa), nb = lead(sb);
  return na != nb ? na < nb : sa < sb;
}

int run_list(const SeedArgs& args) {
  std::error_code ec;
  std::vector<fs::path> problems;
  for (const auto& e : fs::directory_iterator(args.list, ec))
    if (e.is_regular_file() && e.path().extension() == ".py") problems.push_back(e.path());
  if (ec) return fail(fmt::format("--list {}: {}", args.list, ec.message()));
  if (problems.empty()) return fail(fmt::format("--list {}: no .py problem files there", args.list));
  std::sort(problems.begin(), problems.end(), natural_less);
  // With -o, every seed is also written as OUT/<problem>.cu: a directory's seeds with one worker (the
  // seed golden test, scripts/seed_golden.py, reads them).
  if (!args.out.empty()) {
    fs::create_directories(args.out, ec);
    if (ec) return fail(fmt::format("-o {}: {}", args.out, ec.message()));
  }
  auto worker = TraceWorker::start();
  if (!worker) return fail(worker.error().message);
  int matched = 0;
  for (const auto& p : problems) {
    auto outcome = worker->seed(p, parse_precision(args.precision).value());
    std::string line;
    if (!outcome) {
      line = "error: " + outcome.error().message;
    } else if (outcome->found()) {
      ++matched;
      line = outcome->match.description();
      if (!args.out.empty()) {
        const fs::path kernel = fs::path(args.out) / p.filename().replace_extension(".cu");
        if (auto w = write_file_atomic(kernel, outcome->source); !w) return fail(w.error().message);
      }
    } else {
      line = outcome->match.no_seed_line();
    }
    print_safe(stdout, "{}: {}\n", terminal_safe(p.filename().string()), line);
    std::fflush(stdout);
  }
  print_safe(stdout, "{} of {} problems have a seed\n", matched, problems.size());
  return 0;
}

int run_seed(const SeedArgs& args) {
  if (!args.list.empty()) {
    if (!args.problem.empty()) return fail("--list DIR takes no problem file");
    return run_list(args);
  }
  if (args.problem.empty()) return fail("give a problem file, or --list DIR");
  auto worker = TraceWorker::start();
  if (!worker) return fail(worker.error().message);
  auto outcome = worker->seed(args.problem, parse_precision(args.precision).value());
  if (!outcome) return fail(outcome.error().message);
  if (!outcome->found()) {
    (void)fail(outcome->match.no_seed_line());
    return kExitNoSeed;  // as optimize without an LLM exits for the same outcome (common/exit_codes.h)
  }
  print_safe(stderr, "seed: {}\n", outcome->match.description());
  if (args.out.empty()) {
    print_safe(stdout, "{}", outcome->source);
    return 0;
  }
  if (auto w = write_file_atomic(args.out, outcome->source); !w) return fail(w.error().message);
  print_safe(stderr, "wrote {}\n", args.out);
  return 0;
}

}  // namespace

void add_seed_command(CLI::App& app, const GlobalOptions&, int& exit_code) {
  auto a = std::make_shared<SeedArgs>();
  auto* cmd = app.add_subcommand(
      "seed", "Write the kernel cutegen makes for a problem without an LLM (a matched operator pattern), or say why "
              "there is none; needs no GPU");
  cmd->add_option("problem", a->problem, "KernelBench-format problem file")->check(CLI::ExistingFile);
  cmd->add_option("-o,--out", a->out,
                  "write the kernel to this file (default: stdout); with --list, a directory that gets every seed "
                  "as <problem>.cu");
  cmd->add_option("--list", a->list, "trace every .py problem in DIR and print, per problem, its seed or why none")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--precision", a->precision,
                  "the policy the seed will be judged under, as `optimize --precision`: strict (fp32 accuracy), tf32 "
                  "or bf16; a looser one lets the library convolution's TMA path run one TF32 or bf16 product per "
                  "term")
      ->check(CLI::IsMember(precision_names()))
      ->capture_default_str();
  cmd->callback([&exit_code, a] { exit_code = run_seed(*a); });
}

}  // namespace cutegen::cli
