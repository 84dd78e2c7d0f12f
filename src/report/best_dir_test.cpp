#include "report/best_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "common/fs.h"
#include "common/process.h"
#include "store/replace_dir.h"

namespace cutegen {
namespace {
namespace fs = std::filesystem;

// A real shared library built from C `source`: the export checks the file it copies.
void build_library(const fs::path& source_file, const std::string& source, const fs::path& library) {
  ASSERT_TRUE(write_file_atomic(source_file, source).ok());
  std::error_code ec;
  fs::create_directories(library.parent_path(), ec);
  ASSERT_FALSE(ec) << ec.message();
  PosixProcessRunner runner;
  auto cc = runner.run({.argv = {"cc", "-shared", "-fPIC", "-o", library.string(), source_file.string()}});
  ASSERT_TRUE(cc.ok() && cc->succeeded()) << (cc.ok() ? cc->err : cc.error().message);
}

struct RunDirFixture {
  fs::path dir;
  RunDirFixture() {
    dir = *make_unique_dir(fs::temp_directory_path(), "cutegen-best-");
    build_library(dir / "k.c", "int cutegen_forward(void) { return 0; }\n", dir / "cache/kernel.so");
    EXPECT_TRUE(write_file_atomic(dir / "problem.py", "class Model: ...").ok());
  }
  ~RunDirFixture() { fs::remove_all(dir); }
  BestKernel best(const std::string& source) const {
    nlohmann::json metadata = nlohmann::json::parse(R"({
      "name": "relu",
      "inputs": [{"name": "x", "kind": "tensor", "dtype": "float32", "shape": [8, 16]}],
      "params": [],
      "outputs": [{"kind": "tensor", "dtype": "float32", "shape": [8, 16]}]})");
    Evaluation e;
    e.problem = *ProblemFacts::from_json(metadata);
    e.time = CandidateTime{.stats = {.median_ms = 1.0}};
    e.library = (dir / "cache/kernel.so").string();
    return {source, e, dir / "problem.py"};
  }
  std::vector<std::string> leftovers() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) {
      std::string n = e.path().filename().string();
      if (n.starts_with("best.")) out.push_back(n);
    }
    return out;
  }
};

ino_t inode(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
}

TEST(BestDir, WritesEveryExport) {
  RunDirFixture f;
  RunFiles files(f.dir);
  auto r = write_best(files, f.best("// kernel one"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->dir, f.dir / "best");
  EXPECT_TRUE(r->note.empty()) << r->note;  // ext4/tmpfs exchange in one step
  for (const char* name : {"kernel.cu", "eval.json", "kernel.so", "relu_op.py", "model_new.py", "problem.py"})
    EXPECT_TRUE(fs::exists(f.dir / "best" / name)) << name;
  EXPECT_EQ(*read_file(f.dir / "best/kernel.so"), *read_file(f.dir / "cache/kernel.so"));
  // model_new.py is the self-contained KernelBench submission: the kernel's source inside, nothing beside.
  auto model_new = read_file(f.dir / "best/model_new.py");
  ASSERT_TRUE(model_new.ok());
  EXPECT_NE(model_new->find("_KERNEL_SOURCE = r" + std::string(3, '\'') + "// kernel one\n"), std::string::npos)
      << *model_new;
  EXPECT_EQ(model_new->find("problem.py"), std::string::npos);
  EXPECT_NE(model_new->find("class Model: ..."), std::string::npos);
  // The fixture's Model has no forward() to leave out: the writer says so.
  EXPECT_NE(r->export_note.find("Model.forward() is not in the problem's text"), std::string::npos) << r->export_note;
  EXPECT_EQ(fs::status(f.dir / "best").permissions() & fs::perms::others_read, fs::perms::others_read);
  EXPECT_TRUE(f.leftovers().empty());
}

TEST(BestDir, ANewBestReplacesTheWholeDirectoryAtOnce) {
  RunDirFixture f;
  RunFiles files(f.dir);
  ASSERT_TRUE(write_best(files, f.best("// kernel one")).ok());
  ASSERT_TRUE(write_file_atomic(f.dir / "best/stale_op.py", "from an older problem name").ok());
  ino_t before = inode(f.dir / "best");
  auto r = write_best(files, f.best("// kernel two"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(inode(f.dir / "best"), before);  // a different directory took its place, not files rewritten in it
  EXPECT_EQ(*read_file(f.dir / "best/kernel.cu"), "// kernel two");
  EXPECT_FALSE(fs::exists(f.dir / "best/stale_op.py"));
  EXPECT_TRUE(f.leftovers().empty());
}

TEST(BestDir, AMissingLibraryWritesNothingSoBestNeverMixesTwoKernels) {
  RunDirFixture f;
  RunFiles files(f.dir);
  ASSERT_TRUE(write_best(files, f.best("// the previous best")).ok());
  auto best = f.best("// a newer best");
  best.evaluation.library = (f.dir / "gone/kernel.so").string();
  auto r = write_best(files, best);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("gone/kernel.so is missing"), std::string::npos) << r.error().message;
  EXPECT_EQ(*read_file(f.dir / "best/kernel.cu"), "// the previous best");
}

// The user's PyTorch process loads best/kernel.so unconfined: a library with host code that runs at
// load is never exported, whatever verdict brought it here.
TEST(BestDir, ALibraryThatRunsCodeAtLoadIsNotExported) {
  RunDirFixture f;
  RunFiles files(f.dir);
  ASSERT_TRUE(write_best(files, f.best("// the previous best")).ok());
  auto best = f.best("// runs at load");
  build_library(f.dir / "ctor.c",
                "__attribute__((constructor)) static void at_load(void) {}\nint cutegen_forward(void) { return 0; }\n",
                f.dir / "ctor/kernel.so");
  best.evaluation.library = (f.dir / "ctor/kernel.so").string();
  auto r = write_best(files, best);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("refusing to export " + best.evaluation.library + ": DT_INIT_ARRAY lists at_load"),
            std::string::npos)
      << r.error().message;
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << r.error().message;
  EXPECT_EQ(*read_file(f.dir / "best/kernel.cu"), "// the previous best");
  EXPECT_TRUE(f.leftovers().empty());
}

TEST(BestDir, AFailureHalfwayLeavesThePreviousBestWholeAndNoTemporaryDirectory) {
  RunDirFixture f;
  RunFiles files(f.dir);
  ASSERT_TRUE(write_best(files, f.best("// the previous best")).ok());
  auto best = f.best("// a newer best");
  best.problem_file = f.dir / "no-such-problem.py";  // kernel.cu and eval.json are written before this fails
  auto r = write_best(files, best);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("keeps the previous best"), std::string::npos) << r.error().message;
  EXPECT_EQ(*read_file(f.dir / "best/kernel.cu"), "// the previous best");
  EXPECT_TRUE(fs::exists(f.dir / "best/kernel.so"));
  EXPECT_TRUE(f.leftovers().empty());
}

TEST(BestDir, LeftoversOfAnExportKilledMidwayAreCleanedUp) {
  RunDirFixture f;
  RunFiles files(f.dir);
  ASSERT_TRUE(write_file_atomic(f.dir / "best.tmp-abc123/kernel.cu", "half").ok());
  ASSERT_TRUE(write_file_atomic(f.dir / "best.old-def456/kernel.cu", "old").ok());
  ASSERT_TRUE(write_best(files, f.best("// kernel")).ok());
  EXPECT_TRUE(f.leftovers().empty());
}

TEST(ReplaceDir, MovesIntoPlaceOrExchangesWithTheOldDirectory) {
  RunDirFixture f;
  ASSERT_TRUE(write_file_atomic(f.dir / "a/x", "1").ok());
  auto first = replace_dir(f.dir / "a", f.dir / "target");
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(first->in_one_step);
  EXPECT_FALSE(fs::exists(f.dir / "a"));
  ASSERT_TRUE(write_file_atomic(f.dir / "b/y", "2").ok());
  auto second = replace_dir(f.dir / "b", f.dir / "target");
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_FALSE(fs::exists(f.dir / "b"));  // the old directory went out under the new one's name
  EXPECT_FALSE(fs::exists(f.dir / "target/x"));
  EXPECT_EQ(*read_file(f.dir / "target/y"), "2");
}

}  // namespace
}  // namespace cutegen
