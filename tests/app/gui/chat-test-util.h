// Helpers for the desktop app's suites: waiting on the event loop. The model
// file is test-paths.h's.
#pragma once

#include <QTest>
#include <QtGlobal>

#include "test-paths.h"

namespace rc::test {

// Runs the event loop until pred() holds or `ms` pass.
template <typename Pred>
bool waitUntil(Pred pred, int ms = 60000) {
  return QTest::qWaitFor(pred, ms);
}

}  // namespace rc::test
