// SPDX-License-Identifier: Apache-2.0
// process_labels.cpp - core's label table seen through the trace format's interface.
#include "lantern/instrumentation/process_labels.hpp"

#include "lantern/label.hpp"

namespace lantern::instrumentation {
namespace {

class ProcessLabels final : public trace::LabelNames {
 public:
  std::optional<std::string_view> name(std::uint32_t id) const override {
    const std::string_view n = lantern::label_name(id);  // valid forever: names are never freed
    if (n.empty()) return std::nullopt;
    return n;
  }
};

static_assert(lantern::kMaxLabelNameBytes == trace::kMaxLabelNameBytes,
              "core's label names must fit the trace format's label table");

}  // namespace

const trace::LabelNames& process_labels() noexcept {
  static const ProcessLabels labels;  // stateless: safe to use during static destruction
  return labels;
}

}  // namespace lantern::instrumentation
