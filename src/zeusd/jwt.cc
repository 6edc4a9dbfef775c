#include "zeus/zeusd/jwt.h"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>

#include "util/text.h"
#include "zeus/util/files.h"

namespace zeus::zeusd {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr std::size_t kMaxTokenBytes = 8192;

int sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

std::array<unsigned char, 32> hmac_sha256(std::string_view key, std::string_view data) {
  std::array<unsigned char, 32> out{};
  unsigned int len = 0;
  // A zero-length key is refused before we get here; HMAC() takes int lengths.
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(),
           &len) == nullptr ||
      len != out.size()) {
    throw_error(ErrorCode::kInternal, "HMAC-SHA256 failed in libcrypto");
  }
  return out;
}

[[noreturn]] void invalid(const std::string& why) {
  throw TokenError(false, "Invalid token: " + why);
}

nlohmann::json decode_json_part(std::string_view part, const char* what) {
  const auto bytes = base64url_decode(part);
  if (!bytes) invalid(fmt::format("the {} is not base64url", what));
  auto j = nlohmann::json::parse(*bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object()) invalid(fmt::format("the {} is not a JSON object", what));
  return j;
}

}  // namespace

bool TokenClaims::has_scope(ApiGroup group) const {
  return std::find(scopes.begin(), scopes.end(), group) != scopes.end();
}

std::string base64url_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() * 4 + 2) / 3);
  std::size_t i = 0;
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(bytes[k]); };
  for (; i + 3 <= bytes.size(); i += 3) {
    const unsigned v = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 1) {
    const unsigned v = at(i) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
  } else if (rest == 2) {
    const unsigned v = (at(i) << 16) | (at(i + 1) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
  }
  return out;
}

std::optional<std::string> base64url_decode(std::string_view text) {
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() * 3 / 4);
  unsigned acc = 0;
  int bits = 0;
  for (char c : text) {
    const int v = sextet(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  // Canonical only: the unused low bits of the last character must be zero.
  if (bits > 0 && (acc & ((1u << bits) - 1)) != 0) return std::nullopt;
  return out;
}

std::string issue_token(std::string_view key, const TokenClaims& claims) {
  if (key.empty()) throw_error(ErrorCode::kInvalidArgument, "the signing key is empty");
  nlohmann::json payload = {{"sub", claims.sub}, {"scopes", nlohmann::json::array()}};
  for (ApiGroup g : claims.scopes) payload["scopes"].push_back(std::string(api_group_name(g)));
  if (claims.exp) payload["exp"] = *claims.exp;
  const std::string signing_input =
      base64url_encode(R"({"typ":"JWT","alg":"HS256"})") + "." + base64url_encode(payload.dump());
  const auto mac = hmac_sha256(key, signing_input);
  return signing_input + "." +
         base64url_encode(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
}

TokenClaims verify_token(std::string_view key, std::string_view token, std::int64_t now) {
  if (key.empty()) throw_error(ErrorCode::kInternal, "no signing key configured");
  if (token.size() > kMaxTokenBytes) invalid("it is too long");
  const auto dot1 = token.find('.');
  const auto dot2 = dot1 == token.npos ? token.npos : token.find('.', dot1 + 1);
  if (dot2 == token.npos || token.find('.', dot2 + 1) != token.npos) {
    invalid("a JWT has three dot-separated parts");
  }
  const auto header = decode_json_part(token.substr(0, dot1), "header");
  const auto alg = header.find("alg");
  if (alg == header.end() || !alg->is_string() || *alg != "HS256") {
    invalid("only HS256 tokens are accepted");
  }
  const auto signature = base64url_decode(token.substr(dot2 + 1));
  if (!signature || signature->size() != 32) invalid("the signature is malformed");
  const auto mac = hmac_sha256(key, token.substr(0, dot2));
  if (CRYPTO_memcmp(mac.data(), signature->data(), mac.size()) != 0) {
    invalid("the signature does not match this server's key");
  }
  // Only a token we signed gets its claims read.
  const auto payload = decode_json_part(token.substr(dot1 + 1, dot2 - dot1 - 1), "payload");
  TokenClaims claims;
  const auto sub = payload.find("sub");
  if (sub == payload.end() || !sub->is_string()) invalid("the 'sub' claim is missing");
  claims.sub = sub->get<std::string>();
  const auto scopes = payload.find("scopes");
  if (scopes == payload.end() || !scopes->is_array()) invalid("the 'scopes' claim is missing");
  for (const auto& s : *scopes) {
    const auto g = s.is_string() ? parse_api_group(s.get<std::string>()) : std::nullopt;
    if (!g) invalid("the 'scopes' claim names an unknown API group");
    claims.scopes.push_back(*g);
  }
  const auto exp = payload.find("exp");
  if (exp != payload.end() && !exp->is_null()) {
    if (!exp->is_number_unsigned() && !exp->is_number_integer()) {
      invalid("the 'exp' claim is not a whole number");
    }
    claims.exp = exp->get<std::int64_t>();
    if (*claims.exp < now - kTokenExpiryLeewaySeconds) {
      throw TokenError(true, "Token has expired.");
    }
  }
  return claims;
}

std::string read_signing_key(const std::string& path) {
  std::string key = read_file(path, 4096);
  // Whoever can read the key mints gpu-control tokens; whoever can write it
  // replaces it. Refused like ssh refuses an open private key.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("signing key file {} has mode {:03o}: its group or other users can "
                            "read or change it, and anyone who reads it can issue tokens; run "
                            "`chmod 600 {}` (owned by the user zeusd runs as)",
                            path, st.st_mode & 0777, path));
  }
  const auto last = key.find_last_not_of(" \t\r\n");
  const std::size_t length = last == std::string::npos ? 0 : last + 1;
  if (length == 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("signing key file {} is empty; create one with "
                            "`openssl rand -base64 32 > {} && chmod 600 {}`",
                            path, path, path));
  }
  if (length < kMinSigningKeyBytes) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("signing key in {} is {} bytes; use at least {} random bytes: "
                            "`openssl rand -base64 32 > {} && chmod 600 {}`",
                            path, length, kMinSigningKeyBytes, path, path));
  }
  return key;
}

std::optional<std::int64_t> expiry_from_duration(std::string_view text, std::int64_t now) {
  std::string s;
  for (char c : text) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  const auto b = s.find_first_not_of(' ');
  const auto e = s.find_last_not_of(' ');
  s = b == std::string::npos ? "" : s.substr(b, e - b + 1);
  if (s == "never" || s == "0") return std::nullopt;
  const auto bad = [&] {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("--expires: invalid duration '{}'. Use e.g. '1h', '7d', '30d', or "
                            "'never'",
                            printable(text)));
  };
  if (s.empty()) bad();
  std::int64_t total = 0;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    std::int64_t n = 0;
    const std::size_t digits = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (n > 1'000'000'000) bad();
      n = n * 10 + (s[i++] - '0');
    }
    if (i == digits) bad();
    const std::size_t unit_start = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    const std::string unit = s.substr(unit_start, i - unit_start);
    std::int64_t scale = 0;
    if (unit == "s" || unit == "sec" || unit == "secs" || unit == "second" || unit == "seconds") {
      scale = 1;
    } else if (unit == "m" || unit == "min" || unit == "mins" || unit == "minute" ||
               unit == "minutes") {
      scale = 60;
    } else if (unit == "h" || unit == "hr" || unit == "hrs" || unit == "hour" || unit == "hours") {
      scale = 3600;
    } else if (unit == "d" || unit == "day" || unit == "days") {
      scale = 86400;
    } else if (unit == "w" || unit == "week" || unit == "weeks") {
      scale = 7 * 86400;
    } else {
      bad();
    }
    total += n * scale;
    if (total > std::int64_t{100} * 365 * 86400) bad();
  }
  return now + total;
}

}  // namespace zeus::zeusd
