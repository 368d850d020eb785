// The guard of every test that loads the test model (test-paths.h): without
// the file the test skips, or fails where RADIXCHAT_TESTS_MUST_RUN is set
// (skip-or-fail.h). Use it in the test body or in SetUp(); a failure or skip
// there skips the body as well. The including target must define
// RADIXCHAT_SOURCE_DIR, as test-paths.h says.
#pragma once

#include "skip-or-fail.h"
#include "test-paths.h"

#define RC_REQUIRE_TEST_MODEL()                                       \
  do {                                                                \
    if (!rc::test::have_test_model())                                 \
      RC_SKIP_OR_FAIL("no model at " << rc::test::test_model_path()); \
  } while (0)
