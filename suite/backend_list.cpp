#include "suite/backend_list.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"

namespace cnn {
namespace {

std::string list_text(const std::vector<RegistryEntry>& registry) {
  struct Row {
    std::string name, text;  // text: what follows the name column
  };
  std::vector<Row> rows;
  for (const auto& entry : registry) {
    if (!entry.make) {
      rows.push_back({entry.name, "no     no: " + entry.not_built_reason + "\n"});
      continue;
    }
    const auto b = entry.make();
    const Availability a = b->availability();
    for (const auto& v : b->variants())
      rows.push_back({entry.name + ":" + v.name, "yes    " + (a.runnable ? "yes (" + a.device + ")" : "no: " + a.reason) +
                                                     "\n       " + v.description + "\n"});
  }
  // The name column as wide as the longest name (at least the header's), one space after it.
  std::size_t width = std::string("backend:variant       ").size();
  for (const Row& r : rows) width = std::max(width, r.name.size());
  const auto padded = [&](const std::string& name) { return name + std::string(width + 1 - name.size(), ' '); };
  std::string s = padded("backend:variant") + "built  runnable here\n";
  for (const Row& r : rows) s += padded(r.name) + r.text;
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
