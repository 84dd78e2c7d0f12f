#pragma once
// Shared by the LLM tests: a local HTTP server on 127.0.0.1, servers that refuse or never answer,
// temp directories that fail the test if an API key was written into them, and a recording sleep.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/process.h"
#include "common/testdata/test_helpers.h"
#include "llm/backend_factory.h"
#include "llm/hooks.h"
#include "llm/curl_transport.h"
#include "llm/llm_config.h"

namespace cutegen::testing {

// Set in the environment by set_test_environment(), as a user would set them. Must never show up in a
// file, a record or an error message.
inline constexpr const char* kOpenAiSecret = "sk-test-SECRET123";
inline constexpr const char* kAnthropicSecret = "sk-ant-test-SECRET456";

// Puts both keys in the environment, clears the base-URL variables and any proxy settings (so requests
// to 127.0.0.1 go straight to the test server).
void set_test_environment();

// True when `text` contains either secret.
bool contains_secret(const std::string& text);

// A fresh directory (TempDir, common/testdata/test_helpers.h), removed afterwards. Before that it scans every
// file under it and fails the current test if one contains a secret.
class SecretScannedDir {
 public:
  ~SecretScannedDir();
  const std::filesystem::path& path() const { return dir_.path; }
  std::filesystem::path operator/(const std::string& name) const { return dir_.path / name; }

 private:
  TempDir dir_{"cutegen-llm-test-"};
};

struct ReceivedRequest {
  std::string path;
  std::string body;
  httplib::Headers headers;
  bool has_header(const std::string& name) const { return headers.find(name) != headers.end(); }
  std::string header(const std::string& name) const;
};

// cpp-httplib on 127.0.0.1 and a free port, serving POSTs from a thread with `handler`.
class LocalServer {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  explicit LocalServer(Handler handler);
  ~LocalServer();
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<ReceivedRequest> requests() const;
  std::size_t request_count() const;

 private:
  httplib::Server server_;
  Handler handler_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<ReceivedRequest> requests_;
};

// Listens on 127.0.0.1 but never accepts: connections complete in the kernel's backlog and then hear
// nothing, like a server that hangs.
class SilentServer {
 public:
  SilentServer();
  ~SilentServer();
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A URL on which nothing listens (connection refused).
std::string refused_url();

// Records requested waits and returns at once.
class SleepRecorder {
 public:
  SleepFn fn();
  std::vector<std::chrono::milliseconds> waits() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::chrono::milliseconds> waits_;
};

// A JSON response in the Chat Completions shape.
std::string openai_answer(const std::string& text, const std::string& finish = "stop", long long prompt_tokens = 100,
                          long long completion_tokens = 50, const std::string& model = "gpt-5-2025-08-07");

// A JSON response in the Messages shape.
std::string anthropic_answer(const std::string& text, const std::string& stop = "end_turn", long long input_tokens = 100,
                             long long output_tokens = 50, const std::string& model = "claude-sonnet-4-5-20250929");

// Base fixture: keys in the environment, a scanned temp dir, the real transport and process runner,
// a recording sleep and collected progress lines.
class LlmTest : public ::testing::Test {
 protected:
  void SetUp() override { set_test_environment(); }

  BackendDeps deps();
  // A config for `spec` with fast retries; `base_url` for the HTTP backends.
  static LlmConfig config(const std::string& spec, const std::string& base_url = "");
  // make_backend, failing the test when it fails.
  std::unique_ptr<LlmBackend> make(const LlmConfig& config);
  std::vector<std::string> progress() const;

  static LlmRequest ask(const std::string& user, const std::string& system = "");

  SecretScannedDir tmp_;
  CurlTransport http_;
  PosixProcessRunner runner_;
  SleepRecorder sleeps_;

 private:
  mutable std::mutex progress_mu_;
  std::vector<std::string> progress_;
};

}  // namespace cutegen::testing
