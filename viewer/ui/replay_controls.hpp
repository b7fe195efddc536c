// SPDX-License-Identifier: Apache-2.0
// replay_controls.hpp - moving through time: play, pause, speed and a seek bar for a
// trace file; follow-latest and freeze for a live stream.
//
// Both work through ViewState alone (the window and the playhead `limit`), which is why
// every view behaves the same in replay and live: a frozen live view is a paused replay.
#pragma once

#include <imgui.h>

#include "lantern/viewer/model.hpp"
#include "view_state.hpp"

namespace lantern::viewer {

class ReplayControls {
 public:
  // advance moves the playhead (playing) or the window (following); once per frame,
  // before the views draw.
  void advance(const Model& model, ViewState& view, bool live, double seconds);
  // draw: the controls, on one line.
  void draw(const Model& model, ViewState& view, bool live);

  bool playing() const noexcept { return playing_; }
  // reconnect_requested: the user asked to connect again (live, disconnected); reading clears it.
  bool take_reconnect() noexcept {
    const bool r = reconnect_;
    reconnect_ = false;
    return r;
  }
  // toggle_play: the Space key and the button.
  void toggle_play(const Model& model, ViewState& view);

 private:
  void draw_replay(const Model& model, ViewState& view);
  void draw_live(const Model& model, ViewState& view);

  bool playing_ = false;
  int speed_index_ = 4;  // into kSpeeds: 1x
  double live_width_ns_ = 1e9;
  bool reconnect_ = false;
};

}  // namespace lantern::viewer
