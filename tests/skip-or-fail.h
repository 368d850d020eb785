// A test that cannot run here (no display, no xvfb-run, no model) skips:
// ctest shows it as "Skipped", not "Passed". Where everything it needs is
// installed (the quick-start suite sets RADIXCHAT_TESTS_MUST_RUN=1), a skip
// would hide a check that never ran, so there it fails instead.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>

#include "test-paths.h"

#define RC_SKIP_OR_FAIL(why)                                                       \
  do {                                                                             \
    if (const char* must = std::getenv("RADIXCHAT_TESTS_MUST_RUN"); must && *must) \
      FAIL() << why << " (RADIXCHAT_TESTS_MUST_RUN is set: this test must run)";   \
    GTEST_SKIP() << why;                                                           \
  } while (0)

// The guard of every test that loads the test model: without the file it
// skips, or fails under RADIXCHAT_TESTS_MUST_RUN. Use it in the test body or
// in SetUp() (a failure there skips the body as well).
#define RC_REQUIRE_TEST_MODEL()                                         \
  do {                                                                  \
    if (!rc::test::have_test_model())                                   \
      RC_SKIP_OR_FAIL("no model at " << rc::test::test_model_path());   \
  } while (0)
