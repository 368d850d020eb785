// Databases as older builds wrote them, for the tests of the migrations
// after them (app/store/schema.h).
#pragma once

#include <filesystem>
#include <string>

#include "store-test-util.h"
#include "store/schema.h"

namespace rc::store::testing {

// The database a build of schema `version` wrote: WAL, that version's
// migrations run by hand, `rows` (SQL) inserted, user_version set.
inline void write_database_at_version(const std::filesystem::path& path, int version,
                                      const std::string& rows) {
  RawDb raw(path);
  raw.exec("PRAGMA journal_mode = WAL");
  for (int v = 1; v <= version; ++v) raw.exec(std::string(detail::migration_sql(v)));
  raw.exec(rows + "PRAGMA user_version = " + std::to_string(version) + ";");
}

}  // namespace rc::store::testing
