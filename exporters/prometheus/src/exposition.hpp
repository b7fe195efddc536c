// SPDX-License-Identifier: Apache-2.0
// exposition.hpp - metric families as text: Prometheus's text format (0.0.4) or
// OpenMetrics 1.0, whichever the scraper's Accept header prefers.
//
// The text format is prometheus-cpp's TextSerializer. prometheus-cpp 1.0 (Debian 12) has
// no OpenMetrics serializer, so open_metrics() writes it here, from the same
// MetricFamily values: a counter's family is named without `_total` and its sample with
// it, a family whose name ends in `_seconds` or `_bytes` gets a `# UNIT` line, and the
// exposition ends with `# EOF`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <prometheus/metric_family.h>

namespace lantern::exporters::detail {

enum class Exposition { text, open_metrics };

// negotiate: OpenMetrics when the Accept header names application/openmetrics-text
// (Prometheus asks for it first), else the text format.
Exposition negotiate(std::string_view accept) noexcept;
// content_type: the Content-Type of a response in `format`.
std::string_view content_type(Exposition format) noexcept;
// serialize: `families` in `format`.
std::string serialize(const std::vector<prometheus::MetricFamily>& families, Exposition format);

}  // namespace lantern::exporters::detail
