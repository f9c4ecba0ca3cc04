"""How the e2e tests build the C++ kforge generates for the CPU when they run it against the reference
interpreter (tools/check-program --opt-level, test_fused_cpu's harness): without optimising. These tests check
what the code computes, and g++ gives the same bits at -O0 as at -O2 (ISO C++, no -ffast-math, no FP
contraction), in half the compile time (one generated program with check-program's harness: 3.2 s of CPU at -O0,
6.4 s at -O2). Warnings and optimised builds of generated programs stay covered by the Paddle fixture batches
(tests/paddle, g++ -O1 -Werror: the warnings that need the optimiser's flow analysis) and at -O2 by tools/run-model's
build in the run-model tests."""

CHECK_OPT_LEVEL = "0"
