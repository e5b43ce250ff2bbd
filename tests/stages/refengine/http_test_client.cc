#include "tests/stages/refengine/http_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <sstream>

#include "core/strings.h"

namespace longhaul::refengine::testing {
namespace {

std::string Dechunk(const std::string& body) {
  std::string out;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t eol = body.find("\r\n", pos);
    if (eol == std::string::npos) break;
    size_t n = std::stoul(body.substr(pos, eol - pos), nullptr, 16);
    if (n == 0) break;
    out += body.substr(eol + 2, n);
    pos = eol + 2 + n + 2;
  }
  return out;
}

HttpResult Request(int port, const std::string& method, const std::string& path,
                   const std::string& body, int timeout_ms) {
  HttpResult r;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return r;
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return r;
  }
  std::string req =
      StrCat(method, " ", path, " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
  if (!body.empty() || method == "POST") {
    req += StrCat("Content-Type: application/json\r\nContent-Length: ", body.size(), "\r\n");
  }
  req += "\r\n" + body;
  ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string raw;
  char buf[65536];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n > 0) {
      raw.append(buf, n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) r.timed_out = true;
    break;
  }
  ::close(fd);
  size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return r;
  std::istringstream head(raw.substr(0, head_end));
  std::string line;
  std::getline(head, line);
  if (line.size() > 12) r.status = std::stoi(line.substr(9, 3));
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r.headers[name] = std::string(StripWhitespace(line.substr(colon + 1)));
  }
  r.body = raw.substr(head_end + 4);
  if (r.headers["transfer-encoding"] == "chunked") r.body = Dechunk(r.body);
  return r;
}

}  // namespace

HttpResult HttpGet(int port, const std::string& path, int timeout_ms) {
  return Request(port, "GET", path, "", timeout_ms);
}

HttpResult HttpPost(int port, const std::string& path, const std::string& body, int timeout_ms) {
  return Request(port, "POST", path, body, timeout_ms);
}

HttpResult PostJson(int port, const std::string& path, const nlohmann::json& body, int timeout_ms) {
  return HttpPost(port, path, body.dump(), timeout_ms);
}

std::vector<nlohmann::json> SseEvents(const std::string& body, bool* done) {
  std::vector<nlohmann::json> out;
  *done = false;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) end = body.size();
    std::string event = body.substr(pos, end - pos);
    pos = end + 2;
    if (!StartsWith(event, "data: ")) continue;
    std::string data = event.substr(6);
    if (data == "[DONE]") {
      *done = true;
      continue;
    }
    out.push_back(nlohmann::json::parse(data));
  }
  return out;
}

double MetricValue(const std::string& text, const std::string& name,
                   const std::string& label_filter) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t space = line.rfind(' ');
    std::string key = line.substr(0, space);
    std::string metric = key.substr(0, key.find('{'));
    if (metric != name) continue;
    if (!label_filter.empty() && key.find(label_filter) == std::string::npos) continue;
    return std::stod(line.substr(space + 1));
  }
  return -1;
}

}  // namespace longhaul::refengine::testing
