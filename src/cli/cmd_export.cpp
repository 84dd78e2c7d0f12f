// `cutegen export`: a kernel as something its users run where they are (docs/export.md) -- a KernelBench
// submission (one self-contained model_new.py), an installable op package, or the torch op module over
// the judged kernel.so -- from a run directory (its best/), or from a problem file and a kernel without a
// GPU (the worker describes the problem on meta tensors).
#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/judge_stack.h"
#include "cli/seed_trace.h"
#include "common/fs.h"
#include "common/process.h"
#include "common/terminal_text.h"
#include "compile/nvcc_compiler.h"
#include "report/best_dir.h"
#include "report/kernelbench_export.h"
#include "report/op_package.h"
#include "report/torch_export.h"

namespace cutegen::cli {
namespace fs = std::filesystem;
namespace {

struct ExportArgs {
  std::vector<std::string> sources;  // RUN_DIR, or PROBLEM KERNEL
  std::string format = "kernelbench";
  std::string out;
  std::string eval_path;
  std::string arch;
  bool force = false;
};

// What an export is made from.
struct Exportable {
  ExportSource source;
  fs::path library;  // the judged kernel.so of a run; empty for a problem and a kernel
};

Result<Evaluation> read_passed_evaluation(const fs::path& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  auto json = nlohmann::json::parse(*text, nullptr, false);
  if (json.is_discarded()) return Error{fmt::format("{} is not JSON", path.string())};
  auto e = Evaluation::from_json(json);
  if (!e) return Error{fmt::format("{}: {}", path.string(), e.error().message)};
  if (!e->passed())
    return Error{fmt::format("{} records a kernel that did not pass ({}); only a passing kernel is exported", path.string(),
                             e->verdict_line())};
  if (!e->problem) return Error{fmt::format("{} has no problem description to export for", path.string())};
  return *e;
}

// best/ of a run directory, or the directory itself when it is a best/.
Result<fs::path> best_dir_of(const fs::path& dir) {
  if (fs::exists(dir / "best" / "eval.json")) return dir / "best";
  if (fs::exists(dir / "eval.json") && fs::exists(dir / "kernel.cu")) return dir;
  if (fs::exists(dir / ".cutegen-run") || fs::exists(dir / "events.jsonl"))
    return Error{fmt::format("{} is a cutegen run with no best/ yet: no kernel of it has passed the judge", dir.string())};
  return Error{fmt::format("{} is neither a run directory (with best/) nor a best/ directory; to export a kernel "
                           "for a problem give both: cutegen export PROBLEM.py KERNEL.cu",
                           dir.string())};
}

Result<Exportable> from_run(const fs::path& dir, const CompileOptions& options) {
  auto best = best_dir_of(dir);
  if (!best) return best.error();
  auto evaluation = read_passed_evaluation(*best / "eval.json");
  if (!evaluation) return evaluation.error();
  auto kernel = read_file(*best / "kernel.cu");
  if (!kernel) return kernel.error();
  auto problem = read_file(*best / "problem.py");
  if (!problem) return problem.error();
  auto build = kernel_build_from(options);
  if (!build) return build.error();
  return Exportable{{.kernel_source = *kernel,
                     .problem_source = *problem,
                     .problem = *evaluation->problem,
                     .verified_by = verified_by_line(*evaluation),
                     .build = *build,
                     .other_shapes = other_verified_shapes(*evaluation)},
                    *best / "kernel.so"};
}

// The same call: names, kinds, dtypes, shapes and scalar values of every argument and output.
Status same_call(const ProblemFacts& recorded, const ProblemFacts& here, const std::string& eval_path) {
  auto describe = [](const std::vector<ValueFacts>& values) {
    std::string s;
    for (const auto& v : values) {
      s += fmt::format("{} {} (", v.name, v.dtype);
      for (auto d : v.shape) s += std::to_string(d) + ",";
      s += ") " + (v.kind == ValueFacts::Kind::scalar ? v.value : std::string()) + "; ";
    }
    return s;
  };
  for (auto [what, a, b] : {std::tuple{"inputs", &recorded.inputs, &here.inputs},
                            std::tuple{"parameters", &recorded.params, &here.params},
                            std::tuple{"outputs", &recorded.outputs, &here.outputs}})
    if (describe(*a) != describe(*b))
      return Error{fmt::format("{} was recorded for another call: its {} are {}the problem's are {}", eval_path, what,
                               describe(*a), describe(*b))};
  return ok_status();
}

Result<Exportable> from_files(const fs::path& problem, const fs::path& kernel, const std::string& eval_path,
                              const CompileOptions& options) {
  auto kernel_source = read_file(kernel);
  if (!kernel_source) return kernel_source.error();
  auto problem_source = read_file(problem);
  if (!problem_source) return problem_source.error();
  auto worker = TraceWorker::start();
  if (!worker) return worker.error();
  auto facts = worker->describe(problem);
  if (!facts) return facts.error();
  auto build = kernel_build_from(options);
  if (!build) return build.error();
  Exportable out{{.kernel_source = *kernel_source, .problem_source = *problem_source, .problem = *facts,
                  .build = *build},
                 {}};
  if (eval_path.empty()) {
    out.source.verified_by = fmt::format(
        "Not verified by this export: it was made from {} and {} without a judge's record; `cutegen eval` "
        "verifies it on a GPU (then export with --eval, or export its run directory).",
        problem.filename().string(), kernel.filename().string());
    print_safe(stderr, "note: {} is exported without a record of the judge passing it (--eval EVAL.json gives one)\n",
               kernel.filename().string());
    return out;
  }
  auto evaluation = read_passed_evaluation(eval_path);
  if (!evaluation) return evaluation.error();
  if (auto same = same_call(*evaluation->problem, *facts, eval_path); !same) return same.error();
  out.source.problem = *evaluation->problem;
  out.source.verified_by = verified_by_line(*evaluation);
  out.source.other_shapes = other_verified_shapes(*evaluation);
  if (!evaluation->library.empty() && fs::exists(evaluation->library)) out.library = evaluation->library;
  return out;
}

// The out directory: missing or empty, or --force.
Status prepare_out(const fs::path& out, bool force) {
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    return Error{fmt::format("--out {} is a file; give a directory", out.string())};
  if (fs::exists(out, ec) && !fs::is_empty(out, ec) && !force)
    return Error{fmt::format("--out {} is not empty; give another directory, or --force to write over the files "
                             "this export makes",
                             out.string())};
  fs::create_directories(out, ec);
  if (ec) return Error{fmt::format("--out {}: {}", out.string(), ec.message())};
  return ok_status();
}

// --format op from a problem and a kernel: the judge's compiler builds kernel.so (nvcc, no GPU).
Result<fs::path> compile_library(const GlobalOptions& global, const CompileOptions& options, const fs::path& kernel,
                                 const std::string& source) {
  auto sandbox = sandbox_path();
  if (!sandbox) return sandbox.error();
  PosixProcessRunner runner;
  auto toolchain = probe_toolchain(runner, options);
  if (!toolchain) return toolchain.error();
  auto cache = open_compile_cache(global);
  if (!cache) return cache.error();
  NvccCompiler compiler(runner, options, *toolchain, std::move(*cache), *sandbox);
  print_safe(stderr, "compiling {} for {} ...\n", kernel.filename().string(), options.arch);
  auto outcome = compiler.compile({source, kernel.filename().string()});
  if (!outcome) return outcome.error();
  if (!outcome->ok()) return Error{fmt::format("{} does not compile for the op module: {}", kernel.filename().string(),
                                               outcome->feedback())};
  return outcome->library;
}

Status write_files(const fs::path& out, const std::vector<PackageFile>& files) {
  for (const auto& f : files)
    if (auto w = write_file_atomic(out / f.path, f.text); !w) return w;
  return ok_status();
}

int run_export(const GlobalOptions& global, const ExportArgs& args) {
  if (args.sources.empty() || args.sources.size() > 2)
    return fail("give a run directory, or a problem file and a kernel: cutegen export RUN_DIR | PROBLEM.py KERNEL.cu");
  if (args.sources.size() == 1 && !args.eval_path.empty())
    return fail("--eval goes with PROBLEM.py KERNEL.cu; a run directory has its own record (best/eval.json)");
  std::error_code ec;
  if (!args.out.empty() && !args.force && fs::exists(args.out, ec) && !fs::is_empty(args.out, ec))
    return fail(fmt::format("--out {} is not empty; give another directory, or --force to write over the files "
                            "this export makes",
                            args.out));
  auto options = resolve_compile_options(global, args.arch);
  if (!options) return fail(options.error().message);
  if (args.sources.size() == 1 && args.arch.empty()) {
    // The target the run was judged on (its config.json), not today's configuration.
    auto best = best_dir_of(args.sources[0]);
    if (!best) return fail(best.error().message);
    for (const auto& config : {*best / ".." / "config.json", *best / "config.json"}) {
      auto text = read_file(config);
      if (!text) continue;
      auto json = nlohmann::json::parse(*text, nullptr, false);
      if (json.is_object() && json.contains("arch") && json["arch"].is_string()) {
        options->arch = json["arch"].get<std::string>();
        break;
      }
    }
  }
  auto exportable = args.sources.size() == 1 ? from_run(args.sources[0], *options)
                                             : from_files(args.sources[0], args.sources[1], args.eval_path, *options);
  if (!exportable) return fail(exportable.error().message);
  const ExportSource& source = exportable->source;
  const std::string op = op_identifier(source.problem.name.empty() ? "kernel" : source.problem.name);
  const fs::path out = args.out.empty() ? fs::path(fmt::format("{}-{}", op, args.format)) : fs::path(args.out);

  std::vector<PackageFile> files;
  std::string next_step;
  if (args.format == "kernelbench") {
    auto file = make_kernelbench_file(source);
    if (!file) return fail(file.error().message);
    if (!file->note.empty()) print_safe(stderr, "note: {}\n", file->note);
    files.push_back({"model_new.py", file->text});
    next_step = fmt::format("KernelBench: eval_kernel_against_ref(ref_src, open(\"{}\").read(), backend=\"cute\")",
                            (out / "model_new.py").string());
  } else if (args.format == "package") {
    auto package = make_op_package(source);
    if (!package) return fail(package.error().message);
    files = package->files;
    next_step = fmt::format("pip install --no-build-isolation {}   then: import {}", out.string(), package->module_name);
  } else if (args.format == "op") {
    auto exported = make_torch_export(source.problem);
    if (!exported) return fail(exported.error().message);
    fs::path library = exportable->library;
    if (library.empty() || !fs::exists(library)) {
      auto built = compile_library(global, *options, args.sources.back(), source.kernel_source);
      if (!built) return fail(built.error().message);
      library = *built;
    }
    if (auto r = prepare_out(out, args.force); !r) return fail(r.error().message);
    if (auto r = export_library(library, out / "kernel.so"); !r) return fail(r.error().message);
    files = {{fmt::format("{}_op.py", op), exported->op_module}, {"kernel.cu", source.kernel_source}};
    next_step = fmt::format("import sys; sys.path.insert(0, \"{}\"); import {}_op", out.string(), op);
  } else {
    return fail(fmt::format("--format {}: choose kernelbench, package or op", args.format));
  }
  if (args.format != "op")
    if (auto r = prepare_out(out, args.force); !r) return fail(r.error().message);
  if (auto r = write_files(out, files); !r) return fail(r.error().message);
  print_safe(stderr, "{}\n", source.verified_by);
  for (const auto& f : files) print_safe(stdout, "{}\n", (out / f.path).string());
  if (args.format == "op") print_safe(stdout, "{}\n", (out / "kernel.so").string());
  print_safe(stderr, "next: {}\n", next_step);
  return 0;
}

}  // namespace

void add_export_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto a = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand(
      "export",
      "Export a kernel for its users (docs/export.md): a self-contained KernelBench submission, an installable "
      "torch op package, or the op module over the judged kernel.so; from a run directory, or from a problem "
      "and a kernel (no GPU needed)");
  cmd->add_option("sources", a->sources, "RUN_DIR (or its best/), or PROBLEM.py KERNEL.cu")->required()->expected(1, 2);
  cmd->add_option("--format", a->format,
                  "kernelbench: one model_new.py for KernelBench's eval_kernel_against_ref (default); package: a "
                  "directory pip installs, registering torch.ops.cutegen.<op>; op: <op>_op.py over kernel.so")
      ->check(CLI::IsMember({"kernelbench", "package", "op"}));
  cmd->add_option("--out", a->out, "directory to write into, missing or empty (default: ./<op>-<format>)");
  cmd->add_option("--eval", a->eval_path,
                  "with PROBLEM KERNEL: the judge's record of this kernel (`cutegen eval ... --json FILE`); it must "
                  "have passed, and the exports say so")
      ->check(CLI::ExistingFile);
  cmd->add_option("--arch", a->arch,
                  "target the exports build for (default: the run's, else the configuration's, sm_90a)");
  cmd->add_flag("--force", a->force, "write into a non-empty --out directory, over the files this export makes");
  cmd->callback([&global, &exit_code, a] { exit_code = run_export(global, *a); });
}

}  // namespace cutegen::cli
