// SPDX-License-Identifier: Apache-2.0
// exposition.cpp - the text format through prometheus-cpp; OpenMetrics written here.
#include "exposition.hpp"

#include <prometheus/text_serializer.h>

#include <charconv>
#include <cmath>

namespace lantern::exporters::detail {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// number: the shortest text that reads back as `v` (Go's ParseFloat, which Prometheus
// uses, reads every form to_chars writes), and +Inf, -Inf, NaN as OpenMetrics spells them.
void number(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    char buffer[32];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
    out.append(buffer, end);
  }
}

// escaped: a label value or HELP text; OpenMetrics escapes backslash, quote and newline.
void escaped(std::string& out, std::string_view text) {
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

using Labels = std::vector<prometheus::ClientMetric::Label>;

// sample: `name{labels,extra} value`.
void sample(std::string& out, std::string_view name, const Labels& labels, double value,
            const prometheus::ClientMetric::Label* extra = nullptr) {
  out += name;
  if (!labels.empty() || extra) {
    out += '{';
    bool first = true;
    auto label = [&](const prometheus::ClientMetric::Label& l) {
      if (!first) out += ',';
      first = false;
      out += l.name;
      out += "=\"";
      escaped(out, l.value);
      out += '"';
    };
    for (const auto& l : labels) label(l);
    if (extra) label(*extra);
    out += '}';
  }
  out += ' ';
  number(out, value);
  out += '\n';
}

std::string open_metrics(const std::vector<prometheus::MetricFamily>& families) {
  std::string out;
  out.reserve(4096 + families.size() * 512);
  for (const prometheus::MetricFamily& f : families) {
    const bool counter = f.type == prometheus::MetricType::Counter;
    std::string_view base = f.name;
    if (counter && ends_with(base, "_total")) base.remove_suffix(6);
    const char* type = "unknown";
    switch (f.type) {
      case prometheus::MetricType::Counter: type = "counter"; break;
      case prometheus::MetricType::Gauge: type = "gauge"; break;
      case prometheus::MetricType::Histogram: type = "histogram"; break;
      case prometheus::MetricType::Summary: type = "summary"; break;
      default: break;
    }
    out += "# TYPE ";
    out += base;
    out += ' ';
    out += type;
    out += '\n';
    for (const auto& [suffix, unit] : {std::pair{"_seconds", "seconds"}, std::pair{"_bytes", "bytes"}}) {
      if (ends_with(base, suffix)) {
        out += "# UNIT ";
        out += base;
        out += ' ';
        out += unit;
        out += '\n';
      }
    }
    if (!f.help.empty()) {
      out += "# HELP ";
      out += base;
      out += ' ';
      escaped(out, f.help);
      out += '\n';
    }
    const std::string name(base);
    for (const prometheus::ClientMetric& m : f.metric) {
      switch (f.type) {
        case prometheus::MetricType::Counter: sample(out, name + "_total", m.label, m.counter.value); break;
        case prometheus::MetricType::Gauge: sample(out, name, m.label, m.gauge.value); break;
        case prometheus::MetricType::Histogram: {
          bool has_inf = false;
          for (const auto& b : m.histogram.bucket) {
            std::string le;
            number(le, b.upper_bound);
            has_inf = has_inf || std::isinf(b.upper_bound);
            const prometheus::ClientMetric::Label label{"le", le};
            sample(out, name + "_bucket", m.label, static_cast<double>(b.cumulative_count), &label);
          }
          if (!has_inf) {
            const prometheus::ClientMetric::Label label{"le", "+Inf"};
            sample(out, name + "_bucket", m.label, static_cast<double>(m.histogram.sample_count), &label);
          }
          sample(out, name + "_count", m.label, static_cast<double>(m.histogram.sample_count));
          sample(out, name + "_sum", m.label, m.histogram.sample_sum);
          break;
        }
        case prometheus::MetricType::Summary:
          for (const auto& q : m.summary.quantile) {
            std::string quantile;
            number(quantile, q.quantile);
            const prometheus::ClientMetric::Label label{"quantile", quantile};
            sample(out, name, m.label, q.value, &label);
          }
          sample(out, name + "_count", m.label, static_cast<double>(m.summary.sample_count));
          sample(out, name + "_sum", m.label, m.summary.sample_sum);
          break;
        default: sample(out, name, m.label, m.untyped.value); break;
      }
    }
  }
  out += "# EOF\n";
  return out;
}

}  // namespace

Exposition negotiate(std::string_view accept) noexcept {
  return accept.find("application/openmetrics-text") != std::string_view::npos ? Exposition::open_metrics
                                                                               : Exposition::text;
}

std::string_view content_type(Exposition format) noexcept {
  return format == Exposition::open_metrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                            : "text/plain; version=0.0.4; charset=utf-8";
}

std::string serialize(const std::vector<prometheus::MetricFamily>& families, Exposition format) {
  if (format == Exposition::open_metrics) return open_metrics(families);
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace lantern::exporters::detail
