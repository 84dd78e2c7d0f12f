#pragma once
// The exit status of every cutegen command: the same outcome exits the same way whichever command met
// it (README.md, "Exit status", is the table users read; cli_exit_codes_test.sh holds the commands to it).

namespace cutegen {

inline constexpr int kExitOk = 0;
// Anything the user must act on: an error, a kernel the judge or the compiler refused, no correct
// kernel found. One line on stderr says what.
inline constexpr int kExitFailure = 1;
// The command line itself: an unknown option, a value out of range, a --config file that is not there.
inline constexpr int kExitBadArgument = 2;
// The problem has no seed and nothing else could write its kernel: `cutegen seed`, and `optimize` or a
// bench task without an LLM or with --start seed (docs/seed.md). bench records such a task as
// no_correct_kernel with stop reason no_seed instead of a failure every task would share.
inline constexpr int kExitNoSeed = 3;

}  // namespace cutegen
