#pragma once
// Which problems a suite runs: PROBLEMS arguments (files, directories, globs) resolved to tasks,
// filtered, limited and split into shards. Pure apart from reading the file system, so the
// scheduler, `bench status` and every Slurm shard compute the same list from the same arguments.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace cutegen::bench {

struct ProblemTask {
  std::string name;               // unique in the suite; the directory name under tasks/
  std::filesystem::path path;     // absolute
  std::optional<int> number;      // KernelBench's task number: "19_ReLU.py" -> 19
};

// Files are taken as given; directories contribute every `*.py` directly inside that defines
// `class Model` and `def get_inputs` (KernelBench's layout: level1/19_ReLU.py); arguments with glob
// characters are expanded. Names are file stems; stems that collide are prefixed with their
// directory ("level1-19_ReLU"). Sorted by name. Error (one line): a path that does not exist, a glob
// or directory that yields no problem, names that still collide.
Result<std::vector<ProblemTask>> discover_problems(const std::vector<std::string>& arguments);

// The leading number of a KernelBench file name ("19_ReLU" -> 19), if any.
std::optional<int> task_number(const std::string& stem);

// One --filter/--exclude term: a number ("19"), a range of numbers ("19-32"), or else a
// case-insensitive substring of the task name.
struct TaskTerm {
  std::string text;
  std::optional<int> low, high;  // set for numbers and ranges
  bool matches(const ProblemTask& t) const;
};
// Terms separated by commas; Error for a malformed range ("32-19", "19-").
Result<std::vector<TaskTerm>> parse_terms(const std::string& text);

struct Selection {
  std::vector<TaskTerm> include;  // empty: everything
  std::vector<TaskTerm> exclude;
  std::optional<int> limit;       // the first N after filtering, by name
};
std::vector<ProblemTask> select_tasks(std::vector<ProblemTask> tasks, const Selection& s);

// --shard i/N (0 <= i < N).
struct Shard {
  int index = 0, count = 1;
};
Result<Shard> parse_shard(const std::string& text);
// Shard i takes the tasks at positions i, i+N, i+2N, ... of the name-sorted list: stable, disjoint,
// covering, and mixing early and late tasks so shards take similar time.
std::vector<ProblemTask> shard_tasks(const std::vector<ProblemTask>& tasks, Shard s);

}  // namespace cutegen::bench
