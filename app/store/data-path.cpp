// default_database_path(): where the history lives, per the XDG Base Directory spec.
#include <cstdlib>
#include <system_error>

#include "store/store.h"

namespace rc::store {

Result<std::filesystem::path> default_database_path() {
  namespace fs = std::filesystem;
  fs::path base;
  // The spec: a relative XDG_DATA_HOME is invalid and must be ignored.
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg && fs::path(xdg).is_absolute()) {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    base = fs::path(home) / ".local" / "share";
  } else {
    return Status(StatusCode::internal,
                  "cannot locate the data folder: neither XDG_DATA_HOME nor HOME is set");
  }
  const fs::path dir = base / "radixchat";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    return Status(StatusCode::internal,
                  "cannot create the data folder " + dir.string() + ": " + ec.message());
  }
  return dir / "radixchat.db";
}

}  // namespace rc::store
