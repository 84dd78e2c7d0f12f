// The worker's error kinds as cutegen reads them: each word parses back to its kind, and the kind an
// answer carries decides the ErrorKind a caller sees (python/tests/test_error_kinds.py ties the words to
// the worker's own list).
#include "run/worker_errors.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/testdata/test_helpers.h"
#include "run/reference_worker.h"

using namespace cutegen;
using cutegen::testing::contains;
using cutegen::testing::TempDir;
namespace fs = std::filesystem;

TEST(WorkerErrorKinds, EveryKindParsesBackFromItsWord) {
  std::set<std::string_view> words;
  for (WorkerErrorKind k : all_worker_error_kinds()) {
    EXPECT_EQ(parse_worker_error_kind(to_string(k)), k);
    words.insert(to_string(k));
  }
  EXPECT_EQ(words.size(), 4u);
  EXPECT_FALSE(parse_worker_error_kind("Problem"));
  EXPECT_FALSE(parse_worker_error_kind(""));
}

TEST(WorkerErrorKinds, OnlyTheFilesAndTheMachinesFaultsAreToldApart) {
  EXPECT_EQ(error_kind_for(WorkerErrorKind::problem), ErrorKind::problem_file);
  EXPECT_EQ(error_kind_for(WorkerErrorKind::busy), ErrorKind::machine_busy);
  EXPECT_EQ(error_kind_for(WorkerErrorKind::request), ErrorKind::general);
  EXPECT_EQ(error_kind_for(WorkerErrorKind::internal), ErrorKind::general);
}

namespace {

// A stand-in worker package: answers every request with an error of the kind the request's "op" names.
constexpr const char* kEchoKindWorker = R"PY(
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "shutdown":
        break
    print(json.dumps({"id": request["id"], "ok": False, "error": "told to fail", "kind": request["op"]}), flush=True)
)PY";

}  // namespace

TEST(WorkerErrorKinds, TheKindOfAnAnswerReachesTheCaller) {
  TempDir dir;
  ASSERT_TRUE(write_file_atomic(dir.path / "cutegen_worker/__main__.py", kEchoKindWorker).ok());
  auto worker = PythonWorker::start({.package_dir = dir.path, .log_path = dir.path / "worker.log"});
  ASSERT_TRUE(worker.ok()) << worker.error().message;
  for (WorkerErrorKind k : all_worker_error_kinds()) {
    auto r = (*worker)->call(std::string(to_string(k)), nlohmann::json::object(), std::chrono::seconds(30));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "told to fail");
    EXPECT_EQ(r.error().kind, error_kind_for(k)) << to_string(k);
  }
  // A kind this build does not know is a mismatch between the two sides, said as such.
  auto r = (*worker)->call("overloaded", nlohmann::json::object(), std::chrono::seconds(30));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::general);
  EXPECT_TRUE(contains(r.error().message, "told to fail")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "unknown kind \"overloaded\"")) << r.error().message;
}
