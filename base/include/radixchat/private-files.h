// Owner-only files: what RadixChat writes (chat history, recordings,
// exports, downloads) may hold other people's prompts on a shared machine,
// so it is readable by its owner only, whatever the umask.
//
// Folders are made 0700 and files 0600 at creation (the mode is given to
// mkdir/open, never fixed up afterwards, so no other account can open them
// in between). Existing paths with wider modes are narrowed by
// tighten_to_owner(), which the app runs on start and reports once.
//
// Any thread. Failures are values: internal with the path and errno text
// (not_found when a parent folder is missing).
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "radixchat/status.h"

namespace rc {

inline constexpr unsigned kPrivateDirMode = 0700;
inline constexpr unsigned kPrivateFileMode = 0600;

// Creates `dir` and its missing parents, each new folder 0700. An existing
// folder keeps its mode (a parent such as ~/.local may be the user's choice).
Status make_private_dir(const std::filesystem::path& dir);

enum class CreateMode {
  exclusive,  // the file must not exist (O_EXCL)
  truncate,   // created or emptied
  keep,       // created or opened as it is (read-write, for resuming)
};

// Opens `path` read-write, creating it 0600. An existing file that is
// opened has its group/other bits removed. Returns the descriptor (the
// caller closes it); O_CLOEXEC is set.
Result<int> open_private_file(const std::filesystem::path& path, CreateMode mode);

// Writes `bytes` to `path` (created 0600 or truncated), for exports.
Status write_private_file(const std::filesystem::path& path, std::string_view bytes);

// Removes group/other permission bits from each existing path given;
// missing paths are skipped. Returns the paths whose mode changed. Symbolic
// links are not followed (chmod would change their target).
Result<std::vector<std::filesystem::path>> tighten_to_owner(
    const std::vector<std::filesystem::path>& paths);

// "made A, B readable by their owner only (...)", for
// the single log line the app prints on start; "" when `paths` is empty.
std::string tightened_notice(const std::vector<std::filesystem::path>& paths);

}  // namespace rc
