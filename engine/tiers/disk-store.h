// L3: KV blocks in a local directory, with a byte budget and its own LRU.
//
// Layout: <root>/<keyspace id hex>/<block key hex>.rckv, one file per block,
// sealed (block-seal.h, context "disk") under the installation's key, plus
// a "lock" file. Folders are made 0700 and files
// 0600 (radixchat/private-files.h): blocks are derived from prompts.
//
// Crash safety: a block is written to "<key>.<n>.tmp", fsynced (when
// DiskStoreOptions::fsync) and renamed over its name, so at any moment a
// block file is either absent or complete; a kill -9 leaves at most a .tmp
// file, which open() deletes. The index is rebuilt by scanning the
// keyspace's folder on open (names and sizes; contents are verified on
// get()), with LRU order from the files' modification times, which get()
// refreshes, so recency survives a restart.
//
// Budget: put() evicts least recently used blocks before writing, counting
// the bytes other puts are still writing, so the block files and the .tmp
// files being written together never exceed the budget. The budget covers this keyspace's folder: a
// second model under the same root has its own budget.
//
// One process per keyspace folder: open() takes an exclusive flock on its
// lock file and fails (invalid_argument naming the folder) when another
// process holds it; the kernel drops the lock on any exit, kill -9 included.
// Thread-safe: one mutex around the index and the reads; put() writes its
// file outside it (under a .tmp name of its own), so readers never wait
// for the disk.
#pragma once

#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "tiers/block-seal.h"
#include "tiers/block-store.h"

namespace rc::tiers {

struct DiskStoreOptions {
  std::filesystem::path root;  // empty: default_disk_root()
  int64_t budget_bytes = int64_t(2) << 30;
  bool fsync = true;                   // off only where power loss does not matter (tests)
  std::shared_ptr<const SealKey> key;  // required: blocks are sealed under it
};

// $XDG_CACHE_HOME/radixchat/kv, else $HOME/.cache/radixchat/kv; not_found
// when neither variable is set to an absolute path.
Result<std::filesystem::path> default_disk_root();

class DiskStore final : public BlockStore {
 public:
  static Result<std::unique_ptr<DiskStore>> open(const Keyspace& space,
                                                 const DiskStoreOptions& options);
  ~DiskStore() override;

  const Keyspace& keyspace() const override { return space_; }
  Result<Block> get(const BlockKey& key) override;
  Status put(const Block& block) override;
  Result<bool> contains(const BlockKey& key) override;
  Status erase(const BlockKey& key) override;
  StoreStats stats() const override;
  Status for_each_block(const BlockVisitor& visit) override;
  Status clear() override;
  void set_drop_listener(DropListener listener) override { on_drop_ = std::move(listener); }

  // The keys held, least recently used first.
  std::vector<BlockKey> keys() const;
  const std::filesystem::path& folder() const { return dir_; }

  // Erases every keyspace folder under `root` (every model's blocks), for
  // `cache-clear`. A folder another process holds is left and named in the
  // error (permission_denied or invalid_argument); returns the blocks removed.
  static Result<int64_t> clear_root(const std::filesystem::path& root);

 private:
  struct Entry {
    int64_t bytes = 0;
    std::list<BlockKey>::iterator lru;
  };
  DiskStore(const Keyspace& space, const DiskStoreOptions& options, std::filesystem::path dir,
            int lock_fd);
  Status scan();
  std::filesystem::path file_of(const BlockKey& key) const;
  void drop_locked(const BlockKey& key);
  void touch_locked(const BlockKey& key);

  Keyspace space_;
  DiskStoreOptions options_;
  std::filesystem::path dir_;
  int lock_fd_ = -1;
  mutable std::mutex mu_;
  std::list<BlockKey> lru_;  // front = least recently used
  std::unordered_map<BlockKey, Entry, BlockKeyHash> index_;
  StoreStats stats_;
  int64_t writing_bytes_ = 0;  // reserved by puts writing outside the lock
  DropListener on_drop_;
};

}  // namespace rc::tiers
