// SPDX-License-Identifier: Apache-2.0
// window.cpp - GLFW + OpenGL 3 + Dear ImGui, and framebuffer read-back for --screenshot.
#include "window.hpp"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <stb_image_write.h>
#include <unistd.h>

#include <cfloat>
#include <chrono>
#include <cstdlib>
#include <vector>

namespace lantern::viewer {
namespace {

std::string glfw_error;

void remember_error(int, const char* text) { glfw_error = text ? text : "unknown GLFW error"; }

// style: ImGui's dark theme, flatter and a little roomier, with a readable font.
void style() {
  ImGui::StyleColorsDark();
  ImGuiStyle& s = ImGui::GetStyle();
  s.WindowRounding = 0;
  s.FrameRounding = 3;
  s.TabRounding = 3;
  s.ScrollbarRounding = 3;
  s.FramePadding = ImVec2(6, 3);
  s.ItemSpacing = ImVec2(8, 5);
  s.Colors[ImGuiCol_WindowBg] = ImVec4(0.09f, 0.10f, 0.12f, 1.0f);
  s.Colors[ImGuiCol_ChildBg] = ImVec4(0.09f, 0.10f, 0.12f, 1.0f);
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is fixed; nothing worth a file in the cwd
  // DejaVu Sans ships with Debian (fonts-dejavu-core); without it, ImGui's built-in font.
  for (const char* path : {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/TTF/DejaVuSans.ttf"}) {
    if (access(path, R_OK) == 0 && io.Fonts->AddFontFromFileTTF(path, 15.0f)) return;
  }
  io.Fonts->AddFontDefault();
}

}  // namespace

Window::~Window() {
  if (imgui_ready_) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
  }
  if (window_) glfwDestroyWindow(window_);
  glfwTerminate();
}

bool Window::open(int width, int height, const std::string& title, std::string* error) {
  glfwSetErrorCallback(remember_error);
  if (!glfwInit()) {
    const char* display = std::getenv("DISPLAY");
    *error = "cannot open a window: " + glfw_error +
             (display && *display ? " (DISPLAY=" + std::string(display) + ")"
                                  : " (DISPLAY is not set). For pictures without a screen run under Xvfb: "
                                    "xvfb-run -a lantern-view --screenshot out.png TRACE");
    return false;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  window_ = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr);
  if (!window_) {
    *error = "cannot create an OpenGL 3.3 window: " + glfw_error +
             " (a software GL such as Mesa's llvmpipe is enough: apt-get install libgl1-mesa-dri)";
    return false;
  }
  glfwMakeContextCurrent(window_);
  glfwSwapInterval(1);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  style();
  ImGui_ImplGlfw_InitForOpenGL(window_, true);
  ImGui_ImplOpenGL3_Init("#version 330");
  imgui_ready_ = true;
  return true;
}

void Window::set_title(const std::string& title) { glfwSetWindowTitle(window_, title.c_str()); }

void Window::begin_frame(bool mouse) {
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  // A picture has no hover effects or tooltips: the mouse is nowhere.
  if (!mouse) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  ImGui::NewFrame();
}

void Window::end_frame(bool swap) {
  ImGui::Render();
  int w = 0, h = 0;
  glfwGetFramebufferSize(window_, &w, &h);
  glViewport(0, 0, w, h);
  glClearColor(0.09f, 0.10f, 0.12f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  if (swap) glfwSwapBuffers(window_);
}

void Window::run(const std::function<bool(double)>& frame, const std::function<bool()>& busy) {
  auto last = std::chrono::steady_clock::now();
  while (!glfwWindowShouldClose(window_)) {
    // Redraw at 60 Hz while something moves; otherwise sleep until input (or 4 Hz, so a
    // status change such as "disconnected" still shows).
    if (busy()) {
      glfwWaitEventsTimeout(1.0 / 60.0);
    } else {
      glfwWaitEventsTimeout(0.25);
    }
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last).count();
    last = now;
    begin_frame(true);
    const bool keep = frame(seconds);
    end_frame(true);
    if (!keep) break;
  }
}

void Window::paced_frame(const std::function<void(double)>& frame) {
  glfwWaitEventsTimeout(1.0 / 60.0);
  begin_frame(false);
  frame(1.0 / 60.0);
  end_frame(true);
}

bool Window::screenshot(const std::function<void(double)>& frame, int frames, const std::string& png,
                        std::string* error) {
  int w = 0, h = 0;
  for (int i = 0; i < frames; ++i) {
    begin_frame(false);
    frame(i == 0 ? 0.0 : 1.0 / 60.0);
    const bool last = i + 1 == frames;
    end_frame(!last);
    if (last) {
      glfwGetFramebufferSize(window_, &w, &h);
      std::vector<unsigned char> pixels(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4);
      glReadBuffer(GL_BACK);
      glPixelStorei(GL_PACK_ALIGNMENT, 1);
      glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
      // Opaque PNG: the framebuffer's alpha is whatever blending left there.
      for (std::size_t p = 3; p < pixels.size(); p += 4) pixels[p] = 255;
      stbi_flip_vertically_on_write(1);  // GL's rows start at the bottom
      if (!stbi_write_png(png.c_str(), w, h, 4, pixels.data(), w * 4)) {
        *error = "cannot write the picture to '" + png + "' (check the directory exists and is writable)";
        return false;
      }
    }
  }
  return true;
}

}  // namespace lantern::viewer
