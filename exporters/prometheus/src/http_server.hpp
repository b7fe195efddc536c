// SPDX-License-Identifier: Apache-2.0
// http_server.hpp - the exporter's HTTP server: one thread, non-blocking sockets, poll().
//
// Why not civetweb (prometheus-cpp's Exposer): civetweb serves each connection on one
// thread of a fixed pool, from the first byte of a request to the end of the kept-alive
// idle time after the response. A client that stalls or keeps its connection alive holds
// a thread, so a small pool is locked out by a few such clients (130 keep-alive clients
// held all of 128 threads), and a large one costs a thread per client (129 threads,
// 1 GB of virtual memory). Here a connection holds no thread, only a slot: a stalled
// client costs a file descriptor and a small buffer, every deadline is checked on every
// turn of the loop, and when every slot is taken the least recently active connection
// that is not receiving a response gives its slot to the newcomer. A scrape therefore
// waits only for the requests that arrived in the same turn of the loop, each served in
// about a millisecond.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <thread>

namespace lantern::exporters::detail {

struct HttpRequest {
  std::string method;  // "GET", "HEAD"
  std::string path;    // without the query string
  std::string accept;  // the Accept header ("" when absent)
};

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

struct HttpServerOptions {
  std::chrono::milliseconds request_timeout{1000};     // header complete within this of its first byte or the connect
  std::chrono::milliseconds keep_alive_timeout{5000};  // idle between requests (0: close after each response)
  std::size_t max_connections = 128;                   // open at once; a newcomer takes the stalest one's slot
  unsigned max_requests_per_connection = 1000;         // the last one's response says "Connection: close"
  std::chrono::milliseconds send_timeout{10000};       // a response must make progress within this
};

class HttpServer {
 public:
  using Handler = std::function<HttpReply(const HttpRequest&)>;
  // HttpServer serves `listen_fd` (bound, listening, non-blocking; the server owns it)
  // on a thread named `thread_name`, started with the application's signals blocked.
  HttpServer(int listen_fd, HttpServerOptions options, Handler handler, const char* thread_name);
  // ~HttpServer stops the thread (a request being served completes first) and closes
  // every connection.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

 private:
  void run() noexcept;

  int listen_fd_;
  int wake_fd_;  // an eventfd: the destructor's stop request
  HttpServerOptions options_;
  Handler handler_;
  std::thread thread_;
};

}  // namespace lantern::exporters::detail
