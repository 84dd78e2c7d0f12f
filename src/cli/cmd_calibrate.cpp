#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/fs.h"
#include "common/locations.h"
#include "common/process.h"
#include "run/reference_worker.h"
#include "run/roofline.h"
#include "common/terminal_text.h"

namespace cutegen::cli {
namespace {

int run_calibrate(bool force) {
  std::string why;
  if (!gpu_visible(why)) return fail(fmt::format("calibrate needs an NVIDIA GPU and {}", why));
  if (!force) {
    PosixProcessRunner runner;
    auto name = runner.run({.argv = {"nvidia-smi", "--query-gpu=name", "--format=csv,noheader"},
                            .timeout = std::chrono::seconds(30)});
    if (name && name->succeeded()) {
      std::string gpu = name->out.substr(0, name->out.find('\n'));
      if (auto text = read_file(calibration_path(cache_root(), gpu)); text) {
        auto cached = nlohmann::json::parse(*text, nullptr, false);
        auto c = calibration_from_json(cached);
        if (c && is_current_calibration(cached)) {
          print_safe(stdout, "{}: HBM {:.0f} GB/s; matmul TFLOP/s fp32 {:.1f}, tf32 {:.1f}, fp16 {:.1f}, bf16 {:.1f} (cached; "
                     "--force measures again)\n", c->gpu, c->hbm_gbps, c->fp32_tflops, c->tf32_tflops, c->fp16_tflops,
                     c->bf16_tflops);
          return 0;
        }
      }
    }
  }
  auto worker = PythonWorker::start({.log_path = std::filesystem::temp_directory_path() / "cutegen-calibrate.log"});
  if (!worker) return fail(worker.error().message);
  print_safe(stderr, "measuring memory bandwidth (copy and read) and matmul rates (about a minute) ...\n");
  auto measured = (*worker)->call("calibrate", {{"force", force}}, std::chrono::seconds(900));
  if (!measured) return fail(measured.error().message);
  auto c = calibration_from_json(*measured);
  if (!c) return fail(c.error().message);
  auto path = calibration_path(cache_root(), c->gpu);
  if (auto w = write_file_atomic(path, to_json(*c).dump(2)); !w) return fail(w.error().message);
  print_safe(stdout, "{}: HBM {:.0f} GB/s (copy {:.0f}, read {:.0f}); matmul TFLOP/s fp32 {:.1f}, tf32 {:.1f}, fp16 {:.1f}, "
             "bf16 {:.1f}\nsaved {}\n", c->gpu, c->hbm_gbps, c->copy_gbps, c->read_gbps, c->fp32_tflops, c->tf32_tflops,
             c->fp16_tflops, c->bf16_tflops, path.string());
  return 0;
}

}  // namespace

void add_calibrate_command(CLI::App& app, const GlobalOptions&, int& exit_code) {
  auto force = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("calibrate", "Measure this GPU's memory bandwidth and matmul rates (cached per GPU)");
  cmd->add_flag("--force", *force, "measure again even if a calibration is cached");
  cmd->callback([&exit_code, force] { exit_code = run_calibrate(*force); });
}

}  // namespace cutegen::cli
