// main() for the Qt suites: a QApplication must exist before any widget,
// and gtest_discover_tests runs this binary at build time without the test
// ENVIRONMENT, so the offscreen platform is chosen here when none is set
// (build-notes: Qt platforms). These suites need no OpenGL.
#include <gtest/gtest.h>
#include <QApplication>

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
