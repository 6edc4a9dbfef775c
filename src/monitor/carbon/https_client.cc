// The libcurl build of https_get (https_client_without_curl.cc is the other).
#if !defined(ZEUS_WITHOUT_CURL)
#include "monitor/carbon/https_client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <memory>
#include <mutex>

#include "zeus/util/error.h"

namespace zeus::carbon_internal {
namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Sink {
  std::string body;
  std::size_t max_bytes;
  bool overflow = false;
};

std::size_t on_data(char* data, std::size_t size, std::size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const std::size_t n = size * count;
  if (sink->body.size() + n > sink->max_bytes) {
    sink->overflow = true;
    return 0;  // aborts the transfer
  }
  sink->body.append(data, n);
  return n;
}

// Redacts query parameters that carry keys before a URL goes into a message.
std::string redact(const std::string& url) {
  std::string out = url;
  for (const char* key : {"api_key=", "auth-token=", "token="}) {
    std::size_t pos = 0;
    while ((pos = out.find(key, pos)) != std::string::npos) {
      pos += std::string(key).size();
      const std::size_t end = out.find('&', pos);
      out.replace(pos, end == std::string::npos ? out.size() - pos : end - pos, "***");
    }
  }
  return out;
}

}  // namespace

HttpsResponse https_get(const std::string& url, const std::vector<std::string>& headers,
                        Seconds timeout, std::size_t max_bytes) {
  global_init();
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) throw_error(ErrorCode::kInternal, "libcurl could not create a handle");
  curl_slist* list = nullptr;
  for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> header_list(list, curl_slist_free_all);

  Sink sink{{}, max_bytes};
  char error[CURL_ERROR_SIZE] = {};
  const long timeout_ms = std::max(1L, static_cast<long>(timeout.count() * 1000.0));
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, header_list.get());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // thread-safe timeouts
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 3L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_USERAGENT, "zeus-cpp");
  const CURLcode rc = curl_easy_perform(c);
  const std::string shown = redact(url);
  if (rc != CURLE_OK) {
    const std::string why = error[0] != '\0' ? error : curl_easy_strerror(rc);
    if (sink.overflow) {
      throw_error(ErrorCode::kIo,
                  fmt::format("GET {}: the answer is larger than {} bytes", shown, max_bytes));
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
      throw_error(ErrorCode::kTimeout,
                  fmt::format("GET {}: no answer within {} s ({})", shown, timeout.count(), why));
    }
    if (rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL) {
      throw_error(ErrorCode::kInvalidArgument, fmt::format("GET {}: {}", shown, why));
    }
    throw_error(ErrorCode::kIo,
                fmt::format("GET {}: {}; check the network connection and the provider's address",
                            shown, why));
  }
  HttpsResponse response;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  response.body = std::move(sink.body);
  return response;
}

}  // namespace zeus::carbon_internal

#endif  // !ZEUS_WITHOUT_CURL
