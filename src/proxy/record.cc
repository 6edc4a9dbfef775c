#include "zeus/proxy/record.h"

#include <fmt/format.h>

#include "util/text.h"

namespace zeus::proxy {

namespace {
std::string number(double v) { return fmt::format("{:.6g}", v); }
}  // namespace

std::optional<double> RequestRecord::joules_per_output_token() const {
  if (!output_tokens || *output_tokens <= 0) return std::nullopt;
  return energy.value() / static_cast<double>(*output_tokens);
}

nlohmann::ordered_json RequestRecord::to_json() const {
  nlohmann::ordered_json j;
  j["request_id"] = request_id;
  j["start_time"] = start_unix;
  j["endpoint"] = endpoint;
  j["model"] = model;
  j["stream"] = stream;
  j["status"] = status;
  j["cancelled"] = cancelled;
  j["prompt_tokens"] = prompt_tokens ? nlohmann::ordered_json(*prompt_tokens) : nullptr;
  j["output_tokens"] = output_tokens ? nlohmann::ordered_json(*output_tokens) : nullptr;
  j["ttft_s"] = ttft ? nlohmann::ordered_json(ttft->count()) : nullptr;
  j["duration_s"] = duration.count();
  j["energy_j"] = energy.value();
  const auto jpt = joules_per_output_token();
  j["energy_per_output_token_j"] = jpt ? nlohmann::ordered_json(*jpt) : nullptr;
  return j;
}

std::string format_summary(const ProxySummary& s) {
  std::string out = fmt::format(
      "zeus proxy: {} requests ({} cancelled, {} failed), {} output tokens in {:.1f} s\n"
      "  measured {:.1f} J = requests {:.1f} J + idle {:.1f} J\n",
      s.requests, s.cancelled, s.failed, s.output_tokens, s.elapsed.count(), s.measured.value(),
      s.requests_energy.value(), s.idle.value());
  for (const auto& [model, t] : s.models) {
    const double per_request = t.requests ? t.energy.value() / static_cast<double>(t.requests) : 0;
    // The client chose the name: escaped, so it cannot forge lines or send
    // terminal escapes to whoever reads the summary.
    out +=
        fmt::format("  {}: {} requests, {:.3f} J/request",
                    model.empty() ? "(no model)" : printable(model, 200), t.requests, per_request);
    if (t.output_tokens > 0) {
      out += fmt::format(", {:.4f} J/output token",
                         t.energy.value() / static_cast<double>(t.output_tokens));
    }
    out += '\n';
  }
  return out;
}

std::string render_metrics(const ProxySummary& s, std::size_t active,
                           std::optional<Watts> gpu_power) {
  std::string out;
  const auto head = [&](std::string_view name, std::string_view type, std::string_view help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  const auto line = [&](std::string_view name, std::string_view labels, double v) {
    if (labels.empty()) {
      out += fmt::format("{} {}\n", name, number(v));
    } else {
      out += fmt::format("{}{{{}}} {}\n", name, labels, number(v));
    }
  };
  const auto model_label = [](const std::string& m) {
    std::string escaped;
    for (char c : m) {
      if (c == '\\' || c == '"') escaped.push_back('\\');
      if (c == '\n') {
        escaped += "\\n";
        continue;
      }
      escaped.push_back(c);
    }
    return fmt::format("model=\"{}\"", escaped);
  };
  head("zeus_proxy_requests_total", "counter", "Completions forwarded, by model.");
  for (const auto& [m, t] : s.models) line("zeus_proxy_requests_total", model_label(m), t.requests);
  head("zeus_proxy_request_energy_joules_total", "counter",
       "GPU energy attributed to completions, by model.");
  for (const auto& [m, t] : s.models) {
    line("zeus_proxy_request_energy_joules_total", model_label(m), t.energy.value());
  }
  head("zeus_proxy_output_tokens_total", "counter", "Output tokens of completions, by model.");
  for (const auto& [m, t] : s.models) {
    line("zeus_proxy_output_tokens_total", model_label(m), t.output_tokens);
  }
  head("zeus_proxy_prompt_tokens_total", "counter", "Prompt tokens of completions, by model.");
  for (const auto& [m, t] : s.models) {
    line("zeus_proxy_prompt_tokens_total", model_label(m), t.prompt_tokens);
  }
  head("zeus_proxy_energy_per_request_joules", "gauge",
       "Mean GPU energy of a completion since the proxy started, by model.");
  for (const auto& [m, t] : s.models) {
    if (t.requests > 0) {
      line("zeus_proxy_energy_per_request_joules", model_label(m),
           t.energy.value() / static_cast<double>(t.requests));
    }
  }
  head("zeus_proxy_energy_per_output_token_joules", "gauge",
       "GPU energy per output token since the proxy started, by model.");
  for (const auto& [m, t] : s.models) {
    if (t.output_tokens > 0) {
      line("zeus_proxy_energy_per_output_token_joules", model_label(m),
           t.energy.value() / static_cast<double>(t.output_tokens));
    }
  }
  head("zeus_proxy_idle_energy_joules_total", "counter",
       "GPU energy of slices with no request in flight (not attributed).");
  line("zeus_proxy_idle_energy_joules_total", "", s.idle.value());
  head("zeus_proxy_measured_energy_joules_total", "counter",
       "GPU energy measured since the proxy started (attributed + idle).");
  line("zeus_proxy_measured_energy_joules_total", "", s.measured.value());
  head("zeus_proxy_active_requests", "gauge", "Completions in flight.");
  line("zeus_proxy_active_requests", "", static_cast<double>(active));
  head("zeus_proxy_gpu_power_watts", "gauge", "Instant power of the measured GPUs together.");
  if (gpu_power) line("zeus_proxy_gpu_power_watts", "", gpu_power->value());
  return out;
}

}  // namespace zeus::proxy
