// Internal: schema versions and migrations, and the read-only checks that run
// before Store::open writes anything.
#pragma once

#include <filesystem>
#include <span>
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

// The same two steps for another file kept with this schema machinery (the
// document library): `latest` is the newest version this build writes,
// `migrations[v - 1]` the SQL that makes version v.
Status validate(sqlite3* db, const std::filesystem::path& path, int latest);
Status migrate(sqlite3* db, std::span<const std::string_view> migrations);

}  // namespace rc::store::detail
