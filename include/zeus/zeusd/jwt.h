// zeusd's bearer tokens: JSON Web Tokens signed with HMAC-SHA256 (HS256),
// wire-compatible with the upstream daemon (`zeusd token issue`): header
// {"typ":"JWT","alg":"HS256"}, claims {"sub", "scopes", "exp"?}. The signing
// key is the raw bytes of the key file. Verification accepts only HS256 (so
// "alg":"none" and algorithm confusion are refused), compares signatures in
// constant time, requires `sub` and `scopes`, and checks `exp` when present
// with the upstream library's 60 s leeway. HMAC comes from OpenSSL's libcrypto.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/util/error.h"
#include "zeus/zeusd/api_group.h"

namespace zeus::zeusd {

struct TokenClaims {
  std::string sub;
  std::vector<ApiGroup> scopes;
  std::optional<std::int64_t> exp;  // Unix seconds; nullopt: never expires

  bool has_scope(ApiGroup group) const;
};

// Why a token was refused. expired() separates "renew your token" from
// "this is not a token we signed".
class TokenError : public Error {
 public:
  TokenError(bool expired, const std::string& message)
      : Error(ErrorCode::kNoPermission, message), expired_(expired) {}
  bool expired() const { return expired_; }

 private:
  bool expired_;
};

inline constexpr std::int64_t kTokenExpiryLeewaySeconds = 60;

// Signs `claims` with `key` (kInvalidArgument for an empty key).
std::string issue_token(std::string_view key, const TokenClaims& claims);

// Checks the signature, algorithm and claims of `token` at Unix time `now`.
// Throws TokenError saying what is wrong; never echoes the token.
TokenClaims verify_token(std::string_view key, std::string_view token, std::int64_t now);

// The shortest signing key accepted (HMAC-SHA256's block is 64 bytes; 32
// random bytes, base64-encoded, are 44).
inline constexpr std::size_t kMinSigningKeyBytes = 32;

// Reads a signing key file: its raw bytes, at most 4 KiB. kInvalidArgument,
// naming the command that fixes it, when the file is readable or writable by
// its group or others, empty, or shorter than kMinSigningKeyBytes (trailing
// whitespace not counted).
std::string read_signing_key(const std::string& path);

// "--expires" values: "never" or "0" (nullopt), or a duration such as "1h",
// "7d", "30d", "90m", "1h 30m", "2w" added to `now`. kInvalidArgument otherwise.
std::optional<std::int64_t> expiry_from_duration(std::string_view text, std::int64_t now);

// base64url without padding (RFC 7515 §2). decode returns nullopt for text
// that is not canonical base64url.
std::string base64url_encode(std::string_view bytes);
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace zeus::zeusd
