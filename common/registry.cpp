#include "common/registry.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include "common/variant_table.hpp"

namespace cnn {
namespace {

struct Registered {
  Availability (*availability)() = nullptr;
  std::vector<std::tuple<int, VariantInfo, OpenSession>> variants;
};

// Constructed on first use: registrations run during static initialisation, in any order.
std::map<std::string, Registered>& registrations() {
  static std::map<std::string, Registered> all;
  return all;
}

}  // namespace

BackendRegistration::BackendRegistration(std::string backend, Availability (*availability)()) {
  registrations()[std::move(backend)].availability = availability;
}

VariantRegistration::VariantRegistration(std::string backend, int order, OpenSession open, VariantInfo info) {
  registrations()[std::move(backend)].variants.emplace_back(order, std::move(info), open);
}

std::unique_ptr<Backend> make_registered_backend(const std::string& name) {
  const auto found = registrations().find(name);
  if (found == registrations().end()) throw std::logic_error("backend '" + name + "' registered nothing");
  Registered r = found->second;
  if (!r.availability) throw std::logic_error("backend '" + name + "' has variants but no BackendRegistration");
  std::stable_sort(r.variants.begin(), r.variants.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  std::vector<VariantEntry> entries;
  for (const auto& [order, info, open] : r.variants) {
    for (const auto& e : entries)
      if (e.info.name == info.name)
        throw std::logic_error("backend '" + name + "' registers variant '" + info.name + "' twice");
    entries.push_back({info, open});
  }
  return std::make_unique<VariantTable>(name, r.availability, std::move(entries));
}

std::vector<std::string> registered_backend_names() {
  std::vector<std::string> names;
  for (const auto& [name, r] : registrations()) names.push_back(name);
  return names;  // std::map keeps them sorted
}

std::vector<RegistryEntry> registry_entries(const std::vector<ConfiguredBackend>& configured) {
  std::vector<RegistryEntry> out;
  const auto maker = [](const std::string& name) { return [name] { return make_registered_backend(name); }; };
  for (const auto& c : configured) {
    if (c.why_not_built.empty())
      out.push_back({c.name, maker(c.name), "", c.kind});
    else
      out.push_back({c.name, nullptr, c.why_not_built, c.kind});
  }
  for (const auto& name : registered_backend_names()) {
    const bool known =
        std::any_of(configured.begin(), configured.end(), [&](const auto& c) { return c.name == name; });
    if (!known) out.push_back({name, maker(name), "", ""});
  }
  return out;
}

}  // namespace cnn
