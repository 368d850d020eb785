// Internal: schema versions and migrations, and the read-only checks that run
// before Store::open writes anything.
#pragma once

#include <filesystem>
#include <string_view>

#include <sqlite3.h>

#include "radixchat/status.h"

namespace rc::store::detail {

// SQL of migration to version v (1-based), v in [1, kSchemaVersion]. Exposed
// so tests can build an old-version database exactly as an old build would.
std::string_view migration_sql(int version);

// Read-only: user_version newer than this build (unsupported), a SQLite file
// of another application, or a failed PRAGMA quick_check (corrupt_data).
// Messages name `path`. Leaves the file as it found it.
Status validate(sqlite3* db, const std::filesystem::path& path);

// Applies every migration above the current user_version, each in its own
// transaction that also bumps user_version.
Status migrate(sqlite3* db);

}  // namespace rc::store::detail
