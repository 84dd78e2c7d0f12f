#pragma once
// A synthetic bench suite for the suite page's tests: typed task records with a realistic mix
// (correct tasks with speedups from 0.2x to 20x, failures, crashes, tasks not started, a torch.compile
// that failed, SOL above 100%), deterministic for a given size. Written to disk by make-suite-fixture
// for the Chromium test (report/suite_page_test.sh).
#include <filesystem>
#include <vector>

#include "bench/task_record.h"
#include "common/result.h"

namespace cutegen::fixtures {

std::vector<bench::TaskRecord> synthetic_tasks(int n, bool baselines);

// A suite directory holding suite.json and results/<name>.json for those tasks (written through
// bench::SuiteDir, as the scheduler writes them), and tasks/<name>/report.html for the finished optimize
// tasks but every seventh, so links both present and missing are on the page.
Status write_synthetic_suite(const std::filesystem::path& dir, int n, bool baselines);

}  // namespace cutegen::fixtures
