#include "bench/slurm.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "common/fs.h"

namespace cutegen::bench {
namespace fs = std::filesystem;

std::vector<std::string> strip_submission_options(const std::vector<std::string>& argv) {
  static const std::set<std::string> flags{"--slurm", "--dry-run", "--quiet"};
  static const std::set<std::string> with_value{"--shards", "--sbatch-arg", "--gres", "--shard"};
  std::vector<std::string> out;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (flags.count(a)) continue;
    if (with_value.count(a)) {
      ++i;  // and its value
      continue;
    }
    auto eq = a.find('=');
    if (eq != std::string::npos && a.rfind("--", 0) == 0 && (with_value.count(a.substr(0, eq)) || flags.count(a.substr(0, eq))))
      continue;
    out.push_back(a);
  }
  return out;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string sbatch_script(const SlurmPlan& p) {
  std::string s = "#!/bin/bash\n";
  s += "# Written by `cutegen bench --slurm`: one array task per shard, each running the suite's command on its\n"
       "# shard into the same suite directory. `cutegen bench status` / `report` on that directory merge them.\n";
  s += "#SBATCH --job-name=cutegen-bench\n";
  s += fmt::format("#SBATCH --array=0-{}\n", p.shards - 1);
  s += fmt::format("#SBATCH --output={}\n", (p.suite_dir / "slurm" / "shard-%a.out").string());
  s += fmt::format("#SBATCH --chdir={}\n", p.workdir.string());
  if (!p.gres.empty()) s += fmt::format("#SBATCH --gres={}\n", p.gres);
  for (const auto& a : p.sbatch_args) s += fmt::format("#SBATCH {}\n", a);
  s += "set -euo pipefail\n";
  std::string cmd;
  for (const auto& a : p.command) cmd += (cmd.empty() ? "" : " ") + shell_quote(a);
  s += fmt::format("exec {} --shard \"${{SLURM_ARRAY_TASK_ID}}/{}\" --quiet\n", cmd, p.shards);
  return s;
}

Result<std::string> submit(ProcessRunner& runner, const fs::path& script) {
  ProcessSpec spec;
  spec.argv = {"sbatch", "--parsable", script.string()};
  spec.environment = ProcessSpec::Environment::inherit;  // Slurm's own settings (SLURM_CONF, ...) and the job's
  spec.timeout = std::chrono::seconds(120);
  auto r = runner.run(spec);
  if (!r) return Error{fmt::format("cannot run sbatch ({}); is Slurm installed here?", r.error().message)};
  if (!r->succeeded()) {
    std::string err = r->err.empty() ? r->out : r->err;
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    std::replace(err.begin(), err.end(), '\n', ' ');
    return Error{fmt::format("sbatch failed ({}): {}", r->describe_end(), err)};
  }
  std::string id = r->out.substr(0, r->out.find_first_of(";\n"));
  return id;
}

Result<std::vector<std::string>> own_command_line() {
  auto text = read_file("/proc/self/cmdline");
  if (!text) return text.error();
  std::vector<std::string> argv;
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\0', start);
    if (end == std::string::npos) end = text->size();
    argv.push_back(text->substr(start, end - start));
    start = end + 1;
  }
  std::error_code ec;
  auto self = fs::read_symlink("/proc/self/exe", ec);
  if (ec || argv.empty()) return Error{"cannot read this process's command line from /proc/self"};
  argv[0] = self.string();
  return argv;
}

}  // namespace cutegen::bench
