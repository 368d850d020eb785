// Who may read the KV-event stream. The events carry the token ids of every
// cached prompt, which is the prompts' text to anyone with the vocabulary,
// so the stream stays on the machine unless the user says otherwise:
//
//  - Plain ZeroMQ (vLLM's format, no authentication) is for loopback, ipc://
//    and inproc:// endpoints; any other endpoint needs an explicit
//    allow-remote, or CURVE.
//  - CURVE (ZeroMQ's CurveZMQ: Curve25519 handshake, encrypted messages)
//    needs libzmq built with libsodium, as Debian's is. The publisher holds
//    a secret key; a subscriber must be given the publisher's public key,
//    and one given a wrong key (or none) completes no handshake and
//    receives nothing. No client allow-list is kept (no ZAP handler), so
//    the public key is the credential: hand it only to those who may watch.
//
// Key files are text, keys in ZeroMQ's Z85 (40 characters, as
// zmq_curve_keypair and curve_keygen print them):
//   secret file (0600, refused when others can read it):
//     # comment lines
//     public-key = <40 characters>    (optional; must match the secret)
//     secret-key = <40 characters>
//   public file: a "public-key = <40 characters>" line, or the bare key.
// `radixchat-cli kv-events-keygen --out FILE` writes FILE and FILE.pub.
//
// Any thread; failures are values (invalid_argument for bad keys and
// endpoints, not_found for a missing file, unsupported without CURVE).
#pragma once

#include <filesystem>
#include <string>

#include "radixchat/status.h"

namespace rc::kv_events {

struct CurveKeyPair {
  std::string public_key;  // Z85, 40 characters
  std::string secret_key;  // Z85, 40 characters
};

// unsupported when this libzmq was built without CURVE.
Status curve_available();
Result<CurveKeyPair> generate_curve_keypair();

// The secret key file above (also checks its mode) and the public key it
// implies.
Result<CurveKeyPair> read_curve_secret_file(const std::filesystem::path& path);
// `key_or_file`: a 40-character Z85 key, or a file holding one (above).
Result<std::string> read_curve_public_key(const std::string& key_or_file);
// Writes `path` (secret, 0600, must not exist) and `path`.pub (public).
Status write_curve_key_files(const std::filesystem::path& path, const CurveKeyPair& keys);

// True for ipc:// and inproc:// endpoints and tcp:// on a loopback address
// (127.0.0.0/8, ::1, localhost, the "lo" interface). "*", 0.0.0.0, ::, a LAN
// address or an interface name are remote.
bool is_local_endpoint(const std::string& endpoint);

// invalid_argument, with the one line the CLI prints, when `endpoint`
// (named by `flag`) is on a network transport, not local, and neither
// allow_remote nor curve is set. Text that names no ZeroMQ transport passes:
// binding it fails with ZeroMQ's own reason.
Status check_publish_endpoint(const std::string& flag, const std::string& endpoint,
                              bool allow_remote, bool curve);

// Socket setup, before bind/connect; `socket` is a libzmq socket handle.
// The server side takes the secret key; the client side the server's public
// key, and makes itself a throwaway key pair (the server checks none).
Status make_curve_server(void* socket, const std::string& secret_key);
Status make_curve_client(void* socket, const std::string& server_public_key);

}  // namespace rc::kv_events
