// kv-security.h on libzmq's C API (zmq_curve_keypair, zmq_curve_public,
// zmq_z85_decode, zmq_setsockopt).
#include "kv-security.h"

#include <sys/stat.h>
#include <zmq.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "radixchat/private-files.h"

namespace rc::kv_events {

namespace fs = std::filesystem;

namespace {

constexpr size_t kZ85KeyChars = 40;

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool valid_z85_key(const std::string& key) {
  if (key.size() != kZ85KeyChars) return false;
  uint8_t raw[32];
  return zmq_z85_decode(raw, key.c_str()) != nullptr;
}

// "name = value" lines and bare lines of a key file, comments skipped.
struct KeyFile {
  std::string public_key, secret_key;
  std::vector<std::string> bare;
};

Result<KeyFile> parse_key_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return Status(StatusCode::not_found, "cannot read the key file " + path.string());
  KeyFile k;
  std::string line;
  while (std::getline(in, line)) {
    line = trim(line);
    // Z85 has '#' in its alphabet: a bare key is never taken for a comment.
    if (valid_z85_key(line)) {
      k.bare.push_back(line);
      continue;
    }
    if (line.empty() || line[0] == '#' || line.rfind("==", 0) == 0) continue;
    const auto eq = line.find('=');
    // A Z85 key may itself contain '='; a "name = value" line has a name.
    const std::string name = eq == std::string::npos ? "" : trim(line.substr(0, eq));
    if (name == "public-key") {
      k.public_key = trim(line.substr(eq + 1));
    } else if (name == "secret-key") {
      k.secret_key = trim(line.substr(eq + 1));
    } else {
      k.bare.push_back(line);
    }
  }
  return k;
}

Status socket_option(void* socket, int option, const void* value, size_t size, const char* what) {
  if (zmq_setsockopt(socket, option, value, size) == 0) return {};
  return Status(StatusCode::invalid_argument,
                std::string("cannot set up CURVE (") + what + "): " + zmq_strerror(zmq_errno()));
}

}  // namespace

Status curve_available() {
  if (zmq_has("curve")) return {};
  return Status(StatusCode::unsupported,
                "this libzmq was built without CURVE (libsodium); KV events cannot be encrypted");
}

Result<CurveKeyPair> generate_curve_keypair() {
  if (Status s = curve_available(); !s.ok()) return s;
  char pub[kZ85KeyChars + 1], sec[kZ85KeyChars + 1];
  if (zmq_curve_keypair(pub, sec) != 0)
    return Status(StatusCode::internal,
                  std::string("cannot make a CURVE key pair: ") + zmq_strerror(zmq_errno()));
  return CurveKeyPair{pub, sec};
}

Result<CurveKeyPair> read_curve_secret_file(const fs::path& path) {
  if (Status s = curve_available(); !s.ok()) return s;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return Status(StatusCode::not_found, "no CURVE secret key file " + path.string());
  // As ssh does with private keys: a secret others can read is no secret.
  if (st.st_mode & 077)
    return Status(StatusCode::invalid_argument,
                  "the CURVE secret key file " + path.string() +
                      " is readable by other users; run chmod 600 on it");
  auto k = parse_key_file(path);
  if (!k.ok()) return k.status();
  if (!valid_z85_key(k->secret_key))
    return Status(StatusCode::invalid_argument,
                  path.string() + " has no valid 'secret-key = <40 Z85 characters>' line");
  char pub[kZ85KeyChars + 1];
  if (zmq_curve_public(pub, k->secret_key.c_str()) != 0)
    return Status(StatusCode::invalid_argument, path.string() + ": the secret key is not usable");
  if (!k->public_key.empty() && k->public_key != pub)
    return Status(StatusCode::invalid_argument,
                  path.string() + ": its public-key line does not belong to its secret key");
  return CurveKeyPair{pub, k->secret_key};
}

Result<std::string> read_curve_public_key(const std::string& key_or_file) {
  if (Status s = curve_available(); !s.ok()) return s;
  std::error_code ec;
  if (!fs::exists(key_or_file, ec)) {
    if (valid_z85_key(key_or_file)) return key_or_file;
    return Status(
        StatusCode::invalid_argument,
        "'" + key_or_file + "' is neither a CURVE public key (40 Z85 characters) nor a key file");
  }
  auto k = parse_key_file(key_or_file);
  if (!k.ok()) return k.status();
  // The secret belongs on the publisher's machine only.
  if (!k->secret_key.empty())
    return Status(StatusCode::invalid_argument,
                  key_or_file + " is a secret key file; give the subscriber the .pub file");
  std::string key = k->public_key;
  if (key.empty() && k->bare.size() == 1) key = k->bare.front();
  if (!valid_z85_key(key))
    return Status(StatusCode::invalid_argument,
                  key_or_file + " holds no CURVE public key (40 Z85 characters)");
  return key;
}

Status write_curve_key_files(const fs::path& path, const CurveKeyPair& keys) {
  const std::string secret =
      "# RadixChat KV-events CURVE key pair (ZeroMQ Z85). Keep this file private:\n"
      "# serve --kv-events-curve-secret " +
      path.filename().string() +
      ". Subscribers get the .pub file.\n"
      "public-key = " +
      keys.public_key + "\nsecret-key = " + keys.secret_key + "\n";
  const std::string pub =
      "# RadixChat KV-events CURVE public key (ZeroMQ Z85): cache-watch "
      "--kv-events-curve-server-key " +
      path.filename().string() + ".pub\npublic-key = " + keys.public_key + "\n";
  const fs::path pub_path = path.string() + ".pub";
  std::error_code ec;
  for (const fs::path& p : {path, pub_path})
    if (fs::exists(p, ec))
      return Status(StatusCode::invalid_argument,
                    p.string() + " already exists; choose another name");
  auto fd = open_private_file(path, CreateMode::exclusive);
  if (!fd.ok()) return fd.status();
  ::close(*fd);
  if (Status s = write_private_file(path, secret); !s.ok()) return s;
  return write_private_file(pub_path, pub);
}

bool is_local_endpoint(const std::string& endpoint) {
  const auto sep = endpoint.find("://");
  if (sep == std::string::npos) return false;
  const std::string transport = endpoint.substr(0, sep);
  if (transport == "ipc" || transport == "inproc") return true;
  if (transport != "tcp") return false;
  std::string address = endpoint.substr(sep + 3);
  // tcp://[source;]host:port: the host is between the last ';' and the
  // last ':'.
  if (const auto semi = address.rfind(';'); semi != std::string::npos)
    address = address.substr(semi + 1);
  const auto colon = address.rfind(':');
  std::string host = colon == std::string::npos ? address : address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host == "localhost" || host == "lo" || host == "::1" || host == "0:0:0:0:0:0:0:1")
    return true;
  // 127.0.0.0/8, written as a dotted quad.
  int a = 0, b = 0, c = 0, d = 0;
  char tail = 0;
  if (std::sscanf(host.c_str(), "%d.%d.%d.%d%c", &a, &b, &c, &d, &tail) == 4)
    return a == 127 && b >= 0 && b < 256 && c >= 0 && c < 256 && d >= 0 && d < 256;
  return false;
}

Status check_publish_endpoint(const std::string& flag, const std::string& endpoint,
                              bool allow_remote, bool curve) {
  if (endpoint.empty() || allow_remote || curve || is_local_endpoint(endpoint)) return {};
  // Not an endpoint at all: binding it fails with ZeroMQ's own reason.
  const std::string transport = endpoint.substr(0, endpoint.find("://"));
  static const char* const kNetwork[] = {"tcp", "pgm",  "epgm", "udp", "ws",
                                         "wss", "tipc", "vmci", "norm"};
  if (endpoint.find("://") == std::string::npos ||
      std::find(std::begin(kNetwork), std::end(kNetwork), transport) == std::end(kNetwork))
    return {};
  return Status(StatusCode::invalid_argument,
                flag + " " + endpoint +
                    " is reachable from other machines, and KV events carry every prompt's "
                    "token ids unauthenticated: add --kv-events-curve-secret FILE to encrypt "
                    "them, or --kv-events-allow-remote to publish them in the clear");
}

Status make_curve_server(void* socket, const std::string& secret_key) {
  const int on = 1;
  if (Status s = socket_option(socket, ZMQ_CURVE_SERVER, &on, sizeof on, "server"); !s.ok())
    return s;
  return socket_option(socket, ZMQ_CURVE_SECRETKEY, secret_key.data(), secret_key.size(),
                       "secret key");
}

Status make_curve_client(void* socket, const std::string& server_public_key) {
  auto mine = generate_curve_keypair();
  if (!mine.ok()) return mine.status();
  if (Status s = socket_option(socket, ZMQ_CURVE_SERVERKEY, server_public_key.data(),
                               server_public_key.size(), "server key");
      !s.ok())
    return s;
  if (Status s = socket_option(socket, ZMQ_CURVE_PUBLICKEY, mine->public_key.data(),
                               mine->public_key.size(), "public key");
      !s.ok())
    return s;
  return socket_option(socket, ZMQ_CURVE_SECRETKEY, mine->secret_key.data(),
                       mine->secret_key.size(), "secret key");
}

}  // namespace rc::kv_events
