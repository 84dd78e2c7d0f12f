#include "bench/lanes.h"

#include <gtest/gtest.h>

#include "bench/slurm.h"

using namespace cutegen::bench;

namespace {
const char* kSmi =
    "GPU 0: NVIDIA H200 (UUID: GPU-aaaa-0000)\n"
    "GPU 1: NVIDIA H200 (UUID: GPU-bbbb-1111)\n"
    "GPU 2: NVIDIA H200 (UUID: GPU-cccc-2222)\n";
}

TEST(Lanes, NvidiaSmiListingIsParsed) {
  auto gpus = parse_nvidia_smi_list(std::string(kSmi) + "  MIG 1g.18gb Device 0: (UUID: MIG-x)\n");
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[2].index, 2);
  EXPECT_EQ(gpus[2].name, "NVIDIA H200");
  EXPECT_EQ(gpus[2].uuid, "GPU-cccc-2222");
}

TEST(Lanes, AllAndASubsetOfTheListedGpusLockedByUuid) {
  auto all = resolve_lanes("cuda", "all", nullptr, kSmi);
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_EQ(all->size(), 3u);
  auto some = resolve_lanes("cuda", "0,2", nullptr, kSmi);
  ASSERT_TRUE(some.ok());
  ASSERT_EQ(some->size(), 2u);
  EXPECT_EQ((*some)[1].name, "gpu2");
  EXPECT_EQ((*some)[1].visible, "2");
  EXPECT_EQ((*some)[1].torch_device, "cuda:2");
  EXPECT_EQ((*some)[1].lock_file.filename(), "GPU-cccc-2222.lock");
  auto missing = resolve_lanes("cuda", "3", nullptr, kSmi);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("GPU 3 does not exist"), std::string::npos);
  EXPECT_FALSE(resolve_lanes("cuda", "one", nullptr, kSmi).ok());
}

TEST(Lanes, CudaVisibleDevicesDecidesWhatThisProcessMayUse) {
  // Slurm gave this job physical GPU 2 only: one lane, seen as device 0 inside, locked as GPU 2.
  auto lanes = resolve_lanes("cuda", "all", "2", kSmi);
  ASSERT_TRUE(lanes.ok()) << lanes.error().message;
  ASSERT_EQ(lanes->size(), 1u);
  EXPECT_EQ((*lanes)[0].visible, "2");
  EXPECT_EQ((*lanes)[0].torch_device, "cuda:0");
  EXPECT_EQ((*lanes)[0].key, "GPU-cccc-2222");
  // Without nvidia-smi the entries themselves name the locks.
  auto bare = resolve_lanes("cuda", "all", "0,1", "");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->size(), 2u);
  EXPECT_EQ((*bare)[1].lock_file.filename(), "1.lock");
  EXPECT_FALSE(resolve_lanes("cuda", "all", "", kSmi).ok());
}

TEST(Lanes, NoGpuIsOneLineAndTheCpuHasOneLane) {
  auto none = resolve_lanes("cuda", "all", nullptr, "");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no GPU visible"), std::string::npos);
  EXPECT_EQ(none.error().message.find('\n'), std::string::npos);
  auto cpu = resolve_lanes("cpu", "all", nullptr, "");
  ASSERT_TRUE(cpu.ok());
  ASSERT_EQ(cpu->size(), 1u);
  EXPECT_EQ((*cpu)[0].torch_device, "cpu");
  EXPECT_FALSE(resolve_lanes("cpu", "0", nullptr, "").ok());
}

TEST(Slurm, SubmissionOptionsAreStrippedFromTheShardCommand) {
  std::vector<std::string> argv{"/bin/cutegen", "bench", "p/", "--slurm", "--shards", "4", "--sbatch-arg", "--time=1:00:00",
                                "--gres=none", "--llm", "replay:x", "--dry-run", "--out", "D", "--quiet", "--shard=0/2"};
  EXPECT_EQ(strip_submission_options(argv),
            (std::vector<std::string>{"/bin/cutegen", "bench", "p/", "--llm", "replay:x", "--out", "D"}));
}

TEST(Slurm, TheScriptIsAnArrayJobRunningOneShardPerTask) {
  SlurmPlan p;
  p.shards = 3;
  p.sbatch_args = {"--partition=gpu", "--time=04:00:00"};
  p.suite_dir = "/shared/suite";
  p.workdir = "/home/me";
  p.command = {"/opt/cutegen", "bench", "level 1/", "--out", "/shared/suite", "--llm", "exec:it's"};
  std::string s = sbatch_script(p);
  EXPECT_EQ(s.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_NE(s.find("#SBATCH --array=0-2\n"), std::string::npos);
  EXPECT_NE(s.find("#SBATCH --gres=gpu:1\n"), std::string::npos);
  EXPECT_NE(s.find("#SBATCH --output=/shared/suite/slurm/shard-%a.out\n"), std::string::npos);
  EXPECT_NE(s.find("#SBATCH --chdir=/home/me\n"), std::string::npos);
  EXPECT_LT(s.find("--gres=gpu:1"), s.find("#SBATCH --partition=gpu"));  // the user's lines come after ours
  EXPECT_NE(s.find("exec '/opt/cutegen' 'bench' 'level 1/' '--out' '/shared/suite' '--llm' 'exec:it'\\''s' "
                   "--shard \"${SLURM_ARRAY_TASK_ID}/3\" --quiet\n"),
            std::string::npos)
      << s;
  p.gres = "";
  EXPECT_EQ(sbatch_script(p).find("--gres"), std::string::npos);
}

TEST(Lanes, TooManyTasksForTheCpusIsAWarningWithTheJobsThatFit) {
  EXPECT_FALSE(cpu_oversubscription_warning(2, 1, 16));   // the default on one GPU: 2 timing + 3 compiling
  EXPECT_FALSE(cpu_oversubscription_warning(16, 8, 128));
  EXPECT_FALSE(cpu_oversubscription_warning(1, 1, 2));    // one lane, nothing compiles beside it
  auto w = cpu_oversubscription_warning(8, 1, 4);          // 2 + 7 x 3 processes on 4 CPUs
  ASSERT_TRUE(w.has_value());
  EXPECT_NE(w->find("-j 8 on 4 CPUs"), std::string::npos) << *w;
  EXPECT_NE(w->find("-j 1 or fewer"), std::string::npos) << *w;
  auto eight = cpu_oversubscription_warning(4, 1, 8);      // 2 + 3 x 3 on 8 CPUs: one compile beside fits (2 + 3 x 2)
  ASSERT_TRUE(eight.has_value());
  EXPECT_NE(eight->find("-j 3 or fewer"), std::string::npos) << *eight;
  EXPECT_TRUE(cpu_oversubscription_warning(2, 1, 4));     // the default now needs 5: 2 timing + 3 compiling
  auto tight = cpu_oversubscription_warning(3, 2, 4);     // two lanes fill 4 CPUs: only -j 2 fits
  ASSERT_TRUE(tight.has_value());
  EXPECT_NE(tight->find("-j 2 or fewer"), std::string::npos) << *tight;
}
