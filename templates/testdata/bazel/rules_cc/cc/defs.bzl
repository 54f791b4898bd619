# Test-only stand-in for rules_cc: Bazel 4's native C++ rules.
cc_library = native.cc_library
cc_binary = native.cc_binary
cc_toolchain = native.cc_toolchain
cc_toolchain_suite = native.cc_toolchain_suite
