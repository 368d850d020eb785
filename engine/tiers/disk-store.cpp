#include "tiers/disk-store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "radixchat/private-files.h"

namespace rc::tiers {

namespace fs = std::filesystem;

namespace {

constexpr const char* kExt = ".rckv";
constexpr std::string_view kDiskContext = "disk";

Status io_error(const fs::path& p, const char* what) {
  return Status(
      errno == EACCES || errno == EPERM ? StatusCode::permission_denied : StatusCode::internal,
      std::string(what) + " " + p.string() + ": " + std::strerror(errno));
}

Status write_all(int fd, const uint8_t* p, size_t n, const fs::path& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return io_error(path, "cannot write");
    p += w;
    n -= size_t(w);
  }
  return {};
}

// Reads at most `limit` bytes: a file grown by hand cannot make us allocate more.
Result<std::vector<uint8_t>> read_file(const fs::path& path, size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status(StatusCode::not_found, "no block file " + path.string());
    return io_error(path, "cannot open");
  }
  std::vector<uint8_t> out(limit + 1);
  size_t got = 0;
  while (got < out.size()) {
    ssize_t r = ::read(fd, out.data() + got, out.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      Status s = io_error(path, "cannot read");
      ::close(fd);
      return s;
    }
    if (r == 0) break;
    got += size_t(r);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

}  // namespace

Result<fs::path> default_disk_root() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return fs::path(xdg) / "radixchat" / "kv";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return fs::path(home) / ".cache" / "radixchat" / "kv";
  return Status(StatusCode::not_found,
                "no disk cache folder: neither XDG_CACHE_HOME nor HOME is an absolute path");
}

Result<std::unique_ptr<DiskStore>> DiskStore::open(const Keyspace& space,
                                                   const DiskStoreOptions& options) {
  if (Status s = space.validate(); !s.ok()) return s;
  if (!options.key)
    return Status(StatusCode::invalid_argument, "the disk tier needs a sealing key");
  if (options.budget_bytes < int64_t(sealed_block_bytes(space)))
    return Status(StatusCode::invalid_argument,
                  "disk cache budget " + std::to_string(options.budget_bytes) +
                      " bytes is smaller than one KV block (" +
                      std::to_string(sealed_block_bytes(space)) + " bytes)");
  fs::path root = options.root;
  if (root.empty()) {
    Result<fs::path> r = default_disk_root();
    if (!r.ok()) return r.status();
    root = r.value();
  }
  fs::path dir = root / space.id().hex();
  if (Status s = make_private_dir(dir); !s.ok()) return s;
  Result<int> lock = open_private_file(dir / "lock", CreateMode::keep);
  if (!lock.ok()) return lock.status();
  if (::flock(lock.value(), LOCK_EX | LOCK_NB) != 0) {
    ::close(lock.value());
    return Status(StatusCode::invalid_argument,
                  "disk cache folder " + dir.string() + " is in use by another process");
  }
  std::unique_ptr<DiskStore> store(new DiskStore(space, options, dir, lock.value()));
  if (Status s = store->scan(); !s.ok()) return s;
  return store;
}

DiskStore::DiskStore(const Keyspace& space, const DiskStoreOptions& options, fs::path dir,
                     int lock_fd)
    : space_(space), options_(options), dir_(std::move(dir)), lock_fd_(lock_fd) {}

DiskStore::~DiskStore() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

fs::path DiskStore::file_of(const BlockKey& key) const { return dir_ / (key.hex() + kExt); }

Status DiskStore::scan() {
  struct Found {
    BlockKey key;
    int64_t bytes;
    struct timespec mtime;
  };
  std::vector<Found> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    std::string name = p.filename().string();
    if (name.ends_with(".tmp")) {
      // A write that never reached its rename (kill -9, power loss).
      ::unlink(p.c_str());
      continue;
    }
    if (!name.ends_with(kExt)) continue;
    Result<BlockKey> key = BlockKey::from_hex(name.substr(0, name.size() - std::strlen(kExt)));
    struct stat st;
    if (!key.ok() || ::lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    found.push_back({key.value(), int64_t(st.st_size), st.st_mtim});
  }
  if (ec) return Status(StatusCode::internal, "cannot list " + dir_.string() + ": " + ec.message());
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    if (a.mtime.tv_sec != b.mtime.tv_sec) return a.mtime.tv_sec < b.mtime.tv_sec;
    return a.mtime.tv_nsec < b.mtime.tv_nsec;
  });
  for (const Found& f : found) {
    lru_.push_back(f.key);
    index_[f.key] = {f.bytes, std::prev(lru_.end())};
    stats_.bytes += f.bytes;
  }
  stats_.blocks = int64_t(index_.size());
  // A smaller budget than last time: shed the oldest now, not on the next put.
  while (stats_.bytes > options_.budget_bytes && !lru_.empty()) {
    drop_locked(lru_.front());
    ++stats_.evictions;
  }
  return {};
}

void DiskStore::drop_locked(const BlockKey& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return;
  ::unlink(file_of(key).c_str());
  stats_.bytes -= it->second.bytes;
  lru_.erase(it->second.lru);
  index_.erase(it);
  stats_.blocks = int64_t(index_.size());
  if (on_drop_) on_drop_(key);
}

void DiskStore::touch_locked(const BlockKey& key) {
  auto it = index_.find(key);
  lru_.splice(lru_.end(), lru_, it->second.lru);
  // Recency for the next open(); a failure only costs LRU order.
  ::utimensat(AT_FDCWD, file_of(key).c_str(), nullptr, 0);
}

Result<Block> DiskStore::get(const BlockKey& key) {
  std::lock_guard<std::mutex> g(mu_);
  if (index_.find(key) == index_.end()) {
    ++stats_.misses;
    return Status(StatusCode::not_found, "block " + key.hex() + " is not on disk");
  }
  Result<std::vector<uint8_t>> bytes = read_file(file_of(key), sealed_block_bytes(space_));
  if (!bytes.ok()) {
    if (bytes.status().code() == StatusCode::not_found) {
      // Removed behind our back: a miss, and forgotten.
      drop_locked(key);
      ++stats_.misses;
    } else {
      ++stats_.errors;
    }
    return bytes.status();
  }
  Decoded d = open_sealed_block(space_, *options_.key, kDiskContext, key, bytes.value());
  if (d.fault != BlockFault::none) {
    ++(d.fault == BlockFault::foreign ? stats_.refused_foreign : stats_.refused_corrupt);
    drop_locked(key);
    return d.status;
  }
  ++stats_.hits;
  touch_locked(key);
  return std::move(d.block);
}

Status DiskStore::for_each_block(const BlockVisitor& visit) {
  for (const BlockKey& key : keys()) {
    // Read outside the lock, as put() writes: a block dropped meanwhile is
    // simply not there any more.
    Result<std::vector<uint8_t>> bytes = read_file(file_of(key), sealed_block_bytes(space_));
    if (!bytes.ok()) {
      if (bytes.status().code() == StatusCode::not_found) continue;
      return bytes.status();
    }
    Decoded d = open_sealed_block(space_, *options_.key, kDiskContext, key, bytes.value());
    if (d.fault == BlockFault::none) visit(d.block);
  }
  return {};
}

Status DiskStore::put(const Block& block) {
  Result<std::vector<uint8_t>> bytes = seal_block(space_, *options_.key, kDiskContext, block);
  if (!bytes.ok()) return bytes.status();
  const int64_t size = int64_t(bytes.value().size());
  {
    // Room is made and reserved under the lock; the write and its fsync run
    // outside it, so a reader (the engine thread) never waits for the disk.
    std::lock_guard<std::mutex> g(mu_);
    drop_locked(block.key);
    while (stats_.bytes + writing_bytes_ + size > options_.budget_bytes && !lru_.empty()) {
      drop_locked(lru_.front());
      ++stats_.evictions;
    }
    writing_bytes_ += size;
  }
  fs::path final_path = file_of(block.key);
  // Each put its own .tmp name: two puts of one key may overlap.
  static std::atomic<uint64_t> next_tmp{0};
  fs::path tmp = dir_ / (block.key.hex() + "." + std::to_string(next_tmp++) + ".tmp");
  Status s;
  Result<int> fd = open_private_file(tmp, CreateMode::truncate);
  if (!fd.ok()) {
    s = fd.status();
  } else {
    s = write_all(fd.value(), bytes.value().data(), bytes.value().size(), tmp);
    if (s.ok() && options_.fsync && ::fsync(fd.value()) != 0) s = io_error(tmp, "cannot fsync");
    ::close(fd.value());
    if (s.ok() && ::rename(tmp.c_str(), final_path.c_str()) != 0)
      s = io_error(final_path, "cannot rename to");
    if (!s.ok()) ::unlink(tmp.c_str());
  }
  std::lock_guard<std::mutex> g(mu_);
  writing_bytes_ -= size;
  if (!s.ok()) {
    ++stats_.errors;
    return s;
  }
  if (auto old = index_.find(block.key); old != index_.end()) {
    // Another put of this key finished first; its file was replaced by ours.
    stats_.bytes -= old->second.bytes;
    lru_.erase(old->second.lru);
    index_.erase(old);
  }
  lru_.push_back(block.key);
  index_[block.key] = {size, std::prev(lru_.end())};
  stats_.bytes += size;
  stats_.blocks = int64_t(index_.size());
  ++stats_.puts;
  return {};
}

Result<bool> DiskStore::contains(const BlockKey& key) {
  std::lock_guard<std::mutex> g(mu_);
  return index_.find(key) != index_.end();
}

Status DiskStore::erase(const BlockKey& key) {
  std::lock_guard<std::mutex> g(mu_);
  drop_locked(key);
  return {};
}

Status DiskStore::clear() {
  std::lock_guard<std::mutex> g(mu_);
  while (!lru_.empty()) drop_locked(lru_.front());
  return {};
}

StoreStats DiskStore::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  return stats_;
}

std::vector<BlockKey> DiskStore::keys() const {
  std::lock_guard<std::mutex> g(mu_);
  return {lru_.begin(), lru_.end()};
}

}  // namespace rc::tiers

namespace rc::tiers {

Result<int64_t> DiskStore::clear_root(const fs::path& root) {
  std::error_code ec;
  if (!fs::exists(root, ec)) return int64_t(0);
  int64_t removed = 0;
  std::vector<std::string> busy;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path dir = it->path();
    // Only keyspace folders: 32 hex digits, as open() names them.
    if (!Hash128::from_hex(dir.filename().string()).ok() || !it->is_directory()) continue;
    const fs::path lock_path = dir / "lock";
    const int lock = ::open(lock_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (lock >= 0 && ::flock(lock, LOCK_EX | LOCK_NB) != 0) {
      ::close(lock);
      busy.push_back(dir.string());
      continue;
    }
    std::error_code list_ec;
    for (fs::directory_iterator f(dir, list_ec), fend; !list_ec && f != fend;
         f.increment(list_ec)) {
      const std::string name = f->path().filename().string();
      if (!name.ends_with(kExt) && !name.ends_with(".tmp")) continue;
      if (::unlink(f->path().c_str()) != 0) {
        if (lock >= 0) ::close(lock);
        return io_error(f->path(), "cannot remove");
      }
      if (name.ends_with(kExt)) ++removed;
    }
    ::unlink(lock_path.c_str());
    if (lock >= 0) ::close(lock);
    ::rmdir(dir.c_str());
  }
  if (ec)
    return Status(ec.value() == EACCES ? StatusCode::permission_denied : StatusCode::internal,
                  "cannot list " + root.string() + ": " + ec.message());
  if (!busy.empty())
    return Status(StatusCode::invalid_argument,
                  "disk cache folder " + busy.front() +
                      " is in use by a running RadixChat; quit it and clear again (" +
                      std::to_string(removed) + " blocks removed elsewhere)");
  return removed;
}

}  // namespace rc::tiers
