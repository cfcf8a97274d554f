#include "suite/backend_list.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"

namespace cnn {
namespace {

std::string padded(const std::string& name) { return name + std::string(std::max<int>(1, 23 - int(name.size())), ' '); }

std::string list_text(const std::vector<RegistryEntry>& registry) {
  std::string s = "backend:variant        built  runnable here\n";
  for (const auto& entry : registry) {
    if (!entry.make) {
      s += padded(entry.name) + "no     no: " + entry.not_built_reason + "\n";
      continue;
    }
    const auto b = entry.make();
    const Availability a = b->availability();
    for (const auto& v : b->variants())
      s += padded(entry.name + ":" + v.name) + "yes    " + (a.runnable ? "yes (" + a.device + ")" : "no: " + a.reason) +
           "\n       " + v.description + "\n";
  }
  return s;
}

nlohmann::ordered_json backend_json(const RegistryEntry& entry) {
  nlohmann::ordered_json j = {{"name", entry.name}, {"kind", entry.kind}, {"built", bool(entry.make)}};
  if (!entry.make) {
    j["runnable"] = false;
    j["reason"] = entry.not_built_reason;
    j["variants"] = nlohmann::ordered_json::array();
    return j;
  }
  const auto b = entry.make();
  const Availability a = b->availability();
  j["runnable"] = a.runnable;
  j[a.runnable ? "device" : "reason"] = a.runnable ? a.device : a.reason;
  j["variants"] = nlohmann::ordered_json::array();
  for (const auto& v : b->variants())
    j["variants"].push_back({{"name", v.name}, {"description", v.description}, {"layerwise", v.layerwise}});
  return j;
}

}  // namespace

std::string backend_list(const std::vector<RegistryEntry>& registry, Format format) {
  if (format == Format::table) return list_text(registry);
  if (format != Format::json) throw UsageError("--list: the list is written as --format table or json");
  nlohmann::ordered_json backends = nlohmann::ordered_json::array();
  for (const auto& entry : registry) backends.push_back(backend_json(entry));
  const nlohmann::ordered_json doc = {{"backends", backends}};
  return doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace cnn
