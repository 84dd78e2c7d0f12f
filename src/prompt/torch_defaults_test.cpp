#include "prompt/torch_defaults.h"

#include <gtest/gtest.h>

using namespace cutegen;

namespace {

std::string listed(const std::vector<ImpliedDefault>& ds) {
  std::string s;
  for (const auto& d : ds) s += d.call + " " + d.param + "=" + d.value + "\n";
  return s;
}

}  // namespace

TEST(TorchDefaults, ALayerNormWithoutEpsReliesOnItsDefault) {
  // KernelBench's LayerNorm 40: the eps is nowhere in the file.
  auto ds = implied_defaults("self.ln = nn.LayerNorm(normalized_shape=normalized_shape)\n");
  EXPECT_EQ(listed(ds), "nn.LayerNorm eps=1e-05\n");
}

TEST(TorchDefaults, APassedParameterIsNotListedByKeywordOrPosition) {
  EXPECT_EQ(listed(implied_defaults("nn.LayerNorm(hidden, eps=1e-6)")), "");
  EXPECT_EQ(listed(implied_defaults("nn.LayerNorm(hidden, 1e-6)")), "");  // eps is LayerNorm's second argument
  EXPECT_EQ(listed(implied_defaults("nn.LeakyReLU(0.2)")), "");
  EXPECT_EQ(listed(implied_defaults("F.leaky_relu(x, negative_slope=a == b)")), "");
  EXPECT_EQ(listed(implied_defaults("F.leaky_relu(x, (a, b)[0])")), "") << "a comma inside brackets is not an argument";
  EXPECT_EQ(listed(implied_defaults("F.normalize(x, dim=-1)")), "F.normalize p=2.0\nF.normalize eps=1e-12\n");
}

TEST(TorchDefaults, OnlyTorchsOwnCallsInSourceOrderOnce) {
  const char* src =
      "import torch.nn.functional as F\n"
      "class Model(nn.Module):\n"
      "    def __init__(self):\n"
      "        self.act = nn.GELU()\n"
      "        self.bn = nn.BatchNorm2d(64)\n"
      "        self.bn2 = nn.BatchNorm2d(64)\n"
      "        self.mine = mynn.LayerNorm(3)\n"      // not torch's
      "        self.x = helper.gelu(3)\n"            // not torch's either
      "    def forward(self, x):\n"
      "        return torch.nn.functional.softplus(self.bn(x)) + F.gelu(x) + F.elu(*args)\n";
  EXPECT_EQ(listed(implied_defaults(src)),
            "nn.GELU approximate='none'\n"
            "nn.BatchNorm2d eps=1e-05\n"
            "nn.BatchNorm2d momentum=0.1\n"
            "F.softplus beta=1.0\n"
            "F.softplus threshold=20.0\n"
            "F.gelu approximate='none'\n");
}

TEST(TorchDefaults, NothingForSourcesWithoutSuchCalls) {
  EXPECT_TRUE(implied_defaults("return torch.relu(x)").empty());
  EXPECT_TRUE(implied_defaults("nn.LayerNorm(").empty()) << "an unclosed call is skipped";
}
