#include "core/logging.h"

#include <mutex>
#include <vector>

#include <spdlog/sinks/stdout_sinks.h>

#include "core/line_file_sink.h"

namespace longhaul {
namespace {

std::mutex g_mu;
std::vector<spdlog::sink_ptr> g_sinks;
spdlog::level::level_enum g_level = spdlog::level::info;

}  // namespace

void SetupLogging(std::string_view level, const std::string& file) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_sinks.clear();
  g_sinks.push_back(std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (!file.empty()) {
    // Whole lines only, also on a full disk (line_file_sink.h).
    g_sinks.push_back(std::make_shared<LineFileSink>(file));
  }
  g_level = spdlog::level::from_str(std::string(level));
  if (g_level == spdlog::level::off && level != "off") g_level = spdlog::level::info;
  auto def = std::make_shared<spdlog::logger>("longhaul", g_sinks.begin(), g_sinks.end());
  def->set_level(g_level);
  def->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%L%$ [%n] %v");
  spdlog::set_default_logger(def);
  spdlog::flush_every(std::chrono::seconds(1));
}

std::shared_ptr<spdlog::logger> GetLogger(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (auto existing = spdlog::get(name)) return existing;
  std::shared_ptr<spdlog::logger> logger;
  if (g_sinks.empty()) {
    logger = std::make_shared<spdlog::logger>(
        name, std::make_shared<spdlog::sinks::stderr_sink_mt>());
  } else {
    logger = std::make_shared<spdlog::logger>(name, g_sinks.begin(), g_sinks.end());
  }
  logger->set_level(g_level);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%L%$ [%n] %v");
  spdlog::register_logger(logger);
  return logger;
}

}  // namespace longhaul
