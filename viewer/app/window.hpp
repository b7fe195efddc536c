// SPDX-License-Identifier: Apache-2.0
// window.hpp - lantern-view's window: GLFW, OpenGL 3, the ImGui backends, and the
// headless picture (render, read the framebuffer back, write a PNG).
#pragma once

#include <functional>
#include <string>

struct GLFWwindow;

namespace lantern::viewer {

class Window {
 public:
  ~Window();
  // open creates the window and the ImGui context. On failure returns false and sets
  // *error to a sentence saying what to do (e.g. run under xvfb-run).
  bool open(int width, int height, const std::string& title, std::string* error);
  // run calls frame(seconds since the last frame) between ImGui::NewFrame and Render
  // until the window is closed or frame returns false. `busy` says whether to keep
  // redrawing at 60 Hz (live data, playback, loading) or wait for input.
  void run(const std::function<bool(double)>& frame, const std::function<bool()>& busy);
  // screenshot renders `frames` frames with the mouse outside the window (no hover
  // effects), then writes the last one to `png`. False and *error on failure.
  bool screenshot(const std::function<void(double)>& frame, int frames, const std::string& png, std::string* error);
  // paced_frame renders one frame without the mouse and shows it, after waiting up to
  // 1/60 s for window events (the interactive loop's pace while something loads).
  void paced_frame(const std::function<void(double)>& frame);
  void set_title(const std::string& title);

 private:
  void begin_frame(bool mouse);
  void end_frame(bool swap);

  GLFWwindow* window_ = nullptr;
  bool imgui_ready_ = false;
};

}  // namespace lantern::viewer
