#include "radixchat/private-files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rc {

namespace fs = std::filesystem;

namespace {

Status errno_status(const std::string& what, const fs::path& path, int err) {
  const StatusCode code = err == ENOENT                   ? StatusCode::not_found
                          : err == EACCES || err == EPERM ? StatusCode::permission_denied
                                                          : StatusCode::internal;
  return Status(code, what + " " + path.string() + ": " + std::strerror(err));
}

}  // namespace

Status make_private_dir(const fs::path& dir) {
  if (dir.empty()) return Status(StatusCode::invalid_argument, "empty folder name");
  // Shortest existing prefix first, so every folder created here is new.
  std::vector<fs::path> missing;
  for (fs::path p = dir; !p.empty(); p = p.parent_path()) {
    struct stat st;
    if (::stat(p.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode))
        return Status(StatusCode::invalid_argument, p.string() + " is not a folder");
      break;
    }
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), kPrivateDirMode) != 0) {
      if (errno == EEXIST) continue;  // another process made it meanwhile
      return errno_status("cannot create the folder", *it, errno);
    }
    // A umask that removes owner bits (0277) would leave it unusable.
    ::chmod(it->c_str(), kPrivateDirMode);
  }
  return {};
}

Result<int> open_private_file(const fs::path& path, CreateMode mode) {
  int flags = O_RDWR | O_CREAT | O_CLOEXEC;
  if (mode == CreateMode::exclusive) flags |= O_EXCL;
  if (mode == CreateMode::truncate) flags |= O_TRUNC;
  const int fd = ::open(path.c_str(), flags, kPrivateFileMode);
  if (fd < 0) {
    if (errno == EEXIST)
      return Status(StatusCode::invalid_argument, path.string() + " already exists");
    return errno_status("cannot create", path, errno);
  }
  struct stat st;
  if (::fstat(fd, &st) == 0 && (st.st_mode & 0777) != kPrivateFileMode &&
      st.st_uid == ::geteuid()) {
    // Only narrows an existing file (or widens the owner's bits under a
    // umask like 0277): never gives anyone else access.
    ::fchmod(fd, (st.st_mode & 0700) | kPrivateFileMode);
  }
  return fd;
}

Status write_private_file(const fs::path& path, std::string_view bytes) {
  auto fd = open_private_file(path, CreateMode::truncate);
  if (!fd.ok()) return fd.status();
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(*fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(*fd);
      return errno_status("cannot write", path, err);
    }
    done += size_t(n);
  }
  if (::close(*fd) != 0) return errno_status("cannot write", path, errno);
  return {};
}

Result<std::vector<fs::path>> tighten_to_owner(const std::vector<fs::path>& paths) {
  std::vector<fs::path> changed;
  for (const fs::path& p : paths) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;
      return errno_status("cannot read the permissions of", p, errno);
    }
    if (S_ISLNK(st.st_mode) || (st.st_mode & 077) == 0) continue;
    if (::chmod(p.c_str(), st.st_mode & 07700) != 0)
      return errno_status("cannot restrict the permissions of", p, errno);
    changed.push_back(p);
  }
  return changed;
}

std::string tightened_notice(const std::vector<fs::path>& paths) {
  if (paths.empty()) return {};
  std::string out = "made ";
  for (size_t i = 0; i < paths.size(); ++i) out += (i ? ", " : "") + paths[i].string();
  out += " readable by their owner only (other users could read them before)";
  return out;
}

}  // namespace rc
