// default_database_path(): where the history lives, per the XDG Base Directory
// spec; restrict_data_folder(): that folder kept to its owner.
#include <cstdlib>
#include <system_error>

#include "radixchat/private-files.h"
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
  if (Status s = make_private_dir(dir); !s.ok()) {
    return Status(StatusCode::internal, "cannot create the data folder: " + s.message());
  }
  return dir / "radixchat.db";
}

Result<std::string> restrict_data_folder(const std::filesystem::path& database) {
  namespace fs = std::filesystem;
  const fs::path dir = database.has_parent_path() ? database.parent_path() : fs::path(".");
  std::vector<fs::path> paths = {dir};
  std::error_code ec;
  // Everything RadixChat keeps beside the history (settings, models/,
  // partial downloads): the folder being 0700 already hides it, the files'
  // own modes keep it hidden if the folder is ever opened up again.
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    paths.push_back(it->path());
  auto changed = tighten_to_owner(paths);
  if (!changed.ok()) return changed.status();
  return tightened_notice(changed.value());
}

}  // namespace rc::store
