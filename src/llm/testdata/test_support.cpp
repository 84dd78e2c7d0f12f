#include "llm/testdata/test_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/fs.h"

namespace cutegen::testing {
namespace fs = std::filesystem;

namespace {

// A socket bound to 127.0.0.1 on a port the kernel picks.
int bound_socket(int& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ADD_FAILURE() << "cannot bind a socket on 127.0.0.1";
    return fd;
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port = ntohs(addr.sin_port);
  return fd;
}

}  // namespace

void set_test_environment() {
  ::setenv("OPENAI_API_KEY", kOpenAiSecret, 1);
  ::setenv("ANTHROPIC_API_KEY", kAnthropicSecret, 1);
  for (const char* name : {"OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "http_proxy", "HTTP_PROXY", "https_proxy",
                           "HTTPS_PROXY", "all_proxy", "ALL_PROXY"})
    ::unsetenv(name);
}

bool contains_secret(const std::string& text) {
  return text.find(kOpenAiSecret) != std::string::npos || text.find(kAnthropicSecret) != std::string::npos ||
         text.find("SECRET123") != std::string::npos || text.find("SECRET456") != std::string::npos;
}

SecretScannedDir::~SecretScannedDir() {
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(dir_.path, ec)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    EXPECT_FALSE(contains_secret(content.str())) << "an API key was written to " << entry.path();
  }
}

std::string ReceivedRequest::header(const std::string& name) const {
  auto it = headers.find(name);  // httplib compares header names case-insensitively
  return it == headers.end() ? "" : it->second;
}

LocalServer::LocalServer(Handler handler) : handler_(std::move(handler)) {
  server_.Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back({req.path, req.body, req.headers});
    }
    handler_(req, res);
  });
  port_ = server_.bind_to_any_port("127.0.0.1");
  EXPECT_GT(port_, 0);
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  // stop() before the loop runs would be lost and the join would hang.
  while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

LocalServer::~LocalServer() {
  server_.stop();
  thread_.join();
}

std::vector<ReceivedRequest> LocalServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

std::size_t LocalServer::request_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_.size();
}

SilentServer::SilentServer() {
  fd_ = bound_socket(port_);
  ::listen(fd_, 16);
}

SilentServer::~SilentServer() { ::close(fd_); }

std::string refused_url() {
  int port = 0;
  int fd = bound_socket(port);
  ::close(fd);  // bound, never listened on, now closed: connecting is refused
  return "http://127.0.0.1:" + std::to_string(port);
}

SleepFn SleepRecorder::fn() {
  return [this](std::chrono::milliseconds d) {
    std::lock_guard<std::mutex> lock(mu_);
    waits_.push_back(d);
  };
}

std::vector<std::chrono::milliseconds> SleepRecorder::waits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waits_;
}

std::string openai_answer(const std::string& text, const std::string& finish, long long prompt_tokens,
                          long long completion_tokens, const std::string& model) {
  nlohmann::json j = {
      {"id", "chatcmpl-test"},
      {"object", "chat.completion"},
      {"model", model},
      {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", finish}}}},
      {"usage",
       {{"prompt_tokens", prompt_tokens},
        {"completion_tokens", completion_tokens},
        {"total_tokens", prompt_tokens + completion_tokens},
        {"prompt_tokens_details", {{"cached_tokens", prompt_tokens / 4}}},
        {"completion_tokens_details", {{"reasoning_tokens", completion_tokens / 5}}}}}};
  return j.dump();
}

std::string anthropic_answer(const std::string& text, const std::string& stop, long long input_tokens,
                             long long output_tokens, const std::string& model) {
  nlohmann::json j = {{"id", "msg_test"},
                      {"type", "message"},
                      {"role", "assistant"},
                      {"model", model},
                      {"content", {{{"type", "text"}, {"text", text}}}},
                      {"stop_reason", stop},
                      {"usage",
                       {{"input_tokens", input_tokens},
                        {"output_tokens", output_tokens},
                        {"cache_read_input_tokens", 0},
                        {"cache_creation_input_tokens", 0}}}};
  return j.dump();
}

BackendDeps LlmTest::deps() {
  return BackendDeps{http_, runner_, sleeps_.fn(), [this](const std::string& line) {
                       std::lock_guard<std::mutex> lock(progress_mu_);
                       progress_.push_back(line);
                     }};
}

LlmConfig LlmTest::config(const std::string& spec, const std::string& base_url) {
  LlmConfig c;
  auto applied = apply_llm_spec(c, spec);
  EXPECT_TRUE(applied.ok()) << applied.error().message;
  c.base_url = base_url;
  c.connect_timeout = std::chrono::milliseconds(2000);
  c.timeout = std::chrono::milliseconds(10000);
  c.retry.max_attempts = 3;
  return c;
}

std::unique_ptr<LlmBackend> LlmTest::make(const LlmConfig& c) {
  auto backend = make_backend(c, deps());
  EXPECT_TRUE(backend.ok()) << (backend.ok() ? "" : backend.error().message);
  return backend.ok() ? std::move(*backend) : nullptr;
}

std::vector<std::string> LlmTest::progress() const {
  std::lock_guard<std::mutex> lock(progress_mu_);
  return progress_;
}

LlmRequest LlmTest::ask(const std::string& user, const std::string& system) {
  LlmRequest r;
  if (!system.empty()) r.messages.push_back({Role::system, system});
  r.messages.push_back({Role::user, user});
  return r;
}

}  // namespace cutegen::testing
