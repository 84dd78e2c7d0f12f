#pragma once
// Knobs: compile-time parameters a kernel declares in its own source, so `cutegen tune` can try
// other values without an LLM (docs/tuning.md). One form only, valid C++ with the default as it stands:
//
//   // cutegen:knob BLOCK_THREADS in {128, 256, 512, 1024}
//   #ifndef BLOCK_THREADS
//   #define BLOCK_THREADS 256
//   #endif
//   // cutegen:require BLOCK_THREADS * VEC <= 4096
//
// The default lives in the #define only (one place to read it, none to disagree with); a variant is
// the same source compiled with -DNAME=VALUE, and the chosen one is written back with its values as the
// defaults ("baked"), a normal candidate that needs no -D.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"

namespace cutegen {

struct Knob {
  std::string name;
  std::vector<int64_t> values;  // as declared, no duplicates
  int64_t default_value = 0;    // from the #define; one of `values`
  int line = 0;                 // the cutegen:knob line (1-based)
  // Where the default's digits sit in the source, for baking.
  std::size_t default_begin = 0, default_end = 0;
};

struct KnobExpr;  // a parsed constraint (knobs.cpp)

struct Constraint {
  std::string text;  // as written after cutegen:require
  int line = 0;
  std::shared_ptr<const KnobExpr> expr;
};

// One value per knob, in declaration order.
using KnobValues = std::vector<int64_t>;

struct KnobSpec {
  std::vector<Knob> knobs;
  std::vector<Constraint> constraints;

  bool empty() const { return knobs.empty(); }
  KnobValues defaults() const;
  // Every constraint holds (a division by zero makes its constraint false). Index of the first that
  // fails in `failed` when given.
  bool satisfies(const KnobValues& values, int* failed = nullptr) const;
  // "BLOCK_THREADS=256 VEC=4": how tables and progress lines name a variant.
  std::string describe(const KnobValues& values) const;
};

// Reads every cutegen:knob and cutegen:require directive (a `//` comment at the start of a line).
// Error, one line naming the source line: a malformed directive, a knob line not followed by its
// #ifndef/#define/#endif block, a default not among the values, a duplicate knob or value, an unknown
// knob or a syntax error in a constraint, constraints that the defaults break.
// A source without directives is an empty spec, not an error.
Result<KnobSpec> parse_knobs(const std::string& source);

struct VariantPlan {
  std::vector<KnobValues> variants;  // the default first, then the rest in a fixed order
  std::size_t feasible = 0;          // combinations that satisfy the constraints
  std::size_t combinations = 0;      // the whole cartesian product
  bool sampled = false;              // feasible > max_variants: `variants` is a deterministic sample
};

// The cartesian product filtered by the constraints; over `max_variants`, a sample that always holds
// the default and is the same on every run (variants ordered by a hash of their values). Error when
// the product is too large to enumerate (over a million combinations) or max_variants < 1.
Result<VariantPlan> plan_variants(const KnobSpec& spec, std::size_t max_variants);

// The source with `values` written in as the defaults: the #define lines change, nothing else.
std::string bake_knobs(const std::string& source, const KnobSpec& spec, const KnobValues& values);

}  // namespace cutegen
