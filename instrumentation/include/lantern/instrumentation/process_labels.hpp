// SPDX-License-Identifier: Apache-2.0
// process_labels.hpp - the names of this process's task labels, for the trace writers.
//
// The trace format is a leaf and knows nothing of core, so its writers take label names
// through trace::LabelNames. process_labels() is that interface over core's label table
// (lantern::label_name): lock-free, and valid for the whole process, so every sink that
// encodes chunks (TraceFileSink, FlightRecorder, StreamServer) names the labels its
// chunks use.
#pragma once

#include "lantern/trace/label_names.hpp"

namespace lantern::instrumentation {

// process_labels: names from lantern::label_name; nullopt for ids not (yet) interned.
const trace::LabelNames& process_labels() noexcept;

}  // namespace lantern::instrumentation
