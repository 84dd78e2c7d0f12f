#pragma once
// What an evaluation in the run log was for, typed: the loop names each kernel it judges (the seed, a
// synthesis or restart, an optimisation step's kernel or one of its candidates, their repairs, the
// kernel a tuning chose) and the run view groups evaluations by it. The text form ("step3-c2-repair1")
// names the step directories and is what format-2 logs hold; parse() is the one place it is read back.
#include <optional>
#include <string>
#include <string_view>

namespace cutegen {

enum class AttemptStage { seed, synthesis, restart, step, tune };
std::string_view to_string(AttemptStage s);
std::optional<AttemptStage> parse_attempt_stage(std::string_view word);

struct AttemptLabel {
  AttemptStage stage = AttemptStage::synthesis;
  int step = 0;       // step and tune: the optimisation step (tune: the step the tuning followed; 0: the first kernel)
  int candidate = 0;  // step: the candidate of a step with several (1-based); 0: the step's only kernel
  int repair = 0;     // the diagnose+repair round that produced it; 0: the kernel as first written

  // seed, synthesis, restart-repair2, step3, step3-repair1, step3-c2, step3-c2-repair1, tune3
  std::string text() const;
  // Reads text(); nullopt for anything else.
  static std::optional<AttemptLabel> parse(std::string_view text);
  // The same kernel before any repair.
  AttemptLabel unrepaired() const {
    AttemptLabel l = *this;
    l.repair = 0;
    return l;
  }
  bool operator==(const AttemptLabel&) const = default;
};

}  // namespace cutegen
