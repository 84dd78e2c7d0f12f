#include "run/reference_worker.h"

#include <cstdlib>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/locations.h"
#include "run/worker_errors.h"

#ifndef CUTEGEN_PYTHON_DIR
#define CUTEGEN_PYTHON_DIR ""
#endif

namespace cutegen {
namespace fs = std::filesystem;

fs::path default_worker_package_dir() { return fs::path(CUTEGEN_PYTHON_DIR); }

Result<std::unique_ptr<PythonWorker>> PythonWorker::start(PythonWorkerOptions o) {
  if (const char* py = std::getenv("CUTEGEN_PYTHON"); py && *py) o.python = py;
  if (o.package_dir.empty()) o.package_dir = default_worker_package_dir();
  if (!fs::exists(o.package_dir / "cutegen_worker"))
    return Error{fmt::format("reference worker package not found in {}", o.package_dir.string())};
  if (o.log_path.empty()) o.log_path = fs::temp_directory_path() / "cutegen-worker.log";
  std::string pythonpath = o.package_dir.string();
  if (const char* pp = std::getenv("PYTHONPATH"); pp && *pp) pythonpath += ":" + std::string(pp);
  // The worker sees the allow-listed environment (no API keys) with a private HOME and TMPDIR beside
  // its log; torch.compile's caches stay in cutegen's cache unless the user pointed them elsewhere.
  auto home = make_unique_dir(o.log_path.parent_path(), "worker-home-");
  if (!home) return Error{fmt::format("cannot create the worker's home directory: {}", home.error().message)};
  std::vector<std::string> argv = {o.python, "-m", "cutegen_worker"};
  if (!o.script.empty()) argv = {o.python, o.script.string()};
  ProcessSpec spec{.argv = std::move(argv),
                   .env = {{"PYTHONPATH", pythonpath}, {"PYTHONUNBUFFERED", "1"}},
                   .private_dir = *home};
  // "-2": inductor caches the Triton configurations its first run picked by timing them, and before
  // 2026-12-01 bench let that run beside another task's timing (a slow pick would be served again).
  for (const auto& [name, dir] : {std::pair{"TORCHINDUCTOR_CACHE_DIR", "torchinductor-2"}, std::pair{"TRITON_CACHE_DIR", "triton"}})
    if (!std::getenv(name)) spec.env.emplace_back(name, (cache_root() / dir).string());
  auto p = LineProcess::start(spec, o.log_path.string());
  if (!p) return Error{fmt::format("{}; install Python 3 with torch (scripts/setup) or set CUTEGEN_PYTHON", p.error().message)};
  return std::unique_ptr<PythonWorker>(new PythonWorker(std::move(o), std::move(*p)));
}

PythonWorker::~PythonWorker() {
  if (process_.running()) {
    (void)process_.write_line(R"({"id": 0, "op": "shutdown"})");
    (void)process_.read_line(std::chrono::seconds(5));
  }
}

std::string PythonWorker::log_tail() const {
  auto text = read_file(options_.log_path);
  if (!text || text->empty()) return "(nothing)";
  std::string t = *text;
  if (t.size() > 1500) t = "..." + t.substr(t.size() - 1500);
  return t;
}

Result<nlohmann::json> PythonWorker::call(const std::string& op, nlohmann::json args, std::chrono::seconds timeout) {
  int id = next_id_++;
  args["id"] = id;
  args["op"] = op;
  if (auto w = process_.write_line(args.dump()); !w)
    return Error{fmt::format("reference worker is gone ({}); its log ends:\n{}", w.error().message, log_tail())};
  for (;;) {
    auto line = process_.read_line(timeout);
    if (!line)
      return Error{fmt::format("reference worker, op {}: {}; its log ends:\n{}", op, line.error().message, log_tail())};
    auto j = nlohmann::json::parse(*line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return Error{fmt::format("reference worker wrote a non-protocol line: {}", line->substr(0, 200))};
    if (j.value("id", -1) != id) continue;  // a late answer to an abandoned request
    if (j.value("ok", false)) return j.value("result", nlohmann::json::object());
    // The kind says who is at fault (run/worker_errors.h): callers that run many problems (cutegen bench)
    // record a `problem` error as that problem's verdict and go on; the judge measures again after `busy`.
    std::string message = j.value("error", std::string("reference worker failed without a message"));
    const std::string word = j.value("kind", "");
    auto kind = parse_worker_error_kind(word);
    if (!kind)  // a worker that does not match this build: say so rather than guess who is at fault
      return Error{fmt::format("{} (the reference worker answered an error of unknown kind \"{}\"; its copy of "
                               "the kinds in python/cutegen_worker/errors.py does not match this cutegen)",
                               message, word)};
    return Error{std::move(message), error_kind_for(*kind)};
  }
}

Status end_worker_holding(std::unique_ptr<ReferenceWorker> worker, DeviceLock* lock) {
  if (!worker) return ok_status();
  auto gpu = hold_device(lock);
  worker.reset();  // PythonWorker's destructor returns once the process has exited
  if (!gpu) return gpu.error();
  return ok_status();
}

}  // namespace cutegen
