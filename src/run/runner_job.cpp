#include "run/runner_job.h"

#include <fmt/format.h>

#include "common/json_text.h"

namespace cutegen {
namespace {

Result<std::vector<TensorRef>> refs_at(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_array()) return Error{fmt::format("runner job: `{}` must be a list", key)};
  return parse_tensor_refs(j[key]);
}

// `workspace`: absent or null, else a uint8 tensor ref of rank 1.
Result<std::optional<TensorRef>> workspace_at(const nlohmann::json& j) {
  if (!j.contains("workspace") || j["workspace"].is_null()) return std::optional<TensorRef>();
  auto r = parse_tensor_ref(j["workspace"]);
  if (!r) return Error{"runner job: workspace: " + r.error().message};
  if (r->is_scalar || r->dtype != DType::uint8 || r->shape.size() != 1 || r->nbytes == 0)
    return Error{"runner job: the workspace must be a non-empty rank-1 uint8 tensor ref"};
  return std::optional<TensorRef>(*r);
}

Result<std::vector<std::optional<TensorRef>>> scalars_at(const nlohmann::json& j) {
  std::vector<std::optional<TensorRef>> out;
  for (const auto& s : j.value("scalars", nlohmann::json::array())) {
    if (s.is_null()) {
      out.emplace_back();
      continue;
    }
    auto r = parse_tensor_ref(s);
    if (!r) return r.error();
    if (!r->is_scalar) return Error{"a command's scalars must be scalar refs"};
    out.emplace_back(*r);
  }
  return out;
}

}  // namespace

Result<RunnerSandboxSettings> parse_sandbox_settings(const nlohmann::json& j) {
  RunnerSandboxSettings s;
  if (j.is_null()) return s;
  if (!j.is_object()) return Error{"runner job: `sandbox` must be an object"};
  for (const auto& [key, value] : j.items()) {
    if (!value.is_boolean()) return Error{fmt::format("runner job: sandbox.{} must be true or false", key)};
    if (key == "files") s.files = value;
    else if (key == "syscalls") s.syscalls = value;
    else if (key == "deny_threads") s.deny_threads = value;
    else if (key == "network") s.network = value;
    else if (key == "narrow") s.narrow = value;
    else return Error{fmt::format("runner job: unknown sandbox setting `{}`", key)};
  }
  return s;
}

Result<nlohmann::json> runner_sandbox_preset(const std::string& name) {
  using J = nlohmann::json;
  if (name == "full") return J{{"files", true}, {"syscalls", true}, {"deny_threads", true}, {"narrow", true}};
  if (name == "wide") return J{{"files", true}, {"syscalls", true}, {"deny_threads", true}, {"narrow", false}};
  if (name == "threads") return J{{"files", true}, {"syscalls", true}, {"deny_threads", false}};
  if (name == "syscalls-only") return J{{"files", false}, {"syscalls", true}, {"deny_threads", true}};
  if (name == "files-only") return J{{"files", true}, {"syscalls", false}, {"deny_threads", false}};
  if (name == "off") return J{{"files", false}, {"syscalls", false}, {"deny_threads", false}};
  return Error{fmt::format("CUTEGEN_RUNNER_SANDBOX={} is not one of full, wide, threads, syscalls-only, files-only, off",
                           name)};
}

Result<RunnerSession> parse_runner_session(const nlohmann::json& j) {
  RunnerSession s;
  if (!j.is_object() || !j.contains("library") || !j["library"].is_string() || !j.contains("private_dir") ||
      !j["private_dir"].is_string())
    return Error{"runner session: `library` and `private_dir` are required strings"};
  s.library = j["library"];
  s.private_dir = j["private_dir"];
  s.device = j.value("device", 0);
  if (!j.contains("inputs") || !j["inputs"].is_array()) return Error{"runner session: `inputs` must be a list"};
  for (const auto& ref : j["inputs"]) {
    if (ref.is_null()) {
      s.inputs.emplace_back();
      continue;
    }
    auto r = parse_tensor_ref(ref);
    if (!r) return r.error();
    s.inputs.emplace_back(*r);
  }
  auto params = refs_at(j, "params");
  if (!params) return params.error();
  s.params = *params;
  if (!j.contains("outputs") || !j["outputs"].is_array() || j["outputs"].empty())
    return Error{"runner session: `outputs` must be a non-empty list of output sets"};
  for (const auto& set : j["outputs"]) {
    auto refs = parse_tensor_refs(set);
    if (!refs) return refs.error();
    s.outputs.push_back(*refs);
  }
  auto workspace = workspace_at(j);
  if (!workspace) return workspace.error();
  s.workspace = *workspace;
  auto sandbox = parse_sandbox_settings(j.value("sandbox", nlohmann::json()));
  if (!sandbox) return sandbox.error();
  s.sandbox = *sandbox;
  if (j.contains("wait")) {
    const auto& wait = j["wait"];
    if (wait == "block") s.wait = GpuWait::block;
    else if (wait == "poll") s.wait = GpuWait::poll;
    else if (wait == "spin") s.wait = GpuWait::spin;
    else if (wait == "hybrid") s.wait = GpuWait::hybrid;
    else
      return Error{fmt::format("runner session: `wait` is {}, expected \"block\", \"poll\", \"spin\" or \"hybrid\"",
                               wait.dump())};
  }
  return s;
}

Result<RunnerProfileJob> parse_runner_profile_job(const nlohmann::json& j) {
  RunnerProfileJob job;
  if (!j.is_object() || !j.contains("library") || !j["library"].is_string() || !j.contains("private_dir") ||
      !j["private_dir"].is_string())
    return Error{"runner job: `library` and `private_dir` are required strings"};
  job.library = j["library"];
  job.private_dir = j["private_dir"];
  job.device = j.value("device", 0);
  job.calls = j.value("calls", 1);
  if (job.calls < 1) return Error{"runner job: calls must be >= 1"};
  auto in = refs_at(j, "inputs");
  if (!in) return in.error();
  auto out = refs_at(j, "outputs");
  if (!out) return out.error();
  job.inputs = *in;
  job.outputs = *out;
  auto workspace = workspace_at(j);
  if (!workspace) return workspace.error();
  job.workspace = *workspace;
  auto sandbox = parse_sandbox_settings(j.value("sandbox", nlohmann::json()));
  if (!sandbox) return sandbox.error();
  job.sandbox = *sandbox;
  return job;
}

Result<RunnerCommand> parse_runner_command(const std::string& line) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("op") || !j["op"].is_string())
    return Error{"a command must be a JSON object with an `op`"};
  RunnerCommand c;
  std::string op = j["op"];
  if (op == "ping") c.op = RunnerCommand::Op::ping;
  else if (op == "load") c.op = RunnerCommand::Op::load;
  else if (op == "call") c.op = RunnerCommand::Op::call;
  else if (op == "quit") c.op = RunnerCommand::Op::quit;
  else return Error{fmt::format("unknown command `{}`", op)};
  if (j.contains("nonce") && j["nonce"].is_string()) c.nonce = j["nonce"];
  if (c.op != RunnerCommand::Op::quit && c.nonce.empty()) return Error{"every command but quit carries a nonce"};
  if (c.op == RunnerCommand::Op::call) c.output_set = j.value("set", 0);
  if (c.op == RunnerCommand::Op::ping) {
    if (j.contains("sweep")) {
      const auto& v = j["sweep"];
      if (v == false) c.sweep = RunnerCommand::Sweep::none;
      else if (v == true || v == "own") c.sweep = RunnerCommand::Sweep::own;
      else if (v == "footprint") c.sweep = RunnerCommand::Sweep::footprint;
      else return Error{"`sweep` must be false, true, \"own\" or \"footprint\""};
    }
    if (j.contains("repeat")) {
      const auto& r = j["repeat"];
      if (!r.is_number_integer() || r.get<int64_t>() < 1 || r.get<int64_t>() > RunnerCommand::kMaxPingRepeat)
        return Error{fmt::format("`repeat` must be a whole number from 1 to {}", RunnerCommand::kMaxPingRepeat)};
      c.repeat = r.get<int>();
    }
  }
  if (c.op == RunnerCommand::Op::call || c.op == RunnerCommand::Op::load) {
    auto scalars = scalars_at(j);
    if (!scalars) return scalars.error();
    c.scalars = *scalars;
  }
  return c;
}

std::string call_reply(const std::string& nonce, int rc, const std::string& rc_name, const std::string& cuda_error,
                       double event_ms) {
  nlohmann::json j = {{"nonce", nonce}, {"rc", rc}, {"event_ms", event_ms}};
  j["rc_name"] = rc_name.empty() ? nlohmann::json() : nlohmann::json(rc_name);
  j["cuda_error"] = cuda_error.empty() ? nlohmann::json() : nlohmann::json(cuda_error);
  return dump_json(j) + "\n";
}

std::string load_reply(const std::string& nonce, std::optional<uint64_t> workspace_bytes) {
  nlohmann::json j = {{"nonce", nonce}, {"ready", true}};
  j["workspace_bytes"] = workspace_bytes ? nlohmann::json(*workspace_bytes) : nlohmann::json();
  return dump_json(j) + "\n";
}

Status check_workspace_buffer(uint64_t want, const std::optional<TensorRef>& buffer) {
  if (want == 0) return ok_status();
  if (!buffer)
    return Error{fmt::format("the kernel asks for {} bytes of workspace but the harness mapped none", want)};
  if (buffer->nbytes < want)
    return Error{fmt::format("the kernel asks for {} bytes of workspace but the harness's buffer holds {}", want,
                             buffer->nbytes)};
  return ok_status();
}

}  // namespace cutegen
